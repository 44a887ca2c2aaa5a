import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import type { Database } from "./database.ts";
import { withSqlSession } from "./database.ts";
import {
  MIGRATION_LOCK_KEY,
  MIGRATIONS_DIR,
  MigrationError,
  migratePglite,
  migratePostgres,
  readMigrations,
} from "./migrator.ts";
import { introspectSchema } from "./testing/schema-check/introspect.ts";
import {
  availableBackends,
  createPostgresTestDatabase,
  createTestDatabase,
  type TestDatabase,
} from "./testing/index.ts";

const backends = await availableBackends();

type MigrationRow = {
  id: string;
  checksum: string;
  finished_at: Date | null;
  migration_name: string;
  logs: string | null;
  rolled_back_at: Date | null;
  started_at: Date;
  applied_steps_count: number;
};

function rowsOf(db: Database): Promise<MigrationRow[]> {
  return withSqlSession(db, (session) =>
    session.query<MigrationRow>("SELECT * FROM _prisma_migrations ORDER BY migration_name"),
  );
}

/** A scratch migrations folder: { name: sql }. */
async function migrationsFolder(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "sms-migrations-"));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  for (const [name, sql] of Object.entries(files)) {
    await mkdir(join(dir, name));
    await writeFile(join(dir, name, "migration.sql"), sql);
  }
  return dir;
}

/** An empty database of `kind` whose migrate() reads `migrationsDir`. */
async function emptyDatabase(kind: "pglite" | "postgres", migrationsDir?: string): Promise<TestDatabase> {
  const test = await createTestDatabase(kind, { migrate: false, migrationsDir });
  onTestFinished(() => test.drop());
  return test;
}

const SCRATCH = {
  "20260101000000_first": "CREATE TABLE first (id integer PRIMARY KEY);\nINSERT INTO first VALUES (1);\n",
  "20260102000000_second": "CREATE TABLE second (id integer PRIMARY KEY REFERENCES first);\n",
  "20260103000000_third": "ALTER TABLE second ADD COLUMN note text;\n",
};

