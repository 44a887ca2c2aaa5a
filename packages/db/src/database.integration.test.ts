import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from "vitest";
import {
  createDatabase,
  driverOf,
  isStatementRefusal,
  STATEMENT_REFUSED,
  unnamedForFirst,
} from "./database.ts";
import {
  availableBackends,
  createDatabaseProxy,
  createPostgresTestDatabase,
  createTestDatabase,
  type PostgresTestDatabase,
  type TestDatabase,
  testPostgresAdminUrl,
} from "./testing/index.ts";
import { type PrismaDatabase, withPrisma } from "./testing/prisma.ts";
import { DatabaseUnavailableError, isDatabaseUnavailable } from "./unavailable.ts";

const backends = await availableBackends();
const quiet = { info() {}, warn() {}, error() {} };

/**
 * "Fails fast" bound for a failure that would otherwise wait for a 30 s
 * timeout: generous, so a busy machine never trips it.
 */
const FAST_MS = 10_000;

/** Resolves with how long `promise` took, in ms. */
async function timed<T>(promise: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await promise;
  return { value, ms: performance.now() - started };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

it("createDatabase needs a database URL or a PGlite directory", async () => {
  await expect(createDatabase({})).rejects.toThrow(/databaseUrl or pgliteDataDir/);
});

describe.each(backends)("createDatabase on %s", (kind) => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await createTestDatabase(kind);
  });
  afterAll(async () => {
    await test?.drop();
  });

  it("reports its kind and answers ping", async () => {
    expect(test.db.kind).toBe(kind);
    expect(await test.db.ping()).toBe(true);
  });

  it("serves Prisma queries and interactive transactions", async () => {
    const { prisma } = test.db;
    await prisma.$transaction(async (tx) => {
      await tx.project.create({ data: { id: "prj_tx" } });
      await tx.apiKey.create({
        data: { id: "key_tx", projectId: "prj_tx", mode: "test", keyHash: "hash_tx", prefix: "sk_test_" },
      });
    });
    const project = await prisma.project.findUniqueOrThrow({
      where: { id: "prj_tx" },
      include: { apiKeys: true },
    });
    expect(project.creditBalance).toBe(0);
    expect(project.createdAt).toBeInstanceOf(Date);
    expect(project.apiKeys.map((key) => key.mode)).toEqual(["test"]);
    await prisma.project.delete({ where: { id: "prj_tx" } });
    expect(await prisma.apiKey.count()).toBe(0); // onDelete: Cascade
  });

  it("query() runs one parameterised statement and returns its rows", async () => {
    const rows = await test.db.query<{ n: number; s: string }>(
      "SELECT CAST($1 AS integer) + 1 AS n, $2 AS s",
      [41, "x"],
    );
    expect(rows).toEqual([{ n: 42, s: "x" }]);
  });

  it("transaction() commits what its work wrote and returns its value", async () => {
    const value = await test.db.transaction(async (sql) => {
      await sql.query("INSERT INTO projects (id) VALUES ($1)", ["prj_commit"]);
      // The same transaction sees its own write.
      const [row] = await sql.query<{ n: number }>("SELECT count(*)::int AS n FROM projects WHERE id = $1", [
        "prj_commit",
      ]);
      return row?.n;
    });
    expect(value).toBe(1);
    expect(await test.db.query("SELECT id FROM projects WHERE id = $1", ["prj_commit"])).toEqual([
      { id: "prj_commit" },
    ]);
    await test.db.query("DELETE FROM projects WHERE id = $1", ["prj_commit"]);
  });

  it("transaction() rolls everything back when its work throws, and rethrows", async () => {
    const failure = new Error("refused halfway");
    await expect(
      test.db.transaction(async (sql) => {
        await sql.query("INSERT INTO projects (id) VALUES ($1)", ["prj_rollback"]);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await test.db.query("SELECT id FROM projects WHERE id = $1", ["prj_rollback"])).toEqual([]);
    // A statement that fails inside rolls back too, and the database stays usable.
    await expect(
      test.db.transaction(async (sql) => {
        await sql.query("INSERT INTO projects (id) VALUES ($1)", ["prj_rollback"]);
        await sql.query("INSERT INTO projects (id) VALUES ($1)", ["prj_rollback"]);
      }),
    ).rejects.toThrow();
    expect(await test.db.query("SELECT id FROM projects WHERE id = $1", ["prj_rollback"])).toEqual([]);
    expect(await test.db.query<{ one: number }>("SELECT 1 AS one")).toEqual([{ one: 1 }]);
  });

  it("transaction() keeps its statements on one session, invisible to others until it commits", async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let inserted = () => {};
    const insertedPromise = new Promise<void>((resolve) => {
      inserted = resolve;
    });
    const transaction = test.db.transaction(async (sql) => {
      await sql.query("INSERT INTO projects (id) VALUES ($1)", ["prj_isolated"]);
      // A transaction-local setting holds for the next statement: one session.
      await sql.query("SELECT set_config('application_name', 'sms-tx-test', true)");
      const [setting] = await sql.query<{ name: string }>(
        "SELECT current_setting('application_name') AS name",
      );
      inserted();
      await held;
      return setting?.name;
    });
    await insertedPromise;
    // Outside the transaction: PostgreSQL answers at once without the row;
    // PGlite (one session) answers only after the commit, with it.
    const outside = test.db.query<{ n: number }>("SELECT count(*)::int AS n FROM projects WHERE id = $1", [
      "prj_isolated",
    ]);
    if (kind === "postgres") {
      expect(await outside).toEqual([{ n: 0 }]);
      release();
    } else {
      setTimeout(release, 50);
      expect(await outside).toEqual([{ n: 1 }]);
    }
    expect(await transaction).toBe("sms-tx-test");
    await test.db.query("DELETE FROM projects WHERE id = $1", ["prj_isolated"]);
  });

  it("queryAndCommit ends the transaction with its statement: committed with what came before, its parameters as they would be bound; nothing may follow it", async () => {
    const at = new Date("2026-11-28T10:11:12.345Z");
    const note = "it's \\ $1 -- not a comment /* nor this */";
    const rows = await test.db.transaction(async (sql) => {
      await sql.query("INSERT INTO projects (id) VALUES ($1)", ["prj_qc_a"]);
      const last = await sql.queryAndCommit<{
        id: string;
        note: string;
        at: Date;
        n: number;
        yes: boolean;
        none: null;
      }>(
        `INSERT INTO projects (id) VALUES ($1) -- a comment: $2
         RETURNING id, CAST($2 AS text) AS note, CAST($3 AS timestamptz) AS at, CAST($4 AS integer) + 1 AS n,
                   CAST($5 AS boolean) AS yes, CAST($6 AS text) AS none, '$1' AS quoted`,
        ["prj_qc_b", note, at, 41, true, null],
      );
      await expect(sql.query("SELECT 1")).rejects.toThrow(/no statement may follow queryAndCommit/);
      await expect(sql.queryAndCommit("SELECT 1")).rejects.toThrow(/no statement may follow queryAndCommit/);
      return last;
    });
    expect(rows).toEqual([{ id: "prj_qc_b", note, at, n: 42, yes: true, none: null, quoted: "$1" }]);
    const kept = await test.db.query<{ id: string }>(
      "SELECT id FROM projects WHERE id IN ('prj_qc_a', 'prj_qc_b') ORDER BY id",
    );
    expect(kept).toEqual([{ id: "prj_qc_a" }, { id: "prj_qc_b" }]);
    await test.db.query("DELETE FROM projects WHERE id IN ('prj_qc_a', 'prj_qc_b')");
  });

  it("queryAndCommit whose statement refuses (sms_refuse, SQLSTATE SR001) keeps nothing of the transaction, and the connection serves the next one", async () => {
    const refused = test.db.transaction(async (sql) => {
      await sql.query("INSERT INTO projects (id) VALUES ($1)", ["prj_qc_c"]);
      await sql.queryAndCommit("SELECT CASE WHEN $1 > 0 THEN sms_refuse($2) END", [1, '{"why":"a test"}']);
    });
    await expect(refused).rejects.toMatchObject({ code: "SR001", detail: '{"why":"a test"}' });
    expect(isDatabaseUnavailable(await refused.catch((error: unknown) => error))).toBe(false);
    // Work that goes on after its commit failed: still nothing kept.
    const wentOn = await test.db.transaction(async (sql) => {
      await sql.query("INSERT INTO projects (id) VALUES ($1)", ["prj_qc_d"]);
      await sql.queryAndCommit("SELECT sms_refuse('no')").catch(() => undefined);
      return "went on";
    });
    expect(wentOn).toBe("went on");
    expect(await test.db.query("SELECT id FROM projects WHERE id IN ('prj_qc_c', 'prj_qc_d')")).toEqual([]);
    expect(
      await test.db.transaction(async (sql) => {
        await sql.query("INSERT INTO projects (id) VALUES ($1)", ["prj_qc_e"]);
        return sql.queryAndCommit<{ n: number }>("SELECT count(*)::int AS n FROM projects WHERE id = $1", [
          "prj_qc_e",
        ]);
      }),
    ).toEqual([{ n: 1 }]);
    expect(await test.db.query("SELECT id FROM projects WHERE id = 'prj_qc_e'")).toEqual([
      { id: "prj_qc_e" },
    ]);
    await test.db.query("DELETE FROM projects WHERE id = 'prj_qc_e'");
  });

  it("queryAndCommit has committed once it returns: a throw after it undoes nothing", async () => {
    const after = new Error("after the commit");
    await expect(
      test.db.transaction(async (sql) => {
        await sql.query("INSERT INTO projects (id) VALUES ($1)", ["prj_qc_f"]);
        await sql.queryAndCommit("INSERT INTO projects (id) VALUES ($1)", ["prj_qc_g"]);
        throw after;
      }),
    ).rejects.toBe(after);
    expect(
      await test.db.query("SELECT id FROM projects WHERE id IN ('prj_qc_f', 'prj_qc_g') ORDER BY id"),
    ).toEqual([{ id: "prj_qc_f" }, { id: "prj_qc_g" }]);
    await test.db.query("DELETE FROM projects WHERE id IN ('prj_qc_f', 'prj_qc_g')");
    expect(
      await test.db.transaction((sql) => sql.queryAndCommit<{ one: number }>("SELECT 1 AS one")),
    ).toEqual([{ one: 1 }]);
  });

  it("lets a transaction wait longer than Prisma's 2 s default for a busy connection", async () => {
    // One connection (PGlite has only one): the second transaction queues
    // behind the first for about 2.5 s and must then run, not fail with P2028.
    const db = test.databaseUrl
      ? withPrisma(await createDatabase({ databaseUrl: test.databaseUrl, poolSize: 1, logger: quiet }))
      : test.db;
    if (db !== test.db) onTestFinished(() => db.close());
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started = () => {};
    const holding = new Promise<void>((resolve) => {
      started = resolve;
    });
    const first = db.prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT 1`;
      started();
      await held;
    });
    await holding;
    const second = timed(
      db.prisma.$transaction((tx) => tx.$queryRaw<Array<{ one: number }>>`SELECT 1 AS one`),
    );
    setTimeout(release, 2_500);
    await first;
    const { value, ms } = await second;
    expect(value).toEqual([{ one: 1 }]);
    expect(ms).toBeGreaterThan(2_000);
  });

  /** Makes the test database refuse writes (as after a failover) or take them again. */
  async function setReadOnly(on: boolean): Promise<void> {
    const value = on ? "on" : "off";
    if (kind === "pglite") {
      // PGlite has one session: the setting reaches every statement at once.
      await test.db.query(`SET default_transaction_read_only = ${value}`);
      return;
    }
    const url = new URL(test.databaseUrl ?? "");
    const name = url.pathname.slice(1);
    url.pathname = "/postgres";
    const admin = new pg.Client({ connectionString: url.toString() });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE "${name}" SET default_transaction_read_only = ${value}`);
      // Sessions read the setting when they start: end the pool's, it opens new ones.
      await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
        [name],
      );
    } finally {
      await admin.end();
    }
  }

  /** A statement that writes (a project row nobody reads). */
  const write = () =>
    test.db.query("INSERT INTO projects (id, created_at, updated_at) VALUES ($1, now(), now())", [
      `prj_w${Math.random().toString(36).slice(2, 14)}`,
    ]);

  /** The first write's error (null: it worked), retried past the pool's terminated sessions. */
  async function refusedWrite(): Promise<unknown> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const error = await write().then(
        () => null,
        (failure: unknown) => failure,
      );
      if (error === null) return null;
      // A pooled session ended by the switch (connection_lost, or 57P01: server_unavailable) is retried.
      const ended =
        error instanceof DatabaseUnavailableError &&
        ["connection_lost", "server_unavailable"].includes(error.reason);
      if (!ended) return error;
    }
    return null;
  }

  it("a read-only database (SQLSTATE 25006) is unavailable: writes fail as an outage and ping is false until it takes writes again", async () => {
    await setReadOnly(true);
    try {
      const error = await refusedWrite();
      expect(error).toBeInstanceOf(DatabaseUnavailableError);
      expect((error as DatabaseUnavailableError).reason).toBe("read_only");
      expect(await test.db.ping()).toBe(false);
      // Reads still work.
      expect(await test.db.query<{ one: number }>("SELECT 1 AS one")).toEqual([{ one: 1 }]);
    } finally {
      await setReadOnly(false);
    }
    await expect.poll(() => test.db.ping(), { timeout: 15_000, interval: 250 }).toBe(true);
    await expect(refusedWrite()).resolves.toBeNull();
  });

  it("a full disk (SQLSTATE 53100) is unavailable: the write fails as an outage and ping is false while writes fail", async () => {
    await test.db.query(`CREATE OR REPLACE FUNCTION test_disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'could not extend file' USING ERRCODE = '53100'; END $$`);
    await test.db.query(
      "CREATE TRIGGER test_disk_full BEFORE INSERT ON projects FOR EACH STATEMENT EXECUTE FUNCTION test_disk_full()",
    );
    try {
      const error = await write().then(
        () => null,
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(DatabaseUnavailableError);
      expect((error as DatabaseUnavailableError).reason).toBe("disk_full");
      expect(await test.db.ping()).toBe(false);
    } finally {
      await test.db.query("DROP TRIGGER IF EXISTS test_disk_full ON projects");
    }
    await expect.poll(() => test.db.ping(), { timeout: 15_000, interval: 250 }).toBe(true);
  });

  it("close() is idempotent, after which ping is false and does not throw", async () => {
    const own = await createTestDatabase(kind);
    onTestFinished(() => own.drop());
    await own.db.close();
    await own.db.close();
    expect(await own.db.ping()).toBe(false);
  });
});

