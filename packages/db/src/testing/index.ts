// "@sms/db/testing": the harness every package's integration tests use.
//
//   const backends = await availableBackends();          // ["pglite", "postgres"]
//   describe.each(backends)("on %s", (kind) => {
//     let t: TestDatabase;
//     beforeAll(async () => { t = await createTestDatabase(kind); });
//     afterAll(() => t.drop());
//     …t.db.query(…), t.db.prisma…
//   });
//
// PostgreSQL tests run in a database of their own (sms_test_…), created from
// TEST_POSTGRES_URL (default postgresql://postgres@127.0.0.1:5432/postgres) and
// dropped by drop(). As a safety net, call dropAllTestDatabases() in a global
// afterAll (packages/db does in test/setup.ts); leftovers of killed runs older
// than six hours are removed the next time a test database is created.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import net from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { createDatabase, type DatabaseKind, wrapPglite } from "../database.ts";
import type { DatabaseLogger } from "../logger.ts";
import { MIGRATIONS_DIR, migratePglite, migratePostgres, readMigrations } from "../migrator.ts";
import { type PrismaDatabase, withPrisma } from "./prisma.ts";

// The generated Prisma client and its types (tests and tools only).
export type {
  Account,
  AccountIdentity,
  ApiKey,
  AuditEntry,
  ClaimToken,
  CreditLedgerEntry,
  IdempotencyRecord,
  Message,
  Project,
  RateLimitCounter,
} from "../generated/prisma/client.ts";
export { CreditEntryKind, KeyMode, MessageStatus, Prisma, PrismaClient } from "../generated/prisma/client.ts";
export { type PrismaDatabase, withPrisma } from "./prisma.ts";
// The schema check (./schema-check/) lives in this room but is not re-exported:
// only packages/db's own schema tests use it, and its WebAssembly glue does
// not type-check under Deno, which loads this entry for the benches.

export type BackendKind = DatabaseKind;

export type TestDatabase = {
  /** The database, with the generated Prisma client over its connections (withPrisma). */
  db: PrismaDatabase;
  /** Set for PostgreSQL: the test database's own URL. */
  databaseUrl?: string;
  /** Closes the client and drops the database. Safe to call twice. */
  drop(): Promise<void>;
};

export type PostgresTestDatabase = {
  databaseUrl: string;
  /** Drops the database, disconnecting anyone still connected. Safe to call twice. */
  drop(): Promise<void>;
};

export const DEFAULT_TEST_POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/postgres";
const TEST_DATABASE_PREFIX = "sms_test_";
const STALE_AFTER_MS = 6 * 60 * 60 * 1000;

/** The administrative URL test databases are created from. */
export function testPostgresAdminUrl(): string {
  return process.env.TEST_POSTGRES_URL || DEFAULT_TEST_POSTGRES_URL;
}

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "<unparsable database URL>";
  }
}

/** Why PostgreSQL at `url` does not answer within `timeoutMs`, or null when it does. */
export async function probePostgres(url: string, timeoutMs = 2_000): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on("error", () => undefined);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs + 500);
  });
  const attempt = (async () => {
    await client.connect();
    await client.query("SELECT 1");
    return null;
  })().catch(
    (error: unknown) => (error instanceof Error ? error.message : String(error)) || "connection failed",
  );
  try {
    return await Promise.race([attempt, timeout]);
  } finally {
    clearTimeout(timer);
    client.end().catch(() => undefined);
  }
}

/**
 * The backends to run against, decided once per process from `env`:
 * PGlite always; PostgreSQL when TEST_POSTGRES_URL answers. When CI is set a
 * silent PostgreSQL is an error (CI must not quietly skip it); elsewhere one
 * warning line is printed and PostgreSQL is left out.
 */
export async function detectBackends(
  env: Record<string, string | undefined> = process.env,
): Promise<BackendKind[]> {
  const url = env.TEST_POSTGRES_URL || DEFAULT_TEST_POSTGRES_URL;
  const problem = await probePostgres(url);
  if (problem === null) return ["pglite", "postgres"];
  const message = `PostgreSQL at ${redactUrl(url)} does not answer (${problem})`;
  if (env.CI) throw new Error(`${message}; CI is set, so the PostgreSQL tests may not be skipped`);
  // Once per process, even when a test runner re-imports this module per file.
  if (!process.env.SMS_DB_TESTING_WARNED) {
    process.env.SMS_DB_TESTING_WARNED = "1";
    console.warn(`@sms/db/testing: ${message}; database tests run on PGlite only`);
  }
  return ["pglite"];
}

let backends: Promise<BackendKind[]> | undefined;

