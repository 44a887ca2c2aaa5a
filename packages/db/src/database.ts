// The database the service runs on: PostgreSQL through a `pg` pool when a
// database URL is configured, otherwise embedded PGlite (on disk, or in memory
// for tests). Statements only (`query`, `transaction`): the Prisma client,
// which only tests and tools use, is built over the same connections by the
// testing entry (testing/prisma.ts).
import { Buffer } from "node:buffer";
import { mkdir } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { takeIdle } from "./idle-checkout.ts";
import { withLiterals } from "./literals.ts";
import { consoleLogger, type DatabaseLogger, errorMessage } from "./logger.ts";
import { type MigrateResult, migratePglite, migratePostgres } from "./migrator.ts";
import { pgliteSession, pgSession, type SqlSession } from "./sql-session.ts";
import { type StatementDeadlines, statementDeadlines } from "./statement-deadlines.ts";
import { asUnavailable, unavailableReason, WRITES_REFUSED } from "./unavailable.ts";

export type DatabaseKind = "postgres" | "pglite";

/**
 * One parameterised statement (`$1`, `$2`, …) and its rows: the only way the
 * domain's store talks to the database. The Database itself is one (each
 * statement on its own, autocommitted), and so is the handle `transaction()`
 * passes to its work, so store functions run the same inside and outside a
 * transaction. Rows come back as the driver parses them: cast `count(*)` and
 * other bigints to int in SQL.
 */
export type Sql = {
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
};

/** A transaction's handle: its statements, and a last statement that commits with it. */
export type TransactionSql = Sql & {
  /**
   * Runs `sql` as the transaction's last statement and commits. On PostgreSQL
   * the statement and its COMMIT go to the server as one message (the simple
   * query protocol, `params` written into the text as literals: literals.ts),
   * so the rows it locks are free as soon as it has run, not one round trip
   * later, once this process has read its answer and sent COMMIT: for a
   * statement on rows that many transactions queue for (a project's balance).
   * It throws when the statement fails (e.g. a refusal it raises): then
   * nothing is committed and the transaction rolls back. Once it has returned
   * the transaction is committed, whatever the work does next: a throw after
   * it undoes nothing. No statement may follow it. On PGlite (one session,
   * nothing waits on its locks) it is the statement, then COMMIT.
   */
  queryAndCommit<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
};

export type Database = Sql & {
  /**
   * Runs `work` in one transaction: BEGIN … COMMIT on one pooled connection
   * (PostgreSQL) or PGlite's own transaction (which holds its lock, so no
   * other statement interleaves). A throw rolls back and is rethrown.
   * Transactions do not nest: inside `work`, use the handle it was given.
   */
  transaction<T>(work: (sql: TransactionSql) => Promise<T>): Promise<T>;
  kind: DatabaseKind;
  /** Applies pending migrations from prisma/migrations (see migrator.ts). */
  migrate(): Promise<MigrateResult>;
  /**
   * True when the database answers within `timeoutMs` (default 1.5 s) and
   * takes writes: false while it is read-only (a standby, or
   * `default_transaction_read_only`), and for WRITE_REFUSAL_HOLD_MS after a
   * statement of this process was refused for read-only or a full disk.
   * Never throws and never hangs: a stopped server, a dropped database or a
   * silently cut connection all come back as false.
   */
  ping(timeoutMs?: number): Promise<boolean>;
  /** Ends the pool / closes PGlite (after anything opened over it: see driverOf). Safe to call twice. */
  close(): Promise<void>;
  /** The pool's connections (null for PGlite, which has one session): for metrics. */
  poolStats(): { total: number; idle: number; waiting: number } | null;
};

