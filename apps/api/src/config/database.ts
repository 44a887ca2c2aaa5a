// The database: PostgreSQL (DATABASE_URL) or embedded PGlite, the pool, the
// deadlines, where migrations connect, and the read replica.
import { DEFAULT_POOL_SIZE, DEFAULT_REPLICA_RETRY_AFTER_MS } from "@sms/db";
import { z } from "zod";
import type { TServiceEnv } from "./service.ts";
import { bool, fail, int, postgresUrl, requiredInProduction } from "./shared.ts";

export const ZDatabaseEnv = z.object({
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
});
export type TDatabaseEnv = z.output<typeof ZDatabaseEnv>;

/** Where migrations run: PostgreSQL (DATABASE_MIGRATION_URL, else DATABASE_URL), else PGlite. */
export function migrationTarget(
  env: Pick<TDatabaseEnv, "DATABASE_URL" | "DATABASE_MIGRATION_URL" | "PGLITE_DATA_DIR">,
) {
  if (env.DATABASE_MIGRATION_URL && !env.DATABASE_URL) {
    fail("DATABASE_MIGRATION_URL needs DATABASE_URL (PGlite has no separate migration connection)");
  }
  return {
    /** Where migrations run (session-level advisory lock): DATABASE_MIGRATION_URL, else DATABASE_URL. */
    migrationUrl: env.DATABASE_MIGRATION_URL ?? env.DATABASE_URL,
    pgliteDataDir: env.PGLITE_DATA_DIR,
  };
}

export function databaseConfig(env: TDatabaseEnv & Pick<TServiceEnv, "NODE_ENV">) {
  requiredInProduction(env.NODE_ENV === "production", "DATABASE_URL", env.DATABASE_URL);
  const { migrationUrl, pgliteDataDir } = migrationTarget(env);
  if (env.DATABASE_READ_URL && !env.DATABASE_URL) {
    fail("DATABASE_READ_URL needs DATABASE_URL (a replica of PostgreSQL; PGlite has none)");
  }
  return {
    database: {
      url: env.DATABASE_URL,
      migrationUrl,
      preparedStatements: env.DATABASE_PREPARED_STATEMENTS,
      pgliteDataDir,
      poolSize: env.DATABASE_POOL_SIZE,
      connectTimeoutMs: env.DATABASE_CONNECT_TIMEOUT_MS,
      statementTimeoutMs: env.DATABASE_STATEMENT_TIMEOUT_MS,
      /** The read replica (DATABASE_READ_URL); null: every read goes to the primary. */
      read: env.DATABASE_READ_URL
        ? {
            url: env.DATABASE_READ_URL,
            recentWindowMs: env.DATABASE_READ_FALLBACK_WINDOW_MS,
            retryAfterMs: env.DATABASE_READ_RETRY_AFTER_MS,
          }
        : null,
    },
  };
}
