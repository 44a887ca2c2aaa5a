// Applies prisma/migrations/<timestamp>_<name>/migration.sql in Prisma's layout
// and records them in `_prisma_migrations` exactly as Prisma's schema engine
// does, so `prisma migrate deploy` (where its engine can be downloaded) sees the
// same history. Prisma's CLI cannot migrate on our machines (see
// shared/notes/prisma-offline.md), so this is the only migrator.
//
// - Every pending migration runs in its own transaction together with its
//   `_prisma_migrations` row: a failed migration leaves nothing behind and is
//   retried on the next run.
// - Everything happens under a session-level advisory lock (Prisma's own key),
//   so several instances starting at once apply each migration exactly once,
//   and never at the same time as a real `prisma migrate deploy`.
// - A migration whose file changed after it was applied stops the run.
import { createHash, randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { type DatabaseLogger, errorMessage } from "./logger.ts";
import { pgliteSession, pgSession, type SqlSession } from "./sql-session.ts";

/** The repository's prisma/migrations folder. */
export const MIGRATIONS_DIR = fileURLToPath(new URL("../../../prisma/migrations/", import.meta.url));

/**
 * The advisory lock key Prisma's schema engine takes for `migrate deploy`
 * (`SELECT pg_advisory_lock(72707369)`): sharing it keeps this migrator and a
 * real Prisma CLI from ever running at the same time.
 */
export const MIGRATION_LOCK_KEY = 72707369;

/** `_prisma_migrations` as Prisma's schema engine creates it on PostgreSQL. */
const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS _prisma_migrations (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             TIMESTAMPTZ,
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          TIMESTAMPTZ,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_steps_count     INTEGER NOT NULL DEFAULT 0
)`;

export type Migration = {
  /** The folder name, e.g. `20261122000000_init`. */
  name: string;
  sql: string;
  /** Hex SHA-256 of migration.sql's bytes, as Prisma computes it. */
  checksum: string;
};

export type MigrateResult = { applied: string[] };

export type MigrateOptions = {
  /** Defaults to the repository's prisma/migrations. */
  migrationsDir?: string;
  logger?: Pick<DatabaseLogger, "info" | "warn">;
  /** How long to wait for another instance's migration run (default 120 s). */
  lockTimeoutMs?: number;
};

export class MigrationError extends Error {
  override name = "MigrationError";
}

const quietLogger: Pick<DatabaseLogger, "info" | "warn"> = { info() {}, warn() {} };

function sha256Hex(bytes: Uint8Array | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

export function migrationChecksum(bytes: Uint8Array | string): string {
  return sha256Hex(bytes);
}

/**
 * Whether a stored checksum belongs to this file. Like Prisma's
 * `script_matches_checksum`, a file whose line endings were converted to CRLF
 * (a Windows checkout) still matches, and so does the unpadded hex some old
 * Prisma versions wrote.
 */
export function checksumMatches(sql: string, stored: string): boolean {
  const candidates = new Set([sql, sql.replaceAll("\r\n", "\n")]);
  for (const text of candidates) {
    const digest = createHash("sha256").update(text).digest();
    if (digest.toString("hex") === stored) return true;
    if (Array.from(digest, (byte) => byte.toString(16)).join("") === stored) return true;
  }
  return false;
}

/** Reads every `<name>/migration.sql` under `dir`, in lexical order of the names. */
export async function readMigrations(dir: string = MIGRATIONS_DIR): Promise<Migration[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch((error: unknown) => {
    throw new MigrationError(`cannot read the migrations folder ${dir}: ${errorMessage(error)}`);
  });
  const names = entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const migrations: Migration[] = [];
  for (const name of names) {
    let bytes: Uint8Array;
    try {
      bytes = await readFile(join(dir, name, "migration.sql"));
    } catch {
      throw new MigrationError(`migration folder ${name} has no readable migration.sql`);
    }
    migrations.push({ name, checksum: sha256Hex(bytes), sql: new TextDecoder().decode(bytes) });
  }
  return migrations;
}

type MigrationRow = {
  id: string;
  checksum: string;
  migration_name: string;
  finished_at: Date | string | null;
  rolled_back_at: Date | string | null;
};

async function acquireLock(session: SqlSession, timeoutMs: number): Promise<void> {
  await session.exec(`SET lock_timeout = ${Math.max(1, Math.round(timeoutMs))}`);
  try {
    await session.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
  } catch (error) {
    if ((error as { code?: string }).code === "55P03") {
      throw new MigrationError(
        `timed out after ${Math.round(timeoutMs / 1000)} s waiting for another migration run (advisory lock ${MIGRATION_LOCK_KEY})`,
      );
    }
    throw error;
  } finally {
    await session.exec("RESET lock_timeout").catch(() => undefined);
  }
}

/**
 * The core: applies `migrations` through one session (one connection: the
 * advisory lock belongs to it). Also usable with a client checked out of a pool.
 */
async function applyMigrations(
  session: SqlSession,
  migrations: Migration[],
  options: Pick<MigrateOptions, "logger" | "lockTimeoutMs"> = {},
): Promise<MigrateResult> {
  const logger = options.logger ?? quietLogger;
  await acquireLock(session, options.lockTimeoutMs ?? 120_000);
  try {
    await session.exec(CREATE_MIGRATIONS_TABLE);
    const rows = await session.query<MigrationRow>(
      "SELECT id, checksum, migration_name, finished_at, rolled_back_at FROM _prisma_migrations ORDER BY started_at, migration_name",
    );
    // Rows marked rolled back (`prisma migrate resolve --rolled-back`) do not count.
    const live = rows.filter((row) => row.rolled_back_at === null);
    const failed = live.find((row) => row.finished_at === null);
    if (failed) {
      throw new MigrationError(
        `migration ${failed.migration_name} is recorded as started but never finished; repair the database, then mark it with \`prisma migrate resolve\` or delete its _prisma_migrations row`,
      );
    }
    const applied = new Map(live.map((row) => [row.migration_name, row]));
    const known = new Set(migrations.map((migration) => migration.name));
    for (const row of live) {
      if (!known.has(row.migration_name)) {
        logger.warn(
          { migration: row.migration_name },
          "a migration recorded in the database is missing from prisma/migrations",
        );
      }
    }

    const pending: Migration[] = [];
    for (const migration of migrations) {
      const row = applied.get(migration.name);
      if (!row) {
        pending.push(migration);
        continue;
      }
      if (!checksumMatches(migration.sql, row.checksum)) {
        throw new MigrationError(
          `migration ${migration.name} was modified after it was applied (recorded checksum ${row.checksum}, file ${migration.checksum}); never edit an applied migration, add a new one instead`,
        );
      }
    }

    const done: string[] = [];
    for (const migration of pending) {
      try {
        await session.transaction(async (tx) => {
          const id = randomUUID();
          await tx.query(
            "INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at) VALUES ($1, $2, $3, now())",
            [id, migration.checksum, migration.name],
          );
          await tx.exec(migration.sql);
          await tx.query(
            "UPDATE _prisma_migrations SET finished_at = clock_timestamp(), applied_steps_count = 1 WHERE id = $1",
            [id],
          );
        });
      } catch (error) {
        throw new MigrationError(
          `migration ${migration.name} failed and was rolled back: ${errorMessage(error)}`,
          {
            cause: error,
          },
        );
      }
      logger.info({ migration: migration.name }, "applied migration");
      done.push(migration.name);
    }
    return { applied: done };
  } finally {
    await session.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]).catch(() => undefined);
  }
}

/** Migrates the PostgreSQL database at `databaseUrl` over its own connection. */
export async function migratePostgres(
  databaseUrl: string,
  options: MigrateOptions = {},
): Promise<MigrateResult> {
  const migrations = await readMigrations(options.migrationsDir);
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 10_000 });
  // A connection lost mid-run surfaces as a failed query; without a listener
  // the client's 'error' event would crash the process instead.
  client.on("error", () => undefined);
  await client.connect();
  try {
    return await applyMigrations(pgSession(client), migrations, options);
  } finally {
    await client.end().catch(() => undefined);
  }
}

// PGlite is one session: advisory locks are re-entrant within a session, so
// two runs on the same instance are serialised here instead.
const pgliteRuns = new WeakMap<PGlite, Promise<unknown>>();

/** Migrates an open PGlite instance. */
export async function migratePglite(pglite: PGlite, options: MigrateOptions = {}): Promise<MigrateResult> {
  const previous = pgliteRuns.get(pglite) ?? Promise.resolve();
  const run = previous
    .catch(() => undefined)
    .then(async () =>
      applyMigrations(pgliteSession(pglite), await readMigrations(options.migrationsDir), options),
    );
  pgliteRuns.set(pglite, run);
  return run;
}
