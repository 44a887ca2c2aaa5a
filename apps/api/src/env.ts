// The service's configuration: read once at start-up from the environment and
// returned as parsed values (durations in milliseconds, the trusted proxies
// as networks, each optional integration as one object or null). Nothing else
// in the service reads process.env / Deno.env.
import { DEFAULT_POOL_SIZE, DEFAULT_REPLICA_RETRY_AFTER_MS } from "@sms/db";
import {
  DEFAULT_PURGE_BATCH_SIZE,
  DEFAULT_VERIFICATION_LIFETIME_MINUTES,
  OPERATOR_IDENTITY_PATTERN,
} from "@sms/domain";
import { DEFAULT_DELIVERY_DELAY_MS } from "@sms/provider-sim";
import { DEFAULT_STATUS_TIMEOUT_MS, DEFAULT_SUBMIT_TIMEOUT_MS } from "@sms/provider-ubill";
import { z } from "zod";
import { developmentFile } from "./development-files.ts";
import { parseTrustProxy, type TrustProxy } from "./http/client-address.ts";

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
/** Unset, or a postgresql:// URL. */
const postgresUrl = optionalString.pipe(
  z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgresql:// URL")
    .optional(),
);

/** An integer variable that may be unset (or empty). */
const optionalInt = (min: number, max: number) =>
  optionalString.pipe(
    z
      .string()
      .regex(/^\d+$/, "must be a whole number")
      .transform(Number)
      .pipe(z.number().int().min(min).max(max))
      .optional(),
  );

const SECOND_MS = 1000;
const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/**
 * The variables, as the environment spells them (docs/operations.md lists
 * each). Where a package has a default of its own, that constant is the
 * default here too: one source per default.
 */