describe("createDatabase on PGlite in a directory", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "sms-pglite-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("creates the directory and keeps the data across close and reopen", async () => {
    const dataDir = join(dir, "nested", "pglite");
    const first = withPrisma(await createDatabase({ pgliteDataDir: dataDir, logger: quiet }));
    try {
      expect((await first.migrate()).applied).toContain("20261122000000_init");
      await first.prisma.project.create({ data: { id: "prj_persisted", sender: "ACME" } });
    } finally {
      await first.close();
    }

    const second = withPrisma(await createDatabase({ pgliteDataDir: dataDir, logger: quiet }));
    try {
      expect(await second.migrate()).toEqual({ applied: [] });
      const project = await second.prisma.project.findUnique({ where: { id: "prj_persisted" } });
      expect(project?.sender).toBe("ACME");
      expect(await second.ping()).toBe(true);
    } finally {
      await second.close();
    }
    expect(await second.ping()).toBe(false);
  });
});

describe.runIf(backends.includes("postgres"))("createDatabase on PostgreSQL: prepared statements", () => {
  let pgTest: PostgresTestDatabase;
  beforeAll(async () => {
    pgTest = await createPostgresTestDatabase();
  });
  afterAll(() => pgTest?.drop());

  /** The names prepared on the one connection of a pool of size 1, after a few statements. */
  async function preparedNames(preparedStatements: boolean): Promise<string[]> {
    const db = withPrisma(
      await createDatabase({
        databaseUrl: pgTest.databaseUrl,
        poolSize: 1,
        preparedStatements,
        logger: quiet,
      }),
    );
    try {
      await db.query("SELECT CAST($1 AS integer) AS n", [1]);
      await db.transaction((sql) => sql.query("SELECT CAST($1 AS text) AS t", ["x"]));
      const rows = await db.query<{ name: string }>("SELECT name FROM pg_prepared_statements ORDER BY name");
      return rows.map((row) => row.name);
    } finally {
      await db.close();
    }
  }

  it("names each statement by default (parsed and planned once per connection)", async () => {
    expect((await preparedNames(true)).length).toBeGreaterThanOrEqual(2);
  });

  it("prepares nothing by name when turned off (behind a transaction-mode pooler)", async () => {
    expect(await preparedNames(false)).toEqual([]);
  });

  it("runs a statement marked unnamedForFirst(sql, 3) unnamed three times in this process, then prepared", async () => {
    const sql = unnamedForFirst("SELECT CAST($1 AS integer) + 1 AS unnamed_first", 3);
    const db = await createDatabase({ databaseUrl: pgTest.databaseUrl, poolSize: 1, logger: quiet });
    try {
      const prepared = async () =>
        (
          await db.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = $1",
            [sql],
          )
        )[0]?.n;
      const seen: Array<number | undefined> = [];
      for (let i = 0; i < 5; i++) {
        expect((await db.query<{ unnamed_first: number }>(sql, [i]))[0]?.unnamed_first).toBe(i + 1);
        seen.push(await prepared());
      }
      expect(seen).toEqual([0, 0, 0, 1, 1]);
    } finally {
      await db.close();
    }
  });
});