export type CreateDatabaseOptions = {
  /** postgresql://… — when absent, PGlite at `pgliteDataDir` is used. */
  databaseUrl?: string;
  /** A directory (created when missing), or `memory://` for a throwaway database. */
  pgliteDataDir?: string;
  /** Maximum PostgreSQL connections of this process (default 10). */
  poolSize?: number;
  /**
   * How long getting a PostgreSQL connection may take (opening one, or waiting
   * for a free one in the pool) before the statement that needs it fails with
   * DatabaseUnavailableError (default 5 s), so requests fail fast while the
   * database is down or unreachable.
   */
  connectionTimeoutMs?: number;
  /**
   * Server-side deadline of one statement (PostgreSQL's `statement_timeout`,
   * and `idle_in_transaction_session_timeout` so a transaction whose client
   * vanished does not keep its row locks). Unset: no server-side deadline.
   */
  statementTimeoutMs?: number;
  /**
   * Client-side limit for one statement (default: `statementTimeoutMs` + 500 ms,
   * or 30 s without one). A statement that gets no answer, e.g. on a network
   * path that went silent, fails after it with DatabaseUnavailableError and its
   * connection is discarded instead of hanging the request. Migrations use
   * their own connection and are not limited by it.
   */
  queryTimeoutMs?: number;
  logger?: DatabaseLogger;
  /** Where migrate() reads migrations from (default: the repository's prisma/migrations). */
  migrationsDir?: string;
  /**
   * Named prepared statements (default true): each distinct SQL text is parsed
   * and planned once per connection. Turn off behind a pooler in transaction
   * mode (PgBouncer before 1.21), where a statement prepared on one server
   * connection is not there on the next.
   */
  preparedStatements?: boolean;
  /**
   * Where migrate() connects (default: `databaseUrl`). Migrations hold a
   * session-level advisory lock, which a transaction-mode pooler cannot keep:
   * behind one, point this at PostgreSQL itself. The LISTEN session
   * (listen.ts) connects here too, for the same reason.
   */
  migrationUrl?: string;
};

export const DEFAULT_PING_TIMEOUT_MS = 1_500;
/** How long ping() stays false after a write was refused (read-only, disk full), unless refused again. */
export const WRITE_REFUSAL_HOLD_MS = 5_000;
/** The probe ping() runs: it answers, and whether this session could write. */
const PING_SQL =
  "SELECT (pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on') AS read_only";
/** PostgreSQL connections per process unless configured (DATABASE_POOL_SIZE). */
export const DEFAULT_POOL_SIZE = 10;

/**
 * The SQLSTATE of a statement's own refusal: `sms_refuse(<detail>)` (migration
 * 20261228000000_statement_refusals) raises it, and the statement, with its
 * transaction, is rolled back. The caller reads the error's `detail`.
 */
export const STATEMENT_REFUSED = "SR001";

/** Whether `error` is a statement's own refusal (STATEMENT_REFUSED), not a failure. */
export function isStatementRefusal(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === STATEMENT_REFUSED;
}
const DEFAULT_CONNECTION_TIMEOUT_MS = 5_000;
const DEFAULT_QUERY_TIMEOUT_MS = 30_000;
/** How much longer the client waits than the server's statement_timeout, so the server's cancel normally comes first. */
const CLIENT_TIMEOUT_MARGIN_MS = 500;

type SessionRunner = <T>(work: (session: SqlSession) => Promise<T>) => Promise<T>;

// A raw-SQL session per database, for the test harness and the schema test.
// Kept out of the public Database type: the app talks through `query` only.
const sessionRunners = new WeakMap<Database, SessionRunner>();

/**
 * What a Database runs on, for clients the testing entry builds over the same
 * connections (the Prisma client: testing/prisma.ts). `beforeClose` runs
 * first when the Database closes. Not exported from the package's entry.
 */
export type Driver = (
  | {
      kind: "postgres";
      pool: pg.Pool;
      preparedStatements: boolean;
      /** Where a session of its own connects (LISTEN: listen.ts): PostgreSQL itself, not a transaction-mode pooler. */
      sessionUrl: string;
    }
  | { kind: "pglite"; pglite: PGlite }
) & { beforeClose: Array<() => Promise<void>> };
const drivers = new WeakMap<Database, Driver>();

export function driverOf(db: Database): Driver {
  const driver = drivers.get(db);
  if (!driver) throw new Error("driverOf: not a Database created by createDatabase()");
  return driver;
}