const ZEnv = z.object({
  NODE_ENV: z.enum(["development", "test", "production"]).default("development"),
  PORT: int(3000, 0, 65535),
  /** Default: 127.0.0.1 outside production (the development sign-in is on there), 0.0.0.0 in production. */
  HOST: optionalString,
  PUBLIC_BASE_URL: z.url().optional(),
  /** Production accepts an http:// PUBLIC_BASE_URL for a public host only with this (TLS ends before the service). */
  ALLOW_HTTP_PUBLIC_BASE_URL: bool(false),
  /** Browser origins besides PUBLIC_BASE_URL's own that may call /mcp (comma-separated, e.g. https://agent.example). */
  MCP_ALLOWED_ORIGINS: optionalString,
  LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),

  DATABASE_URL: postgresUrl,
  PGLITE_DATA_DIR: z.string().min(1).default(".data/pglite"),
  DATABASE_POOL_SIZE: int(DEFAULT_POOL_SIZE, 1, 200),
  /** Off behind a transaction-mode pooler (PgBouncer before 1.21): see docs/operations.md. */
  DATABASE_PREPARED_STATEMENTS: bool(true),
  /** Where migrations connect (default DATABASE_URL); behind PgBouncer, PostgreSQL itself. */
  DATABASE_MIGRATION_URL: postgresUrl,
  /** Getting a connection (opening one, or waiting for a free one) may take this long. */
  DATABASE_CONNECT_TIMEOUT_MS: int(3_000, 100, 60_000),
  /** One statement may take this long (server-side statement_timeout; the client waits 500 ms more). */
  DATABASE_STATEMENT_TIMEOUT_MS: int(5_000, 100, 300_000),
  /** A streaming standby of DATABASE_URL for the reads that may lag (docs/scaling.md#reads-from-a-replica). */
  DATABASE_READ_URL: postgresUrl,
  /**
   * Read-your-writes: a by-id read the replica does not find is retried on the primary while the id is
   * younger; and a replica lacking writes older than this is skipped (every read on the primary) until it catches up.
   */
  DATABASE_READ_FALLBACK_WINDOW_MS: int(30_000, 0, 3_600_000),
  /** After the replica failed to answer, reads go to the primary for this long before one tries it again. */
  DATABASE_READ_RETRY_AFTER_MS: int(DEFAULT_REPLICA_RETRY_AFTER_MS, 100, 600_000),

  /** Comma-separated "<id>:<base64 32 bytes>"; the first encrypts, all decrypt. */
  MESSAGE_ENCRYPTION_KEYS: optionalString,
  MESSAGE_TEXT_RETENTION_DAYS: int(7, 1, 3650),
  /** How long the developer console's request log keeps a request (docs/dashboard.md#request-log). */
  REQUEST_LOG_RETENTION_DAYS: int(30, 1, 3650),
  /** Whether API requests are recorded for the request log at all (docs/dashboard.md#request-log). */
  REQUEST_LOG_ENABLED: bool(true),
  PURGE_INTERVAL_SECONDS: int(600, 1, 86_400),
  PURGE_BATCH_SIZE: int(DEFAULT_PURGE_BATCH_SIZE, 1, 10_000),
  UNCLAIMED_PURGE_INTERVAL_SECONDS: int(3600, 1, 86_400),

  MAX_BODY_BYTES: int(16 * 1024, 256, 1024 * 1024),
  HTTP_HEADERS_TIMEOUT_SECONDS: int(10, 1, 3600),
  HTTP_BODY_TIMEOUT_SECONDS: int(30, 1, 3600),
  HTTP_IDLE_TIMEOUT_SECONDS: int(60, 1, 3600),
  MAX_CONNECTIONS: int(1024, 1, 1_000_000),
  /** Open connections from one address (an IPv6 /64): one client cannot hold the whole cap. */
  MAX_CONNECTIONS_PER_PEER: int(128, 1, 1_000_000),
  /**
   * Requests held at once by `Prefer: wait` (http/conditional-read.ts), at most half of MAX_CONNECTIONS
   * (a held request keeps its connection); beyond it a request is answered at once.
   */
  MAX_WAITING_REQUESTS: int(512, 0, 1_000_000),
  /** The same for one API key (at most MAX_WAITING_REQUESTS). */
  MAX_WAITING_REQUESTS_PER_KEY: int(64, 0, 1_000_000),
  SHUTDOWN_TIMEOUT_SECONDS: int(25, 1, 3600),
  /** SIGTERM/SIGINT behind a load balancer: /readyz answers 503 this long, still serving, before the listener closes. */
  SHUTDOWN_READINESS_DELAY_SECONDS: int(0, 0, 300),

  /**
   * The internal tRPC listener (http/internal.ts); off unless INTERNAL_PORT is set, except in development
   * (PORT + 1, with a token generated beside the data directory: see EnvOptions).
   */
  INTERNAL_PORT: optionalInt(0, 65535),
  INTERNAL_HOST: z.string().min(1).default("127.0.0.1"),
  INTERNAL_API_TOKEN: optionalString.pipe(z.string().min(32, "must have 32 characters or more").optional()),
  API_KEY_CACHE_TTL_MS: int(2000, 0, 60_000),
  /** The operator's command-line tool: how long one call to the internal listener may take. */
  OPERATOR_TIMEOUT_MS: int(120_000, 100, 3_600_000),
  /** Failed API-key authentications one address may make per minute before 429 (http/auth-throttle.ts). */
  AUTH_FAILURES_PER_MINUTE: int(20, 1, 100_000),
  /** Proxy hops (a number) or comma-separated addresses/CIDRs whose X-Forwarded-For is trusted. */
  TRUST_PROXY: optionalString,
  /** With a hop count in TRUST_PROXY: where those proxies are (default: private addresses). */
  TRUST_PROXY_NETWORKS: optionalString,

  TEST_KEYS_PER_MINUTE: int(5, 1),
  TEST_KEYS_PER_DAY: int(20, 1),
  TEST_KEYS_PER_DAY_TOTAL: int(1000, 1),
  MESSAGES_PER_MINUTE: int(100, 1),
  /** Live messages of a project to one number per minute (over it: 429 rate_limited, Retry-After ≤ 60). */
  RECIPIENT_MESSAGES_PER_MINUTE: int(2, 1),
  /** … and per UTC day (over it: 429 daily_limit_reached until midnight UTC). */
  RECIPIENT_MESSAGES_PER_DAY: int(10, 1),
  /** How long a send keeps trying to record the provider's answer while the database is unavailable. */
  SEND_RECORD_RETRY_SECONDS: int(30, 0, 600),
  FREE_TIER_DAILY_SEGMENTS: int(20, 0),
  /** Verifications (docs/auth-and-limits.md): how long a code stays valid. */
  VERIFICATION_LIFETIME_MINUTES: int(DEFAULT_VERIFICATION_LIFETIME_MINUTES, 1, 60),
  /** Live verifications a project may start for one number per minute, and per UTC day (anti-pumping). */
  VERIFICATIONS_PER_RECIPIENT_PER_MINUTE: int(2, 1),
  VERIFICATIONS_PER_RECIPIENT_PER_DAY: int(10, 1),
  /** Verification checks per calendar minute: of one project, and from one address (429 rate_limited, Retry-After ≤ 60). */
  VERIFICATION_CHECKS_PER_MINUTE: int(300, 1),
  VERIFICATION_CHECKS_PER_ADDRESS_PER_MINUTE: int(300, 1),

  CLAIM_FREE_CREDITS: int(50, 0),
  CLAIM_SIGN_INS_PER_MINUTE: int(20, 1),
  CLAIM_COOKIE_SECRET: optionalString.pipe(z.string().min(32, "must be at least 32 characters").optional()),
  GOOGLE_ISSUER_URL: optionalString.pipe(z.url().optional()),
  GOOGLE_CLIENT_ID: optionalString,
  GOOGLE_CLIENT_SECRET: optionalString,
  GITHUB_CLIENT_ID: optionalString,
  GITHUB_CLIENT_SECRET: optionalString,
  GITHUB_AUTHORIZE_URL: optionalString.pipe(z.url().optional()),
  GITHUB_TOKEN_URL: optionalString.pipe(z.url().optional()),
  GITHUB_API_URL: optionalString.pipe(z.url().optional()),
  /** "auto": on outside production when neither Google nor GitHub is configured. */
  DEV_SIGN_IN: z.enum(["auto", "true", "false"]).default("auto"),
  /** Comma-separated `provider:subject` identities that also see the operator's views. */
  OPERATOR_IDENTITIES: optionalString,
  DASHBOARD_SESSION_IDLE_MINUTES: int(720, 5, 7 * 24 * 60),
  DASHBOARD_SESSION_MAX_HOURS: int(168, 1, 90 * 24),

  SMS_DEFAULT_SENDER: z.string().min(1).max(11).default("SMSGE"),
  STATUS_CHECK_INTERVAL_SECONDS: int(20, 1, 3600),
  STATUS_CHECK_BATCH_SIZE: int(200, 1, 10_000),
  /** Provider calls in flight at once during a status-check round (per process). */
  STATUS_CHECK_CONCURRENCY: int(16, 1, 1_000),
  SUBMITTED_DEADLINE_HOURS: int(72, 1, 24 * 365),
  QUEUED_RECOVERY_SECONDS: int(60, 5, 86_400),
  SIMULATOR_DELIVERY_DELAY_MS: int(DEFAULT_DELIVERY_DELAY_MS, 0, 600_000),
  JOBS_ENABLED: bool(true),

  UBILL_BASE_URL: optionalString.pipe(z.url().optional()),
  UBILL_API_KEY: optionalString,
  UBILL_DEFAULT_BRAND_ID: z.coerce.number().int().positive().optional(),
  UBILL_SUBMIT_TIMEOUT_MS: int(DEFAULT_SUBMIT_TIMEOUT_MS, 100, 120_000),
  UBILL_STATUS_TIMEOUT_MS: int(DEFAULT_STATUS_TIMEOUT_MS, 100, 120_000),
  /** Live sends this process has at uBill at once, from write-ahead to answer; the rest wait in memory. */
  UBILL_MAX_IN_FLIGHT: int(32, 1, 10_000),
  /**
   * How long a live send waits for one of those places before `503 provider_unavailable` (nothing written):
   * by default as long as uBill itself is given (UBILL_SUBMIT_TIMEOUT_MS's default).
   */
  UBILL_QUEUE_TIMEOUT_MS: int(DEFAULT_SUBMIT_TIMEOUT_MS, 0, 120_000),
});