describe.runIf(backends.includes("postgres"))(
  "createDatabase on PostgreSQL: checking out a connection",
  () => {
    let pgTest: PostgresTestDatabase;
    beforeAll(async () => {
      pgTest = await createPostgresTestDatabase();
    });
    afterAll(() => pgTest?.drop());

    async function openPool(poolSize: number) {
      const db = await createDatabase({ databaseUrl: pgTest.databaseUrl, poolSize, logger: quiet });
      onTestFinished(() => db.close());
      const driver = driverOf(db);
      if (driver.kind !== "postgres") throw new Error("expected PostgreSQL");
      return { db, pool: driver.pool };
    }

    it("hands an idle connection out without pg-pool's connect() (whose next tick waits for the event loop's turn) and takes it back on release", async () => {
      const { db, pool } = await openPool(2);
      await db.query("SELECT 1"); // opens the pool's first connection
      const connect = vi.spyOn(pool, "connect");
      const backends = new Set<number>();
      for (let i = 0; i < 5; i++) {
        backends.add((await db.query<{ pid: number }>("SELECT pg_backend_pid() AS pid"))[0]?.pid ?? 0);
      }
      await db.transaction(async (sql) => {
        backends.add((await sql.query<{ pid: number }>("SELECT pg_backend_pid() AS pid"))[0]?.pid ?? 0);
      });
      expect(connect).not.toHaveBeenCalled();
      expect(backends.size).toBe(1);
      expect({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }).toEqual({
        total: 1,
        idle: 1,
        waiting: 0,
      });
    });

    it("with no idle connection, or a caller queued first, waits in pg-pool's queue and is served in order", async () => {
      const { db, pool } = await openPool(1);
      await db.query("SELECT 1");
      const connect = vi.spyOn(pool, "connect");
      const order: string[] = [];
      // pg-pool's own connect() with the connection idle: queued, served on its next tick.
      const direct = pool.connect().then((client) => {
        order.push("direct");
        return client;
      });
      // Asked in the same turn: the connection is still idle, but someone is queued before it.
      const queued = db.query<{ who: string }>("SELECT 'queued' AS who").then((rows) => {
        order.push(rows[0]?.who ?? "");
      });
      const client = await direct;
      const later = db.query<{ who: string }>("SELECT 'later' AS who").then((rows) => {
        order.push(rows[0]?.who ?? "");
      });
      expect(pool.waitingCount).toBe(2);
      client.release();
      await Promise.all([queued, later]);
      expect(order).toEqual(["direct", "queued", "later"]);
      expect(connect).toHaveBeenCalledTimes(3);
      expect(pool.totalCount).toBe(1);
    });

    it("a statement's own refusal (sms_refuse, SR001) gives its connection back to the pool; any other failed statement's connection is closed", async () => {
      const { db } = await openPool(1);
      const pid = async () => (await db.query<{ pid: number }>("SELECT pg_backend_pid() AS pid"))[0]?.pid;
      const first = await pid();
      const refusal = await db
        .query("SELECT CASE WHEN $1 > 0 THEN sms_refuse('a test') END", [1])
        .catch((error: unknown) => error);
      expect(refusal).toMatchObject({ code: STATEMENT_REFUSED });
      expect(isStatementRefusal(refusal)).toBe(true);
      expect(await pid()).toBe(first);
      const failure = await db.query("SELECT 1 / 0").catch((error: unknown) => error);
      expect(failure).toMatchObject({ code: "22012" });
      expect(isStatementRefusal(failure)).toBe(false);
      expect(await pid()).not.toBe(first);
    });
  },
);