/** When this database last refused a write (read-only, disk full): ping() is false for a while after. */
function writeRefusals() {
  let refusedAt = Number.NEGATIVE_INFINITY;
  return {
    /** Passes `error` on, noting a refused write. */
    note(error: unknown): unknown {
      const reason = unavailableReason(error);
      if (reason !== null && WRITES_REFUSED.has(reason)) refusedAt = performance.now();
      return error;
    },
    recent: () => performance.now() - refusedAt < WRITE_REFUSAL_HOLD_MS,
  };
}

async function runBeforeClose(driver: Driver, logger: DatabaseLogger): Promise<void> {
  for (const hook of driver.beforeClose.splice(0)) {
    await hook().catch((error: unknown) => {
      logger.warn({ error: errorMessage(error) }, "closing a client over the database failed");
    });
  }
}

/**
 * Runs `work` on one dedicated connection of `db` (for PGlite, its only
 * session). A pooled connection is closed afterwards rather than returned, so
 * session settings made by `work` cannot leak into the app's queries.
 */
export function withSqlSession<T>(db: Database, work: (session: SqlSession) => Promise<T>): Promise<T> {
  const run = sessionRunners.get(db);
  if (!run) throw new Error("withSqlSession: not a Database created by createDatabase()");
  return run(work);
}

export async function createDatabase(options: CreateDatabaseOptions): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options);
  if (options.pgliteDataDir) return openPglite(options.pgliteDataDir, options);
  throw new Error("createDatabase needs either databaseUrl or pgliteDataDir");
}

function once(action: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => {
    done ??= action();
    return done;
  };
}