type RawEnv = z.output<typeof ZEnv>;

type GoogleConfig = { issuerUrl: string; clientId: string; clientSecret: string };
type GithubConfig = {
  authorizeUrl: string;
  tokenUrl: string;
  apiUrl: string;
  clientId: string;
  clientSecret: string;
};
type UbillConfig = {
  baseUrl: string;
  apiKey: string;
  defaultBrandId: number;
  submitTimeoutMs: number;
  statusTimeoutMs: number;
  /** Live sends at uBill at once in this process (UBILL_MAX_IN_FLIGHT). */
  maxInFlight: number;
  /** A live send's longest wait for one of those places (UBILL_QUEUE_TIMEOUT_MS). */
  queueTimeoutMs: number;
};

export type Config = {
  nodeEnv: RawEnv["NODE_ENV"];
  port: number;
  host: string;
  /** HOST was set (otherwise `host` is the default for NODE_ENV). */
  hostConfigured: boolean;
  /** Base of claim_url, OAuth redirect URIs and the OpenAPI server; no trailing slash. */
  publicBaseUrl: string;
  /** Origins /mcp accepts from a browser besides the public one (mcp/origin.ts). */
  mcpAllowedOrigins: string[];
  logLevel: RawEnv["LOG_LEVEL"];
  database: {
    url: string | undefined;
    /** Where migrations run (session-level advisory lock): DATABASE_MIGRATION_URL, else `url`. */
    migrationUrl: string | undefined;
    preparedStatements: boolean;
    pgliteDataDir: string;
    poolSize: number;
    connectTimeoutMs: number;
    statementTimeoutMs: number;
    /** The read replica (DATABASE_READ_URL); null: every read goes to the primary. */
    read: { url: string; recentWindowMs: number; retryAfterMs: number } | null;
  };
  /** The keyring spec; undefined outside production means a development key (app.ts). */
  messageEncryptionKeys: string | undefined;
  http: {
    maxBodyBytes: number;
    trustProxy: TrustProxy;
    /** A new connection must deliver a request's headers within this. */
    headersTimeoutMs: number;
    /** A request's body must arrive in full within this (counted from its headers). */
    bodyTimeoutMs: number;
    /** A keep-alive connection with no request in flight is closed after this. */
    idleTimeoutMs: number;
    /** Open connections on the public port (idle ones make room for new ones; see http/server.ts). */
    maxConnections: number;
    /** Open connections on the public port from one address (at most maxConnections). */
    maxConnectionsPerPeer: number;
    /** Requests held by `Prefer: wait` at once (at most half of maxConnections), and per API key. */
    waiting: { max: number; perKey: number };
  };
  /**
   * The internal tRPC listener; null when INTERNAL_PORT is unset (outside development).
   * `tokenFile`: the development token's file when INTERNAL_API_TOKEN is unset (EnvOptions), else null.
   */
  internal: { port: number; host: string; token: string; tokenFile: string | null } | null;
  /** SIGTERM/SIGINT: how long in-flight work may take before the process closes what remains. */
  shutdownTimeoutMs: number;
  /** SIGTERM/SIGINT: how long /readyz answers 503 while everything is still served, before the drain. */
  shutdownReadinessDelayMs: number;
  apiKeyCacheTtlMs: number;
  /** Whether answered API requests are recorded for the developer console's request log. */
  requestLogEnabled: boolean;
  /** The operator tool's deadline for one call to the internal listener. */
  operatorTimeoutMs: number;
  /** Failed API-key authentications per address and minute, per instance, before 429 rate_limited. */
  authFailuresPerMinute: number;
  testKeys: { perMinute: number; perDay: number; perDayTotal: number };
  verifications: {
    lifetimeMs: number;
    /** Live starts of a project for one number (anti-pumping). */
    startsPerRecipient: { perMinute: number; perDay: number };
    /** Checks per calendar minute, of one project and from one address. */
    checksPerMinute: { project: number; address: number };
  };
  messages: {
    perMinute: number;
    /** Live messages of a project to one number (anti-pumping). */
    recipientPerMinute: number;
    recipientPerDay: number;
    recordRetryMs: number;
    /**
     * How long a duplicate waits for the first request with its key: as long
     * as that one can be busy with the provider, plus one statement to
     * record its answer (UBILL_SUBMIT_TIMEOUT_MS + DATABASE_STATEMENT_TIMEOUT_MS).
     */
    inFlightWaitMs: number;
    freeTierDailySegments: number;
    defaultSender: string;
    simulatorDelayMs: number;
  };
  statusCheck: {
    intervalMs: number;
    batchSize: number;
    concurrency: number;
    submittedDeadlineMs: number;
    /** The provider's status call timeout: how long one call of a batch may take. */
    callTimeoutMs: number;
  };
  queuedRecoveryMs: number;
  retention: {
    messageTextMs: number;
    requestLogMs: number;
    purgeIntervalMs: number;
    purgeBatchSize: number;
    unclaimedPurgeIntervalMs: number;
  };
  claims: {
    freeCredits: number;
    signInsPerMinute: number;
    /** undefined outside production: a throw-away secret is generated (app.ts, developmentSecret). */
    cookieSecret: string | undefined;
    google: GoogleConfig | null;
    github: GithubConfig | null;
  };
  dashboard: {
    /** The development identity provider ("Sign in as a local developer"); never in production. */
    devSignIn: boolean;
    /** `provider:subject` of every operator (OPERATOR_IDENTITIES). */
    operatorIdentities: string[];
    sessionIdleMs: number;
    sessionMaxMs: number;
  };
  jobsEnabled: boolean;
  /** The live provider; null when not configured (live sends answer 503). */
  ubill: UbillConfig | null;
};

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** localhost, 127.0.0.0/8 or ::1: a URL only this machine can reach. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  return (
    host === "localhost" || host.endsWith(".localhost") || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host)
  );
}

