// The service's configuration: read once at start-up from the environment and
// returned as parsed values (durations in milliseconds, the trusted proxies
// as networks, each optional integration as one object or null). Nothing else
// in the service reads process.env / Deno.env.
//
// One slice per integration (docs/development.md, "Configuration in slices"): each declares its
// variables once, in a zod schema, and maps them to its part of Config, whose
// type is inferred from that mapping. This file composes them.
import { z } from "zod";
import { databaseConfig, migrationTarget, ZDatabaseEnv } from "./database.ts";
import { httpConfig, ZHttpEnv } from "./http.ts";
import { identityConfig, ZIdentityEnv } from "./identity.ts";
import { type EnvOptions, internalConfig, ZInternalEnv } from "./internal.ts";
import { jobsConfig, ZJobsEnv } from "./jobs.ts";
import { limitsConfig, ZLimitsEnv } from "./limits.ts";
import { messagesConfig, ZMessagesEnv } from "./messages.ts";
import { privacyConfig, ZPrivacyEnv } from "./privacy.ts";
import { serviceConfig, ZServiceEnv } from "./service.ts";
import { parseVariables } from "./shared.ts";
import { ubillConfig, ZUbillEnv } from "./ubill.ts";
import { verificationsConfig, ZVerificationsEnv } from "./verifications.ts";

export { type EnvOptions, INTERNAL_TOKEN_FILE } from "./internal.ts";
export { ConfigError } from "./shared.ts";

/** The variables, as the environment spells them (docs/operations.md lists each): every slice's. */
export const ZEnv = z.object({
  ...ZServiceEnv.shape,
  ...ZPrivacyEnv.shape,
  ...ZDatabaseEnv.shape,
  ...ZIdentityEnv.shape,
  ...ZInternalEnv.shape,
  ...ZHttpEnv.shape,
  ...ZJobsEnv.shape,
  ...ZUbillEnv.shape,
  ...ZLimitsEnv.shape,
  ...ZMessagesEnv.shape,
  ...ZVerificationsEnv.shape,
});
export type TEnv = z.output<typeof ZEnv>;

/** Each slice's part, in the order their checks run (the first problem found is the one reported). */
function configFrom(env: TEnv, options: EnvOptions) {
  return {
    ...serviceConfig(env),
    ...privacyConfig(env),
    ...databaseConfig(env),
    ...identityConfig(env),
    ...internalConfig(env, options),
    ...httpConfig(env),
    ...jobsConfig(env),
    ...ubillConfig(env),
    ...limitsConfig(env),
    ...messagesConfig(env),
    ...verificationsConfig(env),
  };
}

export type Config = ReturnType<typeof configFrom>;

/**
 * Parses the environment. A bad value throws a ConfigError whose one-line
 * message names the variable (never its value: it may be a secret).
 */
export function parseEnv(source: Record<string, string | undefined>, options: EnvOptions = {}): Config {
  return configFrom(parseVariables(ZEnv, source), options);
}

/**
 * `npm run db:migrate` (../migrate.ts): only the database slice's variables that say where migrations run,
 * checked as the service checks them; the rest of the environment is not the migrator's business.
 */
export function parseMigrationEnv(source: Record<string, string | undefined>) {
  const ZMigrationEnv = ZDatabaseEnv.pick({
    DATABASE_URL: true,
    DATABASE_MIGRATION_URL: true,
    PGLITE_DATA_DIR: true,
  });
  return migrationTarget(parseVariables(ZMigrationEnv, source));
}