function delay(ms: number): { promise: Promise<false>; cancel(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const promise = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

// Prepared statements: pg caches a named statement per connection, so the
// server parses and plans each distinct query once per connection instead of
// on every execution (about half of PostgreSQL's CPU per message send). Names
// are handed out for the first MAX_NAMED_STATEMENTS distinct SQL texts only;
// anything beyond (e.g. IN lists of ever new lengths) runs unnamed, so memory
// on both sides stays bounded. Not for PgBouncer in transaction mode.
const MAX_NAMED_STATEMENTS = 1_000;
const statementNames = new Map<string, string>();
/** Statements still run unnamed, and for how many more executions in this process. */
const unnamedFor = new Map<string, number>();

/**
 * Marks `sql` to run unnamed (parsed and planned with its parameters) for its
 * first `executions` executions in this process, and named after that. For a
 * batch statement whose generic plan depends on its table's size: a prepared
 * statement keeps the generic plan it made, and one made while the table was
 * a few pages (a seq scan) is kept however much the table grows, until the
 * next ANALYZE (on a fresh database or without autovacuum, maybe never). When
 * each execution writes at least one row of that table that stays (for the
 * idempotency records, 24 hours), the table holds at least `executions` rows
 * by the time any plan is kept. Returns `sql`.
 */
export function unnamedForFirst(sql: string, executions: number): string {
  unnamedFor.set(sql, executions);
  return sql;
}

/** The prepared statement's name for `sql` (undefined: run it unnamed). Shared with testing/prisma.ts. */
export function statementName(sql: string): string | undefined {
  const left = unnamedFor.get(sql);
  if (left !== undefined) {
    if (left > 0) {
      unnamedFor.set(sql, left - 1);
      return undefined;
    }
    unnamedFor.delete(sql);
  }
  let name = statementNames.get(sql);
  if (name === undefined && statementNames.size < MAX_NAMED_STATEMENTS) {
    name = `sms_${statementNames.size}`;
    statementNames.set(sql, name);
  }
  return name;
}

/** One statement on a checked-out client; named (prepared) unless `prepared` is false. */
async function runStatement<Row>(
  deadlines: StatementDeadlines,
  client: pg.PoolClient,
  prepared: boolean,
  sql: string,
  params: readonly unknown[] = [],
): Promise<Row[]> {
  const values = params.map((value) =>
    // pg sends a Buffer as bytea; any other Uint8Array it would turn into JSON.
    value instanceof Uint8Array && !Buffer.isBuffer(value)
      ? Buffer.from(value.buffer, value.byteOffset, value.byteLength)
      : value,
  );
  try {
    const result = await deadlines.run(client, () =>
      client.query({ name: prepared ? statementName(sql) : undefined, text: sql, values }),
    );
    return result.rows as Row[];
  } catch (error) {
    throw asUnavailable(error);
  }
}

/**
 * A statement and COMMIT in one message (simple protocol, the parameters as
 * literals): the statement's rows. When the statement fails, the server skips
 * the COMMIT and the transaction is left aborted for the caller's ROLLBACK.
 */
async function runAndCommit<Row>(
  deadlines: StatementDeadlines,
  client: pg.PoolClient,
  sql: string,
  params: readonly unknown[] = [],
): Promise<Row[]> {
  const text = `${withLiterals(sql, params)};\nCOMMIT`;
  try {
    // Two statements in one simple query: pg answers with one result each.
    const results = (await deadlines.run(client, () => client.query(text))) as unknown as pg.QueryResult[];
    return (results[0]?.rows ?? []) as Row[];
  } catch (error) {
    throw asUnavailable(error);
  }
}

/**
 * Tracks a transaction's end by queryAndCommit: statements after it are a bug
 * (they would run outside the transaction), and so is a second one.
 */
function commitTracker() {
  let state: "open" | "committed" | "failed" = "open";
  return {
    get state() {
      return state;
    },
    /** Throws once the transaction has been committed (or its commit failed). */
    assertOpen() {
      if (state !== "open") {
        throw new Error("transaction: no statement may follow queryAndCommit");
      }
    },
    async commit<Row>(run: () => Promise<Row[]>): Promise<Row[]> {
      this.assertOpen();
      try {
        const rows = await run();
        state = "committed";
        return rows;
      } catch (error) {
        state = "failed";
        throw error;
      }
    },
  };
}

/** BEGIN, COMMIT or ROLLBACK on a checked-out client (unnamed, simple protocol). */
async function control(
  deadlines: StatementDeadlines,
  client: pg.PoolClient,
  sql: "BEGIN" | "COMMIT" | "ROLLBACK",
): Promise<void> {
  try {
    await deadlines.run(client, () => client.query(sql));
  } catch (error) {
    throw asUnavailable(error);
  }
}

/**
 * A pooled connection, or DatabaseUnavailableError when none can be had within the connect deadline. An idle
 * one is handed out at once (idle-checkout.ts), not on pg-pool's next tick.
 */
async function checkout(pool: pg.Pool): Promise<pg.PoolClient> {
  try {
    return await (takeIdle(pool) ?? pool.connect());
  } catch (error) {
    throw asUnavailable(error);
  }
}

function openPostgres(databaseUrl: string, options: CreateDatabaseOptions): Database {
  const logger = options.logger ?? consoleLogger;
  const prepared = options.preparedStatements ?? true;
  const statementTimeout = options.statementTimeoutMs;
  // The client-side deadline is the service's own (statement-deadlines.ts), not pg's query_timeout.
  const deadlines = statementDeadlines(
    options.queryTimeoutMs ??
      (statementTimeout ? statementTimeout + CLIENT_TIMEOUT_MARGIN_MS : DEFAULT_QUERY_TIMEOUT_MS),
  );
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.poolSize ?? DEFAULT_POOL_SIZE,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS,
    // Sent in the start-up packet: no extra round trip per connection.
    ...(statementTimeout
      ? { statement_timeout: statementTimeout, idle_in_transaction_session_timeout: statementTimeout }
      : {}),
    // A connection once opened stays open (a fixed-size pool, as HikariCP recommends): the pool's
    // peak is what the server must allow anyway, and closing idle ones cost a timer per release.
    idleTimeoutMillis: 0,
    // Lets the OS notice a peer that vanished without closing the connection.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // An idle connection that breaks (server restart, pg_terminate_backend) is
  // dropped from the pool; without this listener it would crash the process.
  pool.on("error", (error) => {
    logger.warn({ error: error.message }, "an idle database connection was closed");
  });
  // The same for a connection that breaks while checked out: its query fails
  // on its own, the event only needs a listener.
  pool.on("connect", (client) => {
    client.on("error", () => undefined);
  });

  const driver: Driver = {
    kind: "postgres",
    pool,
    preparedStatements: prepared,
    sessionUrl: options.migrationUrl ?? databaseUrl,
    beforeClose: [],
  };
  let closed = false;

  const runSession: SessionRunner = async (work) => {
    const client = await pool.connect();
    try {
      return await work(pgSession(client));
    } finally {
      client.release(true);
    }
  };

  const refusals = writeRefusals();
  const db: Database = {
    kind: "postgres",
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    query: async <Row>(sql: string, params?: readonly unknown[]) => {
      let client: pg.PoolClient;
      try {
        client = await checkout(pool);
      } catch (error) {
        throw refusals.note(error);
      }
      // As pg-pool's own pool.query: a connection whose statement failed is not reused, unless the
      // statement refused by design (sms_refuse): the server rolled it back and the connection is idle.
      let failed = false;
      try {
        return await runStatement<Row>(deadlines, client, prepared, sql, params);
      } catch (error) {
        failed = !isStatementRefusal(error);
        throw refusals.note(error);
      } finally {
        client.release(failed);
      }
    },
    transaction: async (work) => {
      const client = await checkout(pool);
      let broken = false;
      const ended = commitTracker();
      try {
        await control(deadlines, client, "BEGIN");
        const result = await work({
          query: async (sql, params) => {
            ended.assertOpen();
            return runStatement(deadlines, client, prepared, sql, params);
          },
          queryAndCommit: (sql, params) => ended.commit(() => runAndCommit(deadlines, client, sql, params)),
        });
        if (ended.state === "open") await control(deadlines, client, "COMMIT");
        // The work went on after its commit failed: nothing was committed; the
        // connection leaves its aborted transaction before it goes back.
        if (ended.state === "failed") await control(deadlines, client, "ROLLBACK");
        return result;
      } catch (error) {
        refusals.note(error);
        const reason = unavailableReason(error);
        if (reason === "timeout" || reason === "connection_lost") {
          // The connection is silent or gone: a ROLLBACK would only wait as
          // long again. Dropping the connection rolls the transaction back.
          broken = true;
        } else if (ended.state !== "committed") {
          // A connection that cannot even roll back is not given back to the pool.
          await control(deadlines, client, "ROLLBACK").catch(() => {
            broken = true;
          });
        }
        throw error;
      } finally {
        client.release(broken);
      }
    },
    // Its own connection, outside the pool and its query timeout: one
    // migration may legitimately take long.
    migrate: () =>
      migratePostgres(options.migrationUrl ?? databaseUrl, { logger, migrationsDir: options.migrationsDir }),
    ping: async (timeoutMs = DEFAULT_PING_TIMEOUT_MS) => {
      if (closed || refusals.recent()) return false;
      try {
        return await pingPool(pool, timeoutMs);
      } catch {
        return false;
      }
    },
    close: once(async () => {
      closed = true;
      await runBeforeClose(driver, logger);
      await pool.end().catch(() => undefined);
    }),
  };
  sessionRunners.set(db, runSession);
  drivers.set(db, driver);
  return db;
}

type PingOutcome = "answered" | "read-only" | "connect-failed" | "query-failed" | "timed-out";

/**
 * PING_SQL on a pooled connection within `timeoutMs` (a read-only answer is false). A connection that fails
 * its query may simply have been idle when the server dropped it (restart,
 * pg_terminate_backend) and the pool not have noticed yet: that case is tried
 * again on another connection while time remains. Failing to connect, or
 * running out of time, is the answer.
 */
async function pingPool(pool: pg.Pool, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; attempt < 3; attempt++) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) return false;
    const outcome = await pingOnce(pool, remaining);
    if (outcome === "answered") return true;
    if (outcome !== "query-failed") return false;
  }
  return false;
}