describe.runIf(backends.includes("postgres"))("createDatabase on PostgreSQL when the server is gone", () => {
  it("ping is false at once for a port nobody listens on, and queries fail fast", async () => {
    const url = new URL(testPostgresAdminUrl());
    url.port = String(await closedPort());
    const db = withPrisma(await createDatabase({ databaseUrl: url.toString(), logger: quiet }));
    onTestFinished(() => db.close());
    const { value, ms } = await timed(db.ping());
    expect(value).toBe(false);
    expect(ms).toBeLessThan(FAST_MS);
    const query = await timed(
      db.prisma.project.count().then(
        () => "answered",
        () => "failed",
      ),
    );
    expect(query.value).toBe("failed");
    expect(query.ms).toBeLessThan(FAST_MS);
  });

  it("survives its connections being terminated, and is false once the database is dropped", async () => {
    const server: PostgresTestDatabase = await createPostgresTestDatabase();
    onTestFinished(() => server.drop());
    const warnings: string[] = [];
    const db = withPrisma(
      await createDatabase({
        databaseUrl: server.databaseUrl,
        logger: { ...quiet, warn: (_fields, message) => warnings.push(message) },
      }),
    );
    onTestFinished(() => db.close());
    // Fill the pool with idle connections.
    await Promise.all(Array.from({ length: 3 }, () => db.prisma.project.count()));

    const admin = new pg.Client({ connectionString: testPostgresAdminUrl() });
    await admin.connect();
    onTestFinished(() => admin.end());
    const databaseName = new URL(server.databaseUrl).pathname.slice(1);
    const { rows } = await admin.query(
      "SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity WHERE datname = $1",
      [databaseName],
    );
    expect(rows.length).toBeGreaterThan(0);
    // The pool hears about it asynchronously, drops (and logs) the dead
    // connections and reconnects: not fatal. (A dead connection ping gets
    // before the pool noticed is retried on another one.)
    for (let waited = 0; warnings.length < rows.length && waited < 3_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(warnings).toContain("an idle database connection was closed");
    expect(await db.ping()).toBe(true);
    expect(await db.prisma.project.count()).toBe(0);

    await admin.query(`DROP DATABASE "${databaseName}" WITH (FORCE)`);
    const { value, ms } = await timed(db.ping());
    expect(value).toBe(false);
    expect(ms).toBeLessThan(FAST_MS);
    await expect(db.prisma.project.count()).rejects.toThrow();
  });

  it("ping is false within its timeout when the connection is cut silently", async () => {
    const server = await createPostgresTestDatabase();
    onTestFinished(() => server.drop());
    const proxy = await createDatabaseProxy(server.databaseUrl);
    onTestFinished(() => proxy.close());
    // Default timeouts: only ping's own timer can end its wait.
    const db: PrismaDatabase = withPrisma(
      await createDatabase({
        databaseUrl: proxy.urlFor(server.databaseUrl),
        logger: quiet,
      }),
    );
    onTestFinished(() => db.close());
    // Short ones, to show requests do not hang either.
    const impatient: PrismaDatabase = withPrisma(
      await createDatabase({
        databaseUrl: proxy.urlFor(server.databaseUrl),
        connectionTimeoutMs: 1_000,
        queryTimeoutMs: 1_000,
        logger: quiet,
      }),
    );
    onTestFinished(() => impatient.close());
    expect(await db.ping()).toBe(true);
    await impatient.query("SELECT count(*) FROM projects"); // leaves an idle connection in its pool

    proxy.freeze();
    const ping = await timed(db.ping());
    expect(ping.value).toBe(false);
    expect(ping.ms).toBeGreaterThanOrEqual(1_400);
    expect(ping.ms).toBeLessThan(FAST_MS);

    // The hung connection was discarded; the next ping waits for a new one in
    // vain, and its own timer ends the wait before the pool's 5 s connect timeout.
    const shortPing = await timed(db.ping(300));
    expect(shortPing.value).toBe(false);
    expect(shortPing.ms).toBeLessThan(4_000);

    // An idle connection that no longer answers hits the query timeout, a new
    // one the connection timeout: the request fails instead of hanging.
    // (The service's statements, `query`: the testing entry's Prisma client has no client-side deadline.)
    for (let attempt = 0; attempt < 2; attempt++) {
      const query = await timed(
        impatient.query("SELECT count(*) FROM projects").then(
          () => "answered",
          (error: unknown) => (error instanceof DatabaseUnavailableError ? error.reason : "other"),
        ),
      );
      expect(["timeout", "connect_failed"]).toContain(query.value);
      expect(query.ms).toBeLessThan(FAST_MS);
    }
    expect(impatient.poolStats()?.total).toBe(0);
  });

  it("ping never reports connection details", async () => {
    const url = new URL(testPostgresAdminUrl());
    url.port = String(await closedPort());
    url.password = "secret-password";
    const db = withPrisma(await createDatabase({ databaseUrl: url.toString(), logger: quiet }));
    onTestFinished(() => db.close());
    const result = await db.ping(500);
    expect(result).toBe(false);
    expect(JSON.stringify(result)).not.toContain("secret");
  });
});

/** Resolves how `promise` settled, or "pending" if it had not within `ms` (a generous guard, not a measurement). */
async function settlesWithin<T>(
  promise: Promise<T>,
  ms: number,
): Promise<"resolved" | "rejected" | "pending"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const guard = new Promise<"pending">((resolve) => {
    timer = setTimeout(() => resolve("pending"), ms);
  });
  const settled = promise.then(
    () => "resolved" as const,
    () => "rejected" as const,
  );
  try {
    return await Promise.race([settled, guard]);
  } finally {
    clearTimeout(timer);
  }
}

