// The service's configuration: parsed once at start-up from the environment.
// Nothing else in the service reads process.env / Deno.env.
import { z } from "zod";
import { parseTrustProxy } from "./http/client-address.ts";

const int = (fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

const bool = (fallback: boolean) =>
  z
    .enum(["true", "false", "1", "0"])
    .default(fallback ? "true" : "false")
    .transform((value) => value === "true" || value === "1");

const optionalString = z
  .string()
  .optional()
  .transform((value) => (value === "" ? undefined : value));

const ZEnv = z
  .object({
    NODE_ENV: z.enum(["development", "test", "production"]).default("development"),
    PORT: int(3000, 0, 65535),
    HOST: z.string().min(1).default("0.0.0.0"),
    PUBLIC_BASE_URL: z.url().optional(),
    LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),

    DATABASE_URL: optionalString.pipe(
      z
        .string()
        .regex(/^postgres(ql)?:\/\//, "must be a postgresql:// URL")
        .optional(),
    ),
    PGLITE_DATA_DIR: z.string().min(1).default(".data/pglite"),
    DATABASE_POOL_SIZE: int(10, 1, 200),

    /** Comma-separated "<id>:<base64 32 bytes>"; the first encrypts, all decrypt. */
    MESSAGE_ENCRYPTION_KEYS: optionalString,
    /** Days after which a message's text and full number are purged (README, Privacy). */
    MESSAGE_TEXT_RETENTION_DAYS: int(7, 1, 3650),
    /** How often the retention purges (message text, idempotency records, rate-limit counters) run. */
    PURGE_INTERVAL_SECONDS: int(600, 1, 86_400),
    /** Rows per purge statement (each purge loops until a batch comes back short). */
    PURGE_BATCH_SIZE: int(500, 1, 10_000),

    MAX_BODY_BYTES: int(16 * 1024, 256, 1024 * 1024),
    /** How long a key lookup may be served from the in-process cache. */
    API_KEY_CACHE_TTL_MS: int(2000, 0, 60_000),
    /** Proxy hops (a number) or comma-separated addresses/CIDRs whose X-Forwarded-For is trusted. */
    TRUST_PROXY: optionalString,

    TEST_KEYS_PER_MINUTE: int(5, 1),
    TEST_KEYS_PER_DAY: int(20, 1),
    TEST_KEYS_PER_DAY_TOTAL: int(1000, 1),
    MESSAGES_PER_MINUTE: int(100, 1),
    FREE_TIER_DAILY_SEGMENTS: int(20, 0),
    /** Credits granted when a human claims a test project (a `grant_free` ledger entry). */
    CLAIM_FREE_CREDITS: int(50, 0),
    /** Sign-in starts on the claim pages per caller address per minute. */
    CLAIM_SIGN_INS_PER_MINUTE: int(20, 1),
    /**
     * Encrypts and authenticates the short-lived sign-in cookies of the claim
     * flow (at least 32 characters; all instances must share it). Required in
     * production; elsewhere a throw-away one is generated with a warning.
     */
    CLAIM_COOKIE_SECRET: optionalString.pipe(z.string().min(32, "must be at least 32 characters").optional()),
    /** Sign in with Google (OpenID Connect): offered when the client id and secret are set. */
    GOOGLE_ISSUER_URL: optionalString.pipe(z.url().optional()),
    GOOGLE_CLIENT_ID: optionalString,
    GOOGLE_CLIENT_SECRET: optionalString,
    /** Sign in with GitHub (OAuth 2.0 web flow): offered when the client id and secret are set. */
    GITHUB_CLIENT_ID: optionalString,
    GITHUB_CLIENT_SECRET: optionalString,
    GITHUB_AUTHORIZE_URL: optionalString.pipe(z.url().optional()),
    GITHUB_TOKEN_URL: optionalString.pipe(z.url().optional()),
    GITHUB_API_URL: optionalString.pipe(z.url().optional()),
    /** How often the purge of unclaimed projects' messages (30 days after sending) runs. */
    UNCLAIMED_PURGE_INTERVAL_SECONDS: int(3600, 1, 86_400),

    SMS_DEFAULT_SENDER: z.string().min(1).max(11).default("SMSGE"),
    STATUS_CHECK_INTERVAL_SECONDS: int(20, 1, 3600),
    STATUS_CHECK_BATCH_SIZE: int(200, 1, 10_000),
    SUBMITTED_DEADLINE_HOURS: int(72, 1, 24 * 365),
    QUEUED_RECOVERY_SECONDS: int(60, 5, 86_400),
    SIMULATOR_DELIVERY_DELAY_MS: int(5000, 0, 600_000),
    JOBS_ENABLED: bool(true),

    UBILL_BASE_URL: optionalString.pipe(z.url().optional()),
    UBILL_API_KEY: optionalString,
    UBILL_DEFAULT_BRAND_ID: z.coerce.number().int().positive().optional(),
    UBILL_SUBMIT_TIMEOUT_MS: int(10_000, 100, 120_000),
    UBILL_STATUS_TIMEOUT_MS: int(5_000, 100, 120_000),
  })
  .transform((env) => ({
    ...env,
    PUBLIC_BASE_URL: (env.PUBLIC_BASE_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, ""),
    GOOGLE_ISSUER_URL: env.GOOGLE_ISSUER_URL ?? "https://accounts.google.com",
    GITHUB_AUTHORIZE_URL: env.GITHUB_AUTHORIZE_URL ?? "https://github.com/login/oauth/authorize",
    GITHUB_TOKEN_URL: env.GITHUB_TOKEN_URL ?? "https://github.com/login/oauth/access_token",
    GITHUB_API_URL: (env.GITHUB_API_URL ?? "https://api.github.com").replace(/\/+$/, ""),
  }));

export type Env = z.output<typeof ZEnv>;

export class ConfigError extends Error {
  override name = "ConfigError";
}

/**
 * Parses the environment. A bad value throws a ConfigError whose one-line
 * message names the variable (never its value: it may be a secret).
 */
export function parseEnv(source: Record<string, string | undefined>): Env {
  const result = ZEnv.safeParse(source);
  if (!result.success) {
    const issue = result.error.issues[0];
    const name = issue?.path.join(".") || "environment";
    throw new ConfigError(
      `Invalid configuration: ${name} ${issue?.message ?? "is invalid"}`.replace(/\s+/g, " "),
    );
  }
  const env = result.data;
  if (env.NODE_ENV === "production") {
    const missing = [
      ["MESSAGE_ENCRYPTION_KEYS", env.MESSAGE_ENCRYPTION_KEYS],
      ["DATABASE_URL", env.DATABASE_URL],
      ["CLAIM_COOKIE_SECRET", env.CLAIM_COOKIE_SECRET],
    ].find(([, value]) => !value);
    if (missing) {
      throw new ConfigError(`Invalid configuration: ${missing[0]} is required when NODE_ENV=production`);
    }
  }
  for (const [provider, id, secret] of [
    ["GOOGLE", env.GOOGLE_CLIENT_ID, env.GOOGLE_CLIENT_SECRET],
    ["GITHUB", env.GITHUB_CLIENT_ID, env.GITHUB_CLIENT_SECRET],
  ] as const) {
    if ((id === undefined) !== (secret === undefined)) {
      throw new ConfigError(
        `Invalid configuration: ${provider}_CLIENT_ID and ${provider}_CLIENT_SECRET must be set together`,
      );
    }
  }
  if (env.NODE_ENV === "production") {
    // Sign-in traffic carries codes and tokens: never over plain HTTP in production.
    const insecure = (
      [
        ["GOOGLE_ISSUER_URL", env.GOOGLE_ISSUER_URL],
        ["GITHUB_AUTHORIZE_URL", env.GITHUB_AUTHORIZE_URL],
        ["GITHUB_TOKEN_URL", env.GITHUB_TOKEN_URL],
        ["GITHUB_API_URL", env.GITHUB_API_URL],
      ] as const
    ).find(([, value]) => !value.startsWith("https://"));
    if (insecure)
      throw new ConfigError(
        `Invalid configuration: ${insecure[0]} must be an https:// URL when NODE_ENV=production`,
      );
  }
  try {
    parseTrustProxy(env.TRUST_PROXY);
  } catch (error) {
    throw new ConfigError(`Invalid configuration: ${(error as Error).message}`);
  }
  // The recovery sweep must never take a send still waiting on uBill for a crashed one.
  if (env.QUEUED_RECOVERY_SECONDS * 1000 <= env.UBILL_SUBMIT_TIMEOUT_MS) {
    throw new ConfigError(
      "Invalid configuration: QUEUED_RECOVERY_SECONDS must be longer than UBILL_SUBMIT_TIMEOUT_MS",
    );
  }
  const ubill = [env.UBILL_BASE_URL, env.UBILL_API_KEY, env.UBILL_DEFAULT_BRAND_ID];
  if (ubill.some((value) => value !== undefined) && ubill.some((value) => value === undefined)) {
    throw new ConfigError(
      "Invalid configuration: UBILL_BASE_URL, UBILL_API_KEY and UBILL_DEFAULT_BRAND_ID must be set together",
    );
  }
  return env;
}