/**
 * One checkout and PING_SQL, racing a timer. On timeout the connection is
 * destroyed (a hung socket must not go back to the pool); a checkout that
 * completes after the timeout is returned unused.
 */
async function pingOnce(pool: pg.Pool, timeoutMs: number): Promise<PingOutcome> {
  let timedOut = false;
  let client: pg.PoolClient | undefined;
  let released = false;
  const release = (destroy: boolean) => {
    if (!client || released) return;
    released = true;
    client.release(destroy ? new Error("ping failed") : undefined);
  };

  const attempt = (async (): Promise<PingOutcome> => {
    let checkedOut: pg.PoolClient;
    try {
      checkedOut = await pool.connect();
    } catch {
      return "connect-failed";
    }
    if (timedOut) {
      checkedOut.release();
      return "timed-out";
    }
    client = checkedOut;
    let readOnly: boolean;
    try {
      const { rows } = await checkedOut.query<{ read_only: boolean }>(PING_SQL);
      readOnly = rows[0]?.read_only === true;
    } catch {
      release(true);
      return "query-failed";
    }
    release(false);
    return readOnly ? "read-only" : "answered";
  })();

  const timer = delay(timeoutMs);
  const outcome = await Promise.race([attempt, timer.promise.then((): PingOutcome => "timed-out")]);
  timer.cancel();
  if (outcome === "timed-out") {
    timedOut = true;
    release(true);
  }
  return outcome;
}