describe.each(backends)("migrator on %s", (kind) => {
  it("applies every migration once, in order, and records it as Prisma does", async () => {
    const { db } = await emptyDatabase(kind);
    const names = (await readMigrations()).map((migration) => migration.name);
    expect(names[0]).toBe("20261122000000_init");

    const first = await db.migrate();
    expect(first.applied).toEqual(names);

    const rows = await rowsOf(db);
    expect(rows.map((row) => row.migration_name)).toEqual(names);
    for (const row of rows) {
      const bytes = await readFile(join(MIGRATIONS_DIR, row.migration_name, "migration.sql"));
      expect(row.checksum).toBe(createHash("sha256").update(bytes).digest("hex"));
      expect(row.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.finished_at!.getTime()).toBeGreaterThanOrEqual(row.started_at.getTime());
      expect(row.rolled_back_at).toBeNull();
      expect(row.logs).toBeNull();
      expect(row.applied_steps_count).toBe(1);
    }

    // Idempotent: nothing pending, nothing recorded twice.
    expect(await db.migrate()).toEqual({ applied: [] });
    expect(await rowsOf(db)).toEqual(rows);
    // And the client works on the migrated schema.
    expect(await db.prisma.project.count()).toBe(0);
  });

  it("creates _prisma_migrations with Prisma's exact columns", async () => {
    const { db } = await emptyDatabase(kind);
    await db.migrate();
    const actual = await withSqlSession(db, (session) => introspectSchema(session));
    expect(actual.tables._prisma_migrations).toEqual({
      id: { type: "character varying(36)", nullable: false, default: null },
      checksum: { type: "character varying(64)", nullable: false, default: null },
      finished_at: { type: "timestamp with time zone", nullable: true, default: null },
      migration_name: { type: "character varying(255)", nullable: false, default: null },
      logs: { type: "text", nullable: true, default: null },
      rolled_back_at: { type: "timestamp with time zone", nullable: true, default: null },
      started_at: { type: "timestamp with time zone", nullable: false, default: "now()" },
      applied_steps_count: { type: "integer", nullable: false, default: "0" },
    });
    expect(actual.constraints._prisma_migrations_pkey).toMatchObject({
      type: "PRIMARY KEY",
      columns: ["id"],
    });
  });

  it("applies only what is new", async () => {
    const dir = await migrationsFolder({ "20260101000000_first": SCRATCH["20260101000000_first"] });
    const { db } = await emptyDatabase(kind, dir);
    expect((await db.migrate()).applied).toEqual(["20260101000000_first"]);
    await mkdir(join(dir, "20260102000000_second"));
    await writeFile(join(dir, "20260102000000_second", "migration.sql"), SCRATCH["20260102000000_second"]);
    expect((await db.migrate()).applied).toEqual(["20260102000000_second"]);
    expect((await rowsOf(db)).map((row) => row.migration_name)).toEqual([
      "20260101000000_first",
      "20260102000000_second",
    ]);
  });

  it("refuses to run when an applied migration's file changed", async () => {
    const dir = await migrationsFolder(SCRATCH);
    const { db } = await emptyDatabase(kind, dir);
    await db.migrate();
    await writeFile(join(dir, "20260102000000_second", "migration.sql"), "-- edited\n");
    const failure = db.migrate();
    await expect(failure).rejects.toBeInstanceOf(MigrationError);
    await expect(failure).rejects.toThrow(/20260102000000_second was modified after it was applied/);
  });

  it("accepts the same file with CRLF line endings (a Windows checkout)", async () => {
    const dir = await migrationsFolder(SCRATCH);
    const { db } = await emptyDatabase(kind, dir);
    await db.migrate();
    const file = join(dir, "20260101000000_first", "migration.sql");
    await writeFile(file, (await readFile(file, "utf8")).replaceAll("\n", "\r\n"));
    expect(await db.migrate()).toEqual({ applied: [] });
  });

  it("rolls a failing migration back completely and retries it next time", async () => {
    const dir = await migrationsFolder({
      "20260101000000_first": SCRATCH["20260101000000_first"],
      "20260102000000_broken": "CREATE TABLE half_done (id integer);\nSELECT no_such_function();\n",
    });
    const { db } = await emptyDatabase(kind, dir);
    await expect(db.migrate()).rejects.toThrow(/migration 20260102000000_broken failed and was rolled back/);
    expect((await rowsOf(db)).map((row) => row.migration_name)).toEqual(["20260101000000_first"]);
    const tables = await withSqlSession(db, (session) =>
      session.query<{ name: string }>(
        "SELECT table_name::text AS name FROM information_schema.tables WHERE table_name = 'half_done'",
      ),
    );
    expect(tables).toEqual([]);

    await writeFile(
      join(dir, "20260102000000_broken", "migration.sql"),
      "CREATE TABLE half_done (id integer);\n",
    );
    expect((await db.migrate()).applied).toEqual(["20260102000000_broken"]);
  });

  it("stops at a migration Prisma recorded as started but never finished", async () => {
    const dir = await migrationsFolder({ "20260101000000_first": SCRATCH["20260101000000_first"] });
    const { db } = await emptyDatabase(kind, dir);
    await db.migrate();
    await withSqlSession(db, (session) => session.exec("UPDATE _prisma_migrations SET finished_at = NULL"));
    await expect(db.migrate()).rejects.toThrow(
      /20260101000000_first is recorded as started but never finished/,
    );
    // Marked rolled back (`prisma migrate resolve --rolled-back`), it is applied again.
    await withSqlSession(db, (session) =>
      session.exec("UPDATE _prisma_migrations SET rolled_back_at = now(); DROP TABLE first"),
    );
    expect((await db.migrate()).applied).toEqual(["20260101000000_first"]);
  });

  it("reports a missing migrations folder and a folder without migration.sql clearly", async () => {
    await expect(readMigrations(join(tmpdir(), "no-such-migrations-folder"))).rejects.toThrow(
      /cannot read the migrations folder/,
    );
    const dir = await migrationsFolder({});
    await mkdir(join(dir, "20260101000000_empty"));
    await expect(readMigrations(dir)).rejects.toThrow(/20260101000000_empty has no readable migration.sql/);
  });
});

