// The internal tRPC listener (http/internal.ts) and the operator's tool that
// calls it: off unless INTERNAL_PORT is set, except in development (PORT + 1,
// with a token generated beside the data directory: see EnvOptions).
import { z } from "zod";
import { developmentFile } from "../development-files.ts";
import type { TDatabaseEnv } from "./database.ts";
import type { THttpEnv } from "./http.ts";
import type { TServiceEnv } from "./service.ts";
import { fail, int, optionalInt, secret32 } from "./shared.ts";

export const ZInternalEnv = z.object({
  INTERNAL_PORT: optionalInt(0, 65535),
  INTERNAL_HOST: z.string().min(1).default("127.0.0.1"),
  INTERNAL_API_TOKEN: secret32("must have 32 characters or more"),
  /** The operator's command-line tool: how long one call to the internal listener may take. */
  OPERATOR_TIMEOUT_MS: int(120_000, 100, 3_600_000),
});
export type TInternalEnv = z.output<typeof ZInternalEnv>;

/** The development internal token's file, beside PGlite's data directory (`.data/internal-token`). */
export const INTERNAL_TOKEN_FILE = "internal-token";

export type EnvOptions = {
  /**
   * The development defaults of the internal listener, for the service and the operator's tool. With
   * NODE_ENV=development (the default) and PGlite's data directory on disk (not `memory://`; also when
   * DATABASE_URL is set), INTERNAL_PORT defaults to PORT + 1 and, when INTERNAL_API_TOKEN is unset, the
   * token is this function's answer for `.data/internal-token` (the service reads or creates the file,
   * the operator's tool only reads it; null: no such file). Without it, and always under NODE_ENV=test or
   * production, the internal listener takes only the explicit settings.
   */
  developmentToken?: (file: string) => string | null;
};

type TInternalInputs = TInternalEnv &
  Pick<TServiceEnv, "NODE_ENV"> &
  Pick<THttpEnv, "PORT"> &
  Pick<TDatabaseEnv, "PGLITE_DATA_DIR">;

/** Development: INTERNAL_PORT and the token file (EnvOptions.developmentToken). */
function developmentInternal(
  env: TInternalInputs,
  developmentToken: EnvOptions["developmentToken"],
): { port: number | undefined; token: string | undefined; tokenFile: string | null } {
  const explicit = { port: env.INTERNAL_PORT, token: env.INTERNAL_API_TOKEN, tokenFile: null };
  if (!developmentToken || env.NODE_ENV !== "development" || env.PGLITE_DATA_DIR === "memory://") {
    return explicit;
  }
  const port = env.INTERNAL_PORT ?? (env.PORT === 0 ? 0 : env.PORT < 65535 ? env.PORT + 1 : undefined);
  if (env.INTERNAL_API_TOKEN || port === undefined) return { ...explicit, port };
  const tokenFile = developmentFile(env.PGLITE_DATA_DIR, INTERNAL_TOKEN_FILE);
  const token = developmentToken(tokenFile);
  if (!token) {
    fail(
      `INTERNAL_API_TOKEN is not set and ${tokenFile} does not exist yet: start the service (npm start) first, it creates the file; or set INTERNAL_PORT and INTERNAL_API_TOKEN as the service has them`,
    );
  }
  if (token.length < 32)
    fail(`${tokenFile} holds no valid token (32 characters or more): delete it and restart`);
  return { port, token, tokenFile };
}

export function internalConfig(env: TInternalInputs, options: EnvOptions) {
  const internal = developmentInternal(env, options.developmentToken);
  if (internal.port !== undefined && !internal.token) {
    fail("INTERNAL_API_TOKEN is required when INTERNAL_PORT is set");
  }
  if (internal.port !== undefined && internal.port !== 0 && internal.port === env.PORT) {
    fail("INTERNAL_PORT must differ from PORT");
  }
  return {
    /**
     * The internal tRPC listener; null when INTERNAL_PORT is unset (outside development).
     * `tokenFile`: the development token's file when INTERNAL_API_TOKEN is unset (EnvOptions), else null.
     */
    internal:
      internal.port !== undefined && internal.token
        ? {
            port: internal.port,
            host: env.INTERNAL_HOST,
            token: internal.token,
            tokenFile: internal.tokenFile,
          }
        : null,
    /** The operator tool's deadline for one call to the internal listener. */
    operatorTimeoutMs: env.OPERATOR_TIMEOUT_MS,
  };
}