async function openPglite(dataDir: string, options: CreateDatabaseOptions): Promise<Database> {
  if (!dataDir.includes("://")) await mkdir(dataDir, { recursive: true });
  return wrapPglite(await PGlite.create(dataDir), options);
}

/** A Database over an already open PGlite instance, which it then owns (close() closes it). */
export function wrapPglite(pglite: PGlite, options: Omit<CreateDatabaseOptions, "databaseUrl">): Database {
  const logger = options.logger ?? consoleLogger;
  const driver: Driver = { kind: "pglite", pglite, beforeClose: [] };
  const refusals = writeRefusals();
  // PGlite's errors carry the SQLSTATE too: a refused write (read-only, disk
  // full) becomes DatabaseUnavailableError as on PostgreSQL.
  const unavailable = (error: unknown): never => {
    throw refusals.note(asUnavailable(error));
  };

  const db: Database = {
    kind: "pglite",
    poolStats: () => null,
    query: async <Row>(sql: string, params: readonly unknown[] = []) =>
      (await pglite.query<Row>(sql, params as unknown[]).catch(unavailable)).rows,
    transaction: (work) =>
      pglite
        .transaction(async (tx) => {
          const ended = commitTracker();
          const query = async <Row>(sql: string, params: readonly unknown[] = []) =>
            (await tx.query<Row>(sql, params as unknown[]).catch(unavailable)).rows;
          const result = await work({
            query: async <Row>(sql: string, params?: readonly unknown[]) => {
              ended.assertOpen();
              return query<Row>(sql, params);
            },
            // Committed here, as on PostgreSQL (PGlite's own COMMIT or
            // ROLLBACK at the end then finds no transaction, and says so
            // only as a warning).
            queryAndCommit: <Row>(sql: string, params?: readonly unknown[]) =>
              ended.commit(async () => {
                const rows = await query<Row>(sql, params);
                await tx.exec("COMMIT").catch(unavailable);
                return rows;
              }),
          });
          // The work went on after its commit failed: the transaction is
          // aborted, and PGlite would take its COMMIT for an error.
          if (ended.state === "failed") await tx.rollback();
          return result;
        })
        .catch(unavailable),
    migrate: () => migratePglite(pglite, { logger, migrationsDir: options.migrationsDir }),
    ping: async (timeoutMs = DEFAULT_PING_TIMEOUT_MS) => {
      if (pglite.closed || refusals.recent()) return false;
      const timer = delay(timeoutMs);
      try {
        const answered = pglite.query<{ read_only: boolean }>(PING_SQL).then(
          ({ rows }) => rows[0]?.read_only !== true,
          () => false,
        );
        return await Promise.race([answered, timer.promise]);
      } catch {
        return false;
      } finally {
        timer.cancel();
      }
    },
    close: once(async () => {
      await runBeforeClose(driver, logger);
      if (!pglite.closed) await pglite.close();
    }),
  };
  sessionRunners.set(db, (work) => work(pgliteSession(pglite)));
  drivers.set(db, driver);
  return db;
}