function fail(message: string): never {
  throw new ConfigError(`Invalid configuration: ${message}`);
}

/** Both or neither of a pair of variables. */
function together<A, B>(names: string, a: A | undefined, b: B | undefined): [A, B] | null {
  if ((a === undefined) !== (b === undefined)) fail(`${names} must be set together`);
  return a === undefined || b === undefined ? null : [a, b];
}

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

/** Development: INTERNAL_PORT and the token file (EnvOptions.developmentToken). */
function developmentInternal(
  env: RawEnv,
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

/**
 * Parses the environment. A bad value throws a ConfigError whose one-line
 * message names the variable (never its value: it may be a secret).
 */
export function parseEnv(source: Record<string, string | undefined>, options: EnvOptions = {}): Config {
  const result = ZEnv.safeParse(source);
  if (!result.success) {
    const issue = result.error.issues[0];
    const name = issue?.path.join(".") || "environment";
    fail(`${name} ${issue?.message ?? "is invalid"}`.replace(/\s+/g, " "));
  }
  const env = result.data;
  const production = env.NODE_ENV === "production";
  if (production) {
    const missing = (
      [
        ["MESSAGE_ENCRYPTION_KEYS", env.MESSAGE_ENCRYPTION_KEYS],
        ["DATABASE_URL", env.DATABASE_URL],
        ["CLAIM_COOKIE_SECRET", env.CLAIM_COOKIE_SECRET],
      ] as const
    ).find(([, value]) => !value);
    if (missing) fail(`${missing[0]} is required when NODE_ENV=production`);
  }

  const googleClient = together(
    "GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET",
    env.GOOGLE_CLIENT_ID,
    env.GOOGLE_CLIENT_SECRET,
  );
  const githubClient = together(
    "GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET",
    env.GITHUB_CLIENT_ID,
    env.GITHUB_CLIENT_SECRET,
  );
  const providerUrls = {
    GOOGLE_ISSUER_URL: env.GOOGLE_ISSUER_URL ?? "https://accounts.google.com",
    GITHUB_AUTHORIZE_URL: env.GITHUB_AUTHORIZE_URL ?? "https://github.com/login/oauth/authorize",
    GITHUB_TOKEN_URL: env.GITHUB_TOKEN_URL ?? "https://github.com/login/oauth/access_token",
    GITHUB_API_URL: (env.GITHUB_API_URL ?? "https://api.github.com").replace(/\/+$/, ""),
  };
  if (production) {
    // Sign-in traffic carries codes and tokens: never over plain HTTP in production.
    const insecure = Object.entries(providerUrls).find(([, value]) => !value.startsWith("https://"));
    if (insecure) fail(`${insecure[0]} must be an https:// URL when NODE_ENV=production`);
  }

  const internal = developmentInternal(env, options.developmentToken);
  if (internal.port !== undefined && !internal.token) {
    fail("INTERNAL_API_TOKEN is required when INTERNAL_PORT is set");
  }
  if (internal.port !== undefined && internal.port !== 0 && internal.port === env.PORT) {
    fail("INTERNAL_PORT must differ from PORT");
  }

  let trustProxy: TrustProxy;
  try {
    trustProxy = parseTrustProxy(env.TRUST_PROXY, env.TRUST_PROXY_NETWORKS);
  } catch (error) {
    fail((error as Error).message);
  }

  // The development provider lets anyone sign in as anyone: never in production.
  if (production && env.DEV_SIGN_IN === "true") fail("DEV_SIGN_IN cannot be true when NODE_ENV=production");
  const devSignIn =
    env.DEV_SIGN_IN === "true" ||
    (env.DEV_SIGN_IN === "auto" && !production && !googleClient && !githubClient);
  const operatorIdentities = (env.OPERATOR_IDENTITIES ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  const badOperator = operatorIdentities.find((entry) => !OPERATOR_IDENTITY_PATTERN.test(entry));
  if (badOperator !== undefined)
    fail("OPERATOR_IDENTITIES must list provider:subject entries (google:…, github:…, dev:…)");
  if (production && operatorIdentities.some((entry) => entry.startsWith("dev:")))
    fail("OPERATOR_IDENTITIES cannot name dev: identities when NODE_ENV=production");

  // The recovery sweep must never take a send still waiting on uBill for a crashed one.
  if (env.QUEUED_RECOVERY_SECONDS * SECOND_MS <= env.UBILL_SUBMIT_TIMEOUT_MS) {
    fail("QUEUED_RECOVERY_SECONDS must be longer than UBILL_SUBMIT_TIMEOUT_MS");
  }
  if (env.DATABASE_MIGRATION_URL && !env.DATABASE_URL) {
    fail("DATABASE_MIGRATION_URL needs DATABASE_URL (PGlite has no separate migration connection)");
  }
  if (env.DATABASE_READ_URL && !env.DATABASE_URL) {
    fail("DATABASE_READ_URL needs DATABASE_URL (a replica of PostgreSQL; PGlite has none)");
  }
  const ubill = [env.UBILL_BASE_URL, env.UBILL_API_KEY, env.UBILL_DEFAULT_BRAND_ID];
  if (ubill.some((value) => value !== undefined) && ubill.some((value) => value === undefined)) {
    fail("UBILL_BASE_URL, UBILL_API_KEY and UBILL_DEFAULT_BRAND_ID must be set together");
  }

  const publicBaseUrl = (env.PUBLIC_BASE_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, "");
  if (production && !env.ALLOW_HTTP_PUBLIC_BASE_URL) {
    const url = new URL(publicBaseUrl);
    if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
      fail(
        "PUBLIC_BASE_URL must be an https:// URL when NODE_ENV=production: claim links, sign-in redirects and session cookies would travel in clear text (http:// is accepted for localhost and loopback addresses, or with ALLOW_HTTP_PUBLIC_BASE_URL=true when TLS ends in front of the service)",
      );
    }
  }

  return {
    nodeEnv: env.NODE_ENV,
    port: env.PORT,
    host: env.HOST ?? (production ? "0.0.0.0" : "127.0.0.1"),
    hostConfigured: env.HOST !== undefined,
    publicBaseUrl,
    mcpAllowedOrigins: (env.MCP_ALLOWED_ORIGINS ?? "")
      .split(",")
      .map((origin) => origin.trim().replace(/\/+$/, ""))
      .filter((origin) => origin !== ""),
    logLevel: env.LOG_LEVEL,
    database: {
      url: env.DATABASE_URL,
      migrationUrl: env.DATABASE_MIGRATION_URL ?? env.DATABASE_URL,
      preparedStatements: env.DATABASE_PREPARED_STATEMENTS,
      pgliteDataDir: env.PGLITE_DATA_DIR,
      poolSize: env.DATABASE_POOL_SIZE,
      connectTimeoutMs: env.DATABASE_CONNECT_TIMEOUT_MS,
      statementTimeoutMs: env.DATABASE_STATEMENT_TIMEOUT_MS,
      read: env.DATABASE_READ_URL
        ? {
            url: env.DATABASE_READ_URL,
            recentWindowMs: env.DATABASE_READ_FALLBACK_WINDOW_MS,
            retryAfterMs: env.DATABASE_READ_RETRY_AFTER_MS,
          }
        : null,
    },
    messageEncryptionKeys: env.MESSAGE_ENCRYPTION_KEYS,
    http: {
      maxBodyBytes: env.MAX_BODY_BYTES,
      trustProxy,
      headersTimeoutMs: env.HTTP_HEADERS_TIMEOUT_SECONDS * SECOND_MS,
      bodyTimeoutMs: env.HTTP_BODY_TIMEOUT_SECONDS * SECOND_MS,
      idleTimeoutMs: env.HTTP_IDLE_TIMEOUT_SECONDS * SECOND_MS,
      maxConnections: env.MAX_CONNECTIONS,
      maxConnectionsPerPeer: Math.min(env.MAX_CONNECTIONS_PER_PEER, env.MAX_CONNECTIONS),
      waiting: waitingLimits(env.MAX_WAITING_REQUESTS, env.MAX_WAITING_REQUESTS_PER_KEY, env.MAX_CONNECTIONS),
    },
    internal:
      internal.port !== undefined && internal.token
        ? {
            port: internal.port,
            host: env.INTERNAL_HOST,
            token: internal.token,
            tokenFile: internal.tokenFile,
          }
        : null,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_SECONDS * SECOND_MS,
    shutdownReadinessDelayMs: env.SHUTDOWN_READINESS_DELAY_SECONDS * SECOND_MS,
    apiKeyCacheTtlMs: env.API_KEY_CACHE_TTL_MS,
    requestLogEnabled: env.REQUEST_LOG_ENABLED,
    operatorTimeoutMs: env.OPERATOR_TIMEOUT_MS,
    authFailuresPerMinute: env.AUTH_FAILURES_PER_MINUTE,
    testKeys: {
      perMinute: env.TEST_KEYS_PER_MINUTE,
      perDay: env.TEST_KEYS_PER_DAY,
      perDayTotal: env.TEST_KEYS_PER_DAY_TOTAL,
    },
    verifications: {
      lifetimeMs: env.VERIFICATION_LIFETIME_MINUTES * MINUTE_MS,
      startsPerRecipient: {
        perMinute: env.VERIFICATIONS_PER_RECIPIENT_PER_MINUTE,
        perDay: env.VERIFICATIONS_PER_RECIPIENT_PER_DAY,
      },
      checksPerMinute: {
        project: env.VERIFICATION_CHECKS_PER_MINUTE,
        address: env.VERIFICATION_CHECKS_PER_ADDRESS_PER_MINUTE,
      },
    },
    messages: {
      perMinute: env.MESSAGES_PER_MINUTE,
      recipientPerMinute: env.RECIPIENT_MESSAGES_PER_MINUTE,
      recipientPerDay: env.RECIPIENT_MESSAGES_PER_DAY,
      recordRetryMs: env.SEND_RECORD_RETRY_SECONDS * SECOND_MS,
      inFlightWaitMs: env.UBILL_SUBMIT_TIMEOUT_MS + env.DATABASE_STATEMENT_TIMEOUT_MS,
      freeTierDailySegments: env.FREE_TIER_DAILY_SEGMENTS,
      defaultSender: env.SMS_DEFAULT_SENDER,
      simulatorDelayMs: env.SIMULATOR_DELIVERY_DELAY_MS,
    },
    statusCheck: {
      intervalMs: env.STATUS_CHECK_INTERVAL_SECONDS * SECOND_MS,
      batchSize: env.STATUS_CHECK_BATCH_SIZE,
      concurrency: env.STATUS_CHECK_CONCURRENCY,
      submittedDeadlineMs: env.SUBMITTED_DEADLINE_HOURS * HOUR_MS,
      callTimeoutMs: env.UBILL_STATUS_TIMEOUT_MS,
    },
    queuedRecoveryMs: env.QUEUED_RECOVERY_SECONDS * SECOND_MS,
    retention: {
      messageTextMs: env.MESSAGE_TEXT_RETENTION_DAYS * DAY_MS,
      requestLogMs: env.REQUEST_LOG_RETENTION_DAYS * DAY_MS,
      purgeIntervalMs: env.PURGE_INTERVAL_SECONDS * SECOND_MS,
      purgeBatchSize: env.PURGE_BATCH_SIZE,
      unclaimedPurgeIntervalMs: env.UNCLAIMED_PURGE_INTERVAL_SECONDS * SECOND_MS,
    },
    claims: {
      freeCredits: env.CLAIM_FREE_CREDITS,
      signInsPerMinute: env.CLAIM_SIGN_INS_PER_MINUTE,
      cookieSecret: env.CLAIM_COOKIE_SECRET,
      google: googleClient && {
        issuerUrl: providerUrls.GOOGLE_ISSUER_URL,
        clientId: googleClient[0],
        clientSecret: googleClient[1],
      },
      github: githubClient && {
        authorizeUrl: providerUrls.GITHUB_AUTHORIZE_URL,
        tokenUrl: providerUrls.GITHUB_TOKEN_URL,
        apiUrl: providerUrls.GITHUB_API_URL,
        clientId: githubClient[0],
        clientSecret: githubClient[1],
      },
    },
    dashboard: {
      devSignIn,
      operatorIdentities,
      sessionIdleMs: env.DASHBOARD_SESSION_IDLE_MINUTES * 60_000,
      sessionMaxMs: env.DASHBOARD_SESSION_MAX_HOURS * HOUR_MS,
    },
    jobsEnabled: env.JOBS_ENABLED,
    ubill:
      env.UBILL_BASE_URL && env.UBILL_API_KEY && env.UBILL_DEFAULT_BRAND_ID
        ? {
            baseUrl: env.UBILL_BASE_URL,
            apiKey: env.UBILL_API_KEY,
            defaultBrandId: env.UBILL_DEFAULT_BRAND_ID,
            submitTimeoutMs: env.UBILL_SUBMIT_TIMEOUT_MS,
            statusTimeoutMs: env.UBILL_STATUS_TIMEOUT_MS,
            maxInFlight: env.UBILL_MAX_IN_FLIGHT,
            queueTimeoutMs: env.UBILL_QUEUE_TIMEOUT_MS,
          }
        : null,
  };
}

/**
 * The holds' bounds in the connection budget: a held request keeps its connection, so holds take at most
 * half of MAX_CONNECTIONS, leaving the other half to everything else; one key at most the instance's.
 */
export function waitingLimits(max: number, perKey: number, maxConnections: number) {
  const total = Math.min(max, Math.floor(maxConnections / 2));
  return { max: total, perKey: Math.min(perKey, total) };
}