describe.runIf(backends.includes("postgres"))("migrator on postgres, concurrently", () => {
  let databaseUrl: string;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    ({ databaseUrl, drop } = await createPostgresTestDatabase({ migrate: false }));
  });
  afterAll(async () => {
    await drop?.();
  });

  it("several instances racing on a fresh database each apply nothing twice", async () => {
    // Slow migrations widen the window in which the racers overlap.
    const dir = await migrationsFolder({
      "20260101000000_first": `${SCRATCH["20260101000000_first"]}SELECT pg_sleep(0.3);\n`,
      "20260102000000_second": `${SCRATCH["20260102000000_second"]}SELECT pg_sleep(0.3);\n`,
      "20260103000000_third": SCRATCH["20260103000000_third"],
    });
    const results = await Promise.all(
      Array.from({ length: 4 }, () => migratePostgres(databaseUrl, { migrationsDir: dir })),
    );
    const applied = results.flatMap((result) => result.applied).sort();
    expect(applied).toEqual(["20260101000000_first", "20260102000000_second", "20260103000000_third"]);

    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query(
        "SELECT migration_name, count(*)::int AS n FROM _prisma_migrations GROUP BY migration_name ORDER BY 1",
      );
      expect(rows).toEqual([
        { migration_name: "20260101000000_first", n: 1 },
        { migration_name: "20260102000000_second", n: 1 },
        { migration_name: "20260103000000_third", n: 1 },
      ]);
      const { rows: locks } = await client.query(
        "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = $1",
        [MIGRATION_LOCK_KEY],
      );
      expect(locks).toEqual([{ n: 0 }]);
    } finally {
      await client.end();
    }
  });

  it("waits for the lock, and gives up with a clear error after lockTimeoutMs", async () => {
    const holder = new pg.Client({ connectionString: databaseUrl });
    await holder.connect();
    onTestFinished(() => holder.end());
    await holder.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
    const started = Date.now();
    await expect(migratePostgres(databaseUrl, { lockTimeoutMs: 500 })).rejects.toThrow(
      /timed out after \d+ s waiting for another migration run/,
    );
    expect(Date.now() - started).toBeLessThan(5_000);

    // Released, the waiting migrator proceeds.
    const waiting = migratePostgres(databaseUrl, { lockTimeoutMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await holder.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]);
    await expect(waiting).resolves.toHaveProperty("applied");
  });
});

describe("migrator on one PGlite instance, concurrently", () => {
  it("serialises runs on the same instance", async () => {
    const dir = await migrationsFolder(SCRATCH);
    const { db } = await emptyDatabase("pglite", dir);
    const results = await Promise.all([db.migrate(), db.migrate(), db.migrate()]);
    expect(results.flatMap((result) => result.applied).sort()).toEqual(Object.keys(SCRATCH));
    expect((await rowsOf(db)).map((row) => row.migration_name)).toEqual(Object.keys(SCRATCH));
  });

  it("works on a PGlite instance the caller opened", async () => {
    const pglite = await PGlite.create("memory://");
    onTestFinished(() => pglite.close());
    const dir = await migrationsFolder(SCRATCH);
    expect((await migratePglite(pglite, { migrationsDir: dir })).applied).toEqual(Object.keys(SCRATCH));
    expect(await migratePglite(pglite, { migrationsDir: dir })).toEqual({ applied: [] });
  });
});