describe.runIf(backends.includes("postgres"))("queryAndCommit on PostgreSQL", () => {
  it("sends the statement with its COMMIT: the transaction is committed and the statement's row lock free before its answer reaches this process", async () => {
    const server = await createPostgresTestDatabase();
    onTestFinished(() => server.drop());
    const proxy = await createDatabaseProxy(server.databaseUrl);
    onTestFinished(() => proxy.close());
    const db = await createDatabase({
      databaseUrl: proxy.urlFor(server.databaseUrl),
      poolSize: 1,
      logger: quiet,
    });
    onTestFinished(() => db.close());
    const direct = new pg.Client({ connectionString: server.databaseUrl });
    await direct.connect();
    onTestFinished(() => direct.end());
    await direct.query("INSERT INTO projects (id, credit_balance) VALUES ('prj_held', 5)");

    let answered = false;
    const transaction = db.transaction(async (sql) => {
      await sql.query("INSERT INTO projects (id) VALUES ($1)", ["prj_held_first"]);
      proxy.holdAnswers();
      const rows = await sql.queryAndCommit<{ credit_balance: number }>(
        "UPDATE projects SET credit_balance = credit_balance - CAST($1 AS integer) WHERE id = $2 RETURNING credit_balance",
        [2, "prj_held"],
      );
      answered = true;
      return rows;
    });
    // Another session sees both writes committed while the answer is held
    // back. (Had the COMMIT waited for the answer, this would never come.)
    const guard = Date.now() + FAST_MS;
    for (;;) {
      const { rows } = await direct.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM projects WHERE id = 'prj_held_first'",
      );
      if (rows[0]?.n === 1) break;
      if (Date.now() > guard)
        throw new Error("the transaction did not commit while its answer was held back");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const locked = await direct.query(
      "SELECT credit_balance FROM projects WHERE id = 'prj_held' FOR UPDATE NOWAIT",
    );
    expect(locked.rows).toEqual([{ credit_balance: 3 }]);
    expect(answered).toBe(false);
    proxy.releaseAnswers();
    expect(await transaction).toEqual([{ credit_balance: 3 }]);
    expect(await db.query("SELECT id FROM projects WHERE id = 'prj_held_first'")).toEqual([
      { id: "prj_held_first" },
    ]);
  });
});