export function availableBackends(): Promise<BackendKind[]> {
  backends ??= detectBackends();
  return backends;
}

function databaseUrlFor(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function withAdminClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: testPostgresAdminUrl(), connectionTimeoutMillis: 5_000 });
  client.on("error", () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function newTestDatabaseName(): string {
  const random = Array.from(crypto.getRandomValues(new Uint8Array(5)), (byte) =>
    byte.toString(16).padStart(2, "0"),
  ).join("");
  // The creation time is in the name so stale leftovers can be recognised.
  return `${TEST_DATABASE_PREFIX}${Date.now().toString(36)}_${random}`;
}

/**
 * Drops sms_test_ databases left behind by killed runs: created more than six
 * hours before `now` (the time is in the name) and with nobody connected.
 * Returns their names. Runs once per process before the first test database
 * is created.
 */
export async function dropStaleTestDatabases(now: number = Date.now()): Promise<string[]> {
  return withAdminClient(async (client) => {
    const { rows } = await client.query<{ datname: string }>(
      `SELECT datname FROM pg_database
       WHERE datname LIKE 'sms\\_test\\_%'
         AND datname NOT IN (SELECT datname FROM pg_stat_activity WHERE datname IS NOT NULL)`,
    );
    const dropped: string[] = [];
    for (const { datname } of rows) {
      const created = Number.parseInt(datname.slice(TEST_DATABASE_PREFIX.length).split("_")[0] ?? "", 36);
      if (!Number.isFinite(created) || now - created < STALE_AFTER_MS) continue;
      // Without FORCE: a database somebody is using is left alone.
      const ok = await client.query(`DROP DATABASE IF EXISTS "${datname}"`).then(
        () => true,
        () => false,
      );
      if (ok) dropped.push(datname);
    }
    return dropped;
  });
}

let staleSweep: Promise<unknown> | undefined;

const liveDatabases = new Set<() => Promise<void>>();

/** Drops every test database this process created and has not dropped yet. */
export async function dropAllTestDatabases(): Promise<void> {
  await Promise.allSettled([...liveDatabases].map((drop) => drop()));
}

function once(action: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => {
    done ??= action();
    return done;
  };
}

/**
 * A new, empty PostgreSQL database on the test server, migrated unless
 * `migrate: false`. No client is kept open: end-to-end tests hand the URL to a
 * separate server process.
 */
export async function createPostgresTestDatabase(
  options: { migrate?: boolean } = {},
): Promise<PostgresTestDatabase> {
  const name = newTestDatabaseName();
  staleSweep ??= dropStaleTestDatabases().catch(() => undefined);
  await staleSweep;
  await withAdminClient(async (client) => {
    await client.query(`CREATE DATABASE "${name}"`);
  });
  const databaseUrl = databaseUrlFor(testPostgresAdminUrl(), name);
  const drop = once(async () => {
    liveDatabases.delete(drop);
    await withAdminClient(async (client) => {
      await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    });
  });
  liveDatabases.add(drop);
  if (options.migrate ?? true) {
    try {
      await migratePostgres(databaseUrl);
    } catch (error) {
      await drop().catch(() => undefined);
      throw error;
    }
  }
  return { databaseUrl, drop };
}

export type CreateTestDatabaseOptions = {
  /** Apply prisma/migrations (default true). */
  migrate?: boolean;
  poolSize?: number;
  connectionTimeoutMs?: number;
  statementTimeoutMs?: number;
  queryTimeoutMs?: number;
  logger?: DatabaseLogger;
  /** Migrations read by db.migrate() (default: the repository's). */
  migrationsDir?: string;
};

const quietLogger: DatabaseLogger = { info() {}, warn() {}, error() {} };

// Starting PGlite runs initdb, which takes seconds; loading a dump of an
// already initialised (and migrated) instance takes well under one. The dumps
// are kept per process and, across processes and test files, in the system's
// temporary directory, keyed by the PGlite build and the migrations' checksums.
const pgliteTemplates = new Map<string, Promise<Blob>>();

function pgliteIdentity(): string {
  try {
    const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite");
    const manifest = JSON.parse(readFileSync(join(dirname(entry), "..", "package.json"), "utf8")) as {
      version?: string;
    };
    return `${entry}@${manifest.version}`;
  } catch {
    return "unknown";
  }
}

async function buildPgliteTemplate(migrationsDir: string | null): Promise<Blob> {
  const pglite = await PGlite.create("memory://");
  try {
    if (migrationsDir !== null) await migratePglite(pglite, { migrationsDir });
    return await pglite.dumpDataDir("none");
  } finally {
    await pglite.close();
  }
}

function pgliteTemplate(migrationsDir: string | null): Promise<Blob> {
  return (async () => {
    const migrations = migrationsDir === null ? [] : await readMigrations(migrationsDir);
    const key = createHash("sha256")
      .update(
        JSON.stringify([
          pgliteIdentity(),
          migrations.map((migration) => [migration.name, migration.checksum]),
        ]),
      )
      .digest("hex")
      .slice(0, 32);
    let template = pgliteTemplates.get(key);
    if (!template) {
      template = (async () => {
        const file = join(tmpdir(), "sms-pglite-templates", `${key}.tar`);
        const cached = await readFile(file).catch(() => null);
        if (cached) return new Blob([cached]);
        const built = await buildPgliteTemplate(migrationsDir);
        // Written under a unique name, then renamed: concurrent runs never see half a file.
        const partial = `${file}.${process.pid}.${Date.now()}`;
        await mkdir(dirname(file), { recursive: true });
        await writeFile(partial, new Uint8Array(await built.arrayBuffer()));
        await rename(partial, file).catch(() => rm(partial, { force: true }));
        await pruneTemplates(dirname(file));
        return built;
      })();
      pgliteTemplates.set(key, template);
      // A failed attempt is not cached: the next test gets the real error again.
      template.catch(() => pgliteTemplates.delete(key));
    }
    return template;
  })();
}

/** Removes cached templates nobody has written for a week (old migrations, old PGlite builds). */
async function pruneTemplates(dir: string): Promise<void> {
  const weekAgo = Date.now() - 7 * 24 * 60 * 60 * 1000;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const path = join(dir, name);
    const info = await stat(path).catch(() => null);
    if (info && info.mtimeMs < weekAgo) await rm(path, { force: true });
  }
}

