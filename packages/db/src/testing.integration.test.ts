import pg from "pg";
import { describe, expect, it, onTestFinished } from "vitest";
import {
  availableBackends,
  createPostgresTestDatabase,
  createTestDatabase,
  dropAllTestDatabases,
  dropStaleTestDatabases,
  testPostgresAdminUrl,
} from "./testing/index.ts";

const backends = await availableBackends();

async function databaseExists(name: string): Promise<boolean> {
  const admin = new pg.Client({ connectionString: testPostgresAdminUrl() });
  await admin.connect();
  try {
    const { rows } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    return rows.length === 1;
  } finally {
    await admin.end();
  }
}

const nameOf = (url: string) => new URL(url).pathname.slice(1);

describe("the test harness", () => {
  it("always offers PGlite", () => {
    expect(backends).toContain("pglite");
  });

  it("gives every PGlite test database its own migrated data", async () => {
    const a = await createTestDatabase("pglite");
    onTestFinished(() => a.drop());
    const b = await createTestDatabase("pglite");
    onTestFinished(() => b.drop());
    await a.db.prisma.project.create({ data: { id: "prj_only_in_a" } });
    expect(await a.db.prisma.project.count()).toBe(1);
    expect(await b.db.prisma.project.count()).toBe(0);
    expect(await b.db.migrate()).toEqual({ applied: [] });
  });

  it("can start from an empty PGlite database", async () => {
    const empty = await createTestDatabase("pglite", { migrate: false });
    onTestFinished(() => empty.drop());
    expect((await empty.db.migrate()).applied).toContain("20261122000000_init");
  });
});

describe.runIf(backends.includes("postgres"))("the test harness on PostgreSQL", () => {
  it("creates a migrated database of its own and drops it", async () => {
    const test = await createTestDatabase("postgres");
    const name = nameOf(test.databaseUrl!);
    expect(name).toMatch(/^sms_test_[0-9a-z]+_[0-9a-f]{10}$/);
    expect(await databaseExists(name)).toBe(true);
    expect(await test.db.migrate()).toEqual({ applied: [] });
    await test.drop();
    await test.drop();
    expect(await databaseExists(name)).toBe(false);
  });

  it("hands out a migrated database URL without keeping a client open", async () => {
    const { databaseUrl, drop } = await createPostgresTestDatabase();
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query("SELECT migration_name FROM _prisma_migrations");
      expect(rows.map((row) => row.migration_name)).toContain("20261122000000_init");
    } finally {
      await client.end();
    }
    // A client still connected (e.g. a server process that did not stop) does not block the drop.
    const straggler = new pg.Client({ connectionString: databaseUrl });
    straggler.on("error", () => undefined);
    await straggler.connect();
    await drop();
    await straggler.end().catch(() => undefined);
    expect(await databaseExists(nameOf(databaseUrl))).toBe(false);
  });

  it("drops whatever a test left behind with dropAllTestDatabases()", async () => {
    const forgotten = await createTestDatabase("postgres");
    const bare = await createPostgresTestDatabase({ migrate: false });
    await dropAllTestDatabases();
    expect(await databaseExists(nameOf(forgotten.databaseUrl!))).toBe(false);
    expect(await databaseExists(nameOf(bare.databaseUrl))).toBe(false);
  });

  it("removes stale leftovers of killed runs, and only those", async () => {
    const sevenHoursAgo = (Date.now() - 7 * 60 * 60 * 1000).toString(36);
    const stale = `sms_test_${sevenHoursAgo}_deadbeef00`;
    const admin = new pg.Client({ connectionString: testPostgresAdminUrl() });
    await admin.connect();
    onTestFinished(async () => {
      await admin.query(`DROP DATABASE IF EXISTS "${stale}"`);
      await admin.end();
    });
    await admin.query(`CREATE DATABASE "${stale}"`);
    const fresh = await createPostgresTestDatabase({ migrate: false });
    onTestFinished(() => fresh.drop());

    const dropped = await dropStaleTestDatabases();
    expect(dropped).toContain(stale);
    expect(await databaseExists(stale)).toBe(false);
    expect(await databaseExists(nameOf(fresh.databaseUrl))).toBe(true);
  });
});