describe.runIf(backends.includes("postgres"))(
  "database faults end in DatabaseUnavailableError, within the deadlines",
  () => {
    // Deadlines of half a second; the guard of 10 s is far beyond them and far
    // below the 30 s a statement used to wait without one.
    const DEADLINES = { connectionTimeoutMs: 500, statementTimeoutMs: 500 } as const;
    const GUARD_MS = 10_000;

    async function setup() {
      const server = await createPostgresTestDatabase();
      onTestFinished(() => server.drop());
      const proxy = await createDatabaseProxy(server.databaseUrl);
      onTestFinished(() => proxy.close());
      const db = withPrisma(
        await createDatabase({
          databaseUrl: proxy.urlFor(server.databaseUrl),
          poolSize: 2,
          ...DEADLINES,
          logger: quiet,
        }),
      );
      onTestFinished(() => db.close());
      return { db, proxy };
    }

    async function failure(promise: Promise<unknown>): Promise<unknown> {
      return promise.then(
        () => {
          throw new Error("expected the statement to fail");
        },
        (error: unknown) => error,
      );
    }

    it("a refused connection is DatabaseUnavailableError (connect_failed), statements and transactions alike", async () => {
      const url = new URL(testPostgresAdminUrl());
      url.port = String(await closedPort());
      const db = withPrisma(
        await createDatabase({ databaseUrl: url.toString(), ...DEADLINES, logger: quiet }),
      );
      onTestFinished(() => db.close());
      const error = await failure(db.query("SELECT 1"));
      expect(error).toBeInstanceOf(DatabaseUnavailableError);
      expect((error as DatabaseUnavailableError).reason).toBe("connect_failed");
      expect((error as Error).message).not.toContain(url.port);
      const inTransaction = await failure(db.transaction((sql) => sql.query("SELECT 1")));
      expect(inTransaction).toBeInstanceOf(DatabaseUnavailableError);
    });

    it("a frozen network path fails statements and transactions at their deadline, not after 30 s", async () => {
      const { db, proxy } = await setup();
      await Promise.all([db.query("SELECT 1"), db.query("SELECT 1")]); // two idle connections in the pool
      proxy.freeze();
      const statement = db.query("SELECT 1");
      expect(await settlesWithin(statement, GUARD_MS)).toBe("rejected");
      const timedOut = await failure(statement);
      expect(timedOut).toBeInstanceOf(DatabaseUnavailableError);
      expect(["timeout", "connect_failed"]).toContain((timedOut as DatabaseUnavailableError).reason);

      const transaction = db.transaction(async (sql) => {
        await sql.query("SELECT 1");
        await sql.query("SELECT 2");
      });
      expect(await settlesWithin(transaction, GUARD_MS)).toBe("rejected");
      expect(isDatabaseUnavailable(await failure(transaction))).toBe(true);

      // New connections time out too.
      const fresh = db.query("SELECT 3");
      expect(await settlesWithin(fresh, GUARD_MS)).toBe("rejected");
      expect(await failure(fresh)).toBeInstanceOf(DatabaseUnavailableError);

      // Once the path recovers, the pool serves again.
      proxy.thaw();
      expect(await db.query<{ one: number }>("SELECT 1 AS one")).toEqual([{ one: 1 }]);
    });

    it("a stopped server is DatabaseUnavailableError at once; the pool recovers when it is back", async () => {
      const { db, proxy } = await setup();
      await db.query("SELECT 1");
      await proxy.stop();
      for (const start of [
        () => db.query("SELECT 1"),
        () => db.transaction((sql) => sql.query("SELECT 1")),
      ]) {
        const attempt = start();
        expect(await settlesWithin(attempt, GUARD_MS)).toBe("rejected");
        expect(await failure(attempt)).toBeInstanceOf(DatabaseUnavailableError);
      }
      await proxy.start();
      expect(await db.query<{ one: number }>("SELECT 1 AS one")).toEqual([{ one: 1 }]);
    });

    it("the server cancels a statement at statement_timeout; the connection stays usable", async () => {
      const { db } = await setup();
      const error = await failure(db.query("SELECT pg_sleep(5)"));
      expect(error).toBeInstanceOf(DatabaseUnavailableError);
      expect((error as DatabaseUnavailableError).reason).toBe("statement_timeout");
      expect(await db.query<{ one: number }>("SELECT 1 AS one")).toEqual([{ one: 1 }]);
    });

    it("the client's deadline (no statement_timeout): the late statement fails with timeout and its connection is dropped; the others go on", async () => {
      const server = await createPostgresTestDatabase();
      onTestFinished(() => server.drop());
      const db = await createDatabase({
        databaseUrl: server.databaseUrl,
        poolSize: 3,
        queryTimeoutMs: 2_000, // far above a quick statement on a busy machine, far below the sleeps
        logger: quiet,
      });
      onTestFinished(() => db.close());
      await Promise.all([db.query("SELECT 1"), db.query("SELECT 1"), db.query("SELECT 1")]);
      expect(db.poolStats()?.total).toBe(3);
      const slow: Promise<unknown> = db.query("SELECT pg_sleep(20)");
      const slowInTransaction: Promise<unknown> = db.transaction(async (sql) => {
        await sql.query("SELECT 1");
        await sql.query("SELECT pg_sleep(20)");
      });
      // Their failures are taken at once: no rejection waits unhandled while the quick statements run.
      const failures = Promise.all([failure(slow), failure(slowInTransaction)]);
      // Beside them, on the third connection, quick statements are answered, none cut short.
      for (let i = 0; i < 5; i++) expect(await db.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
      // Both rejected (failure() throws for a statement that succeeds) within the guard.
      expect(await settlesWithin(failures, GUARD_MS)).toBe("resolved");
      for (const error of await failures) {
        expect(error).toBeInstanceOf(DatabaseUnavailableError);
        expect((error as DatabaseUnavailableError).reason).toBe("timeout");
      }
      // The two connections whose statements ran late were closed, not put back in the pool.
      expect(db.poolStats()?.total).toBe(1);
      expect(await db.query<{ one: number }>("SELECT 1 AS one")).toEqual([{ one: 1 }]);
    });

    it("an error of the statement itself is not unavailability", async () => {
      const { db } = await setup();
      const syntax = await failure(db.query("SELEC 1"));
      expect(isDatabaseUnavailable(syntax)).toBe(false);
      await db.query("INSERT INTO projects (id) VALUES ('prj_dup')");
      const duplicate = await failure(db.query("INSERT INTO projects (id) VALUES ('prj_dup')"));
      expect(isDatabaseUnavailable(duplicate)).toBe(false);
      expect((duplicate as { code?: string }).code).toBe("23505");
    });
  },
);