/** Forgets the cached PGlite templates (e.g. after one turned out unusable). */
async function forgetPgliteTemplates(): Promise<void> {
  pgliteTemplates.clear();
  await rm(join(tmpdir(), "sms-pglite-templates"), { recursive: true, force: true });
}

async function openPgliteFromTemplate(migrationsDir: string | null): Promise<PGlite> {
  try {
    return await PGlite.create({ loadDataDir: await pgliteTemplate(migrationsDir) });
  } catch {
    // A damaged cache file: start over from initdb once.
    await forgetPgliteTemplates();
    return PGlite.create({ loadDataDir: await pgliteTemplate(migrationsDir) });
  }
}

/** A migrated database with an open client: PGlite in memory, or a new PostgreSQL database. */
export async function createTestDatabase(
  kind: BackendKind,
  options: CreateTestDatabaseOptions = {},
): Promise<TestDatabase> {
  const clientOptions = {
    logger: options.logger ?? quietLogger,
    migrationsDir: options.migrationsDir,
    poolSize: options.poolSize ?? 4,
    connectionTimeoutMs: options.connectionTimeoutMs,
    statementTimeoutMs: options.statementTimeoutMs,
    queryTimeoutMs: options.queryTimeoutMs,
  };
  const migrate = options.migrate ?? true;

  if (kind === "pglite") {
    const pglite = await openPgliteFromTemplate(migrate ? (options.migrationsDir ?? MIGRATIONS_DIR) : null);
    const db = withPrisma(wrapPglite(pglite, clientOptions));
    const drop = once(async () => {
      liveDatabases.delete(drop);
      await db.close();
    });
    liveDatabases.add(drop);
    return { db, drop };
  }

  const server = await createPostgresTestDatabase({ migrate: false });
  let db: PrismaDatabase | undefined;
  const drop = once(async () => {
    liveDatabases.delete(drop);
    try {
      await db?.close();
    } finally {
      await server.drop();
    }
  });
  liveDatabases.add(drop);
  try {
    db = withPrisma(await createDatabase({ ...clientOptions, databaseUrl: server.databaseUrl }));
    if (migrate) await db.migrate();
  } catch (error) {
    await drop().catch(() => undefined);
    throw error;
  }
  return { db, databaseUrl: server.databaseUrl, drop };
}

/**
 * A TestDatabase over an existing PostgreSQL database (e.g. the primary of
 * startReplicatedPostgres), migrated unless `migrate: false`. drop() only
 * closes the client: the database belongs to whoever made it.
 */
export async function openTestDatabase(
  databaseUrl: string,
  options: Omit<CreateTestDatabaseOptions, "migrationsDir"> = {},
): Promise<TestDatabase> {
  const db = withPrisma(
    await createDatabase({
      databaseUrl,
      logger: options.logger ?? quietLogger,
      poolSize: options.poolSize ?? 4,
      connectionTimeoutMs: options.connectionTimeoutMs,
      statementTimeoutMs: options.statementTimeoutMs,
      queryTimeoutMs: options.queryTimeoutMs,
    }),
  );
  const drop = once(async () => {
    liveDatabases.delete(drop);
    await db.close();
  });
  liveDatabases.add(drop);
  try {
    if (options.migrate ?? true) await db.migrate();
  } catch (error) {
    await drop().catch(() => undefined);
    throw error;
  }
  return { db, databaseUrl, drop };
}

/**
 * A TCP proxy in front of a PostgreSQL server, for fault tests: the database
 * seen through it can be frozen (a network path that went silent: nothing is
 * forwarded in either direction, on old or new connections, and nothing is
 * closed; what was sent is delivered once it thaws, as TCP would) or stopped
 * (every connection reset, new ones refused) and started again. Its answers
 * alone can be held back too (holdAnswers): the server gets every statement
 * and runs it, the client hears nothing until releaseAnswers.
 */
export type DatabaseProxy = {
  /** `databaseUrl` with its host and port replaced by the proxy's. */
  urlFor(databaseUrl: string): string;
  freeze(): void;
  thaw(): void;
  /** Holds back what the server sends (on every connection), forwarding what clients send. */
  holdAnswers(): void;
  /** Delivers the answers held back, and forwards answers again. */
  releaseAnswers(): void;
  /** Resets every connection and refuses new ones until start(). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Connections accepted so far. */
  readonly accepted: number;
  close(): Promise<void>;
};

export async function createDatabaseProxy(targetUrl: string): Promise<DatabaseProxy> {
  const target = new URL(targetUrl);
  const sockets = new Set<net.Socket>();
  const pending = new Set<() => void>();
  let frozen = false;
  let answersHeld = false;
  let accepted = 0;

  /** Forwards `from` to `to`, holding chunks back while frozen (or while `holding()`); returns the flush. */
  function forward(from: net.Socket, to: () => net.Socket | undefined, holding = () => false): () => void {
    const held: Buffer[] = [];
    const flush = () => {
      const socket = to();
      if (!socket || frozen || holding()) return;
      for (const chunk of held.splice(0)) socket.write(chunk);
    };
    from.on("data", (chunk: Buffer) => {
      held.push(chunk);
      flush();
    });
    pending.add(flush);
    from.on("close", () => pending.delete(flush));
    return flush;
  }

  const server = net.createServer((downstream) => {
    accepted++;
    sockets.add(downstream);
    let upstream: net.Socket | undefined;
    let flushDownstream = () => {};
    const connectUpstream = () => {
      if (upstream || frozen || downstream.destroyed) return;
      upstream = net.connect(Number(target.port || 5432), target.hostname);
      sockets.add(upstream);
      upstream.on("error", () => downstream.destroy());
      upstream.on("close", () => {
        sockets.delete(upstream as net.Socket);
        downstream.destroy();
      });
      forward(
        upstream,
        () => downstream,
        () => answersHeld,
      );
      flushDownstream();
    };
    downstream.on("error", () => upstream?.destroy());
    downstream.on("close", () => {
      sockets.delete(downstream);
      pending.delete(connectUpstream);
      upstream?.destroy();
    });
    flushDownstream = forward(downstream, () => upstream);
    pending.add(connectUpstream);
    connectUpstream();
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  await listen(0);
  const { port } = server.address() as net.AddressInfo;
  /** Sends on what each connection held back (once neither frozen nor holding answers). */
  const resumeAll = () => {
    for (const resume of [...pending]) resume();
  };
  const resetAll = () => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
  };

  return {
    urlFor(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = "127.0.0.1";
      url.port = String(port);
      return url.toString();
    },
    freeze() {
      frozen = true;
    },
    thaw() {
      frozen = false;
      resumeAll();
    },
    holdAnswers() {
      answersHeld = true;
    },
    releaseAnswers() {
      answersHeld = false;
      resumeAll();
    },
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        resetAll();
      });
    },
    start: () => listen(port),
    get accepted() {
      return accepted;
    },
    async close() {
      resetAll();
      if (server.listening) await new Promise((resolve) => server.close(resolve));
    },
  };
}
export {
  type ArchivedPostgres,
  type BackupSet,
  backupHarnessAvailable,
  PGBACKREST_TEMPLATE_DIR,
  type RestoredPostgres,
  renderPgBackRestTemplate,
  startArchivedPostgres,
} from "./backup.ts";
export {
  DEPLOY_DIR,
  type PatroniCluster,
  type PatroniMember,
  patroniHarnessAvailable,
  renderTemplate,
  startPatroniCluster,
} from "./patroni.ts";
export {
  type ReplicatedPostgres,
  replicaHarnessAvailable,
  startReplicatedPostgres,
} from "./replica.ts";
