// `npm run db:migrate` (issue 52 item 4): the migrator's process
// (apps/api/src/migrate.ts, run with Deno as scripts/bootstrap.mjs runs it)
// takes where to migrate from the configuration's database slice and hands it
// to @sms/db's migrateCli: PGlite at PGLITE_DATA_DIR without DATABASE_URL,
// PostgreSQL through DATABASE_MIGRATION_URL when set, else DATABASE_URL; a bad
// value exits 1 with one line naming the variable, never its value.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDatabase, readMigrations } from "@sms/db";
import { availableBackends, createPostgresTestDatabase, type PostgresTestDatabase } from "@sms/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_DIR, DENO, denoRunArgs } from "../harness.ts";
import { type CommandRun, childEnv, runCommand } from "../support/run.ts";

function dbMigrate(env: Record<string, string>): Promise<CommandRun> {
  return runCommand(DENO, denoRunArgs("src/migrate.ts"), {
    cwd: API_DIR,
    env: childEnv({ DENO_NO_UPDATE_CHECK: "1", ...env }),
    timeoutMs: 90_000,
  });
}

const migrationNames = async () => (await readMigrations()).map((migration) => migration.name);
const hasPostgres = (await availableBackends()).includes("postgres");

describe("db:migrate on PGlite", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "sms-db-migrate-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("applies every migration to PGLITE_DATA_DIR, then finds it up to date", async () => {
    const dataDir = join(dir, "pglite");
    const first = await dbMigrate({ PGLITE_DATA_DIR: dataDir });
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.stdout.trimEnd().split("\n")).toEqual([
      `db:migrate: applied to PGlite at ${dataDir}:`,
      ...(await migrationNames()).map((name) => `  ${name}`),
    ]);
    const second = await dbMigrate({ PGLITE_DATA_DIR: dataDir });
    expect(second).toEqual({
      code: 0,
      stdout: `db:migrate: PGlite at ${dataDir} is up to date\n`,
      stderr: "",
    });
  });

  it("refuses a DATABASE_URL that is not postgresql:// in one line, without its value", async () => {
    const run = await dbMigrate({ DATABASE_URL: "mysql://user:s3cret-value@db/sms", PGLITE_DATA_DIR: dir });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe("db:migrate: Invalid configuration: DATABASE_URL must be a postgresql:// URL\n");
  });
});

describe.skipIf(!hasPostgres)("db:migrate on PostgreSQL", () => {
  let pg: PostgresTestDatabase;
  beforeAll(async () => {
    pg = await createPostgresTestDatabase({ migrate: false });
  });
  afterAll(async () => {
    await pg?.drop();
  });

  it("connects through DATABASE_MIGRATION_URL when set (DATABASE_URL, a pooler, is not used)", async () => {
    const run = await dbMigrate({
      // Nothing listens there: a migration through it would fail.
      DATABASE_URL: "postgresql://postgres@127.0.0.1:1/pooler",
      DATABASE_MIGRATION_URL: pg.databaseUrl,
    });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const names = await migrationNames();
    expect(run.stdout.trimEnd().split("\n")).toEqual([
      "db:migrate: applied to PostgreSQL:",
      ...names.map((name) => `  ${name}`),
    ]);
    const db = await createDatabase({ databaseUrl: pg.databaseUrl, pgliteDataDir: "memory://" });
    try {
      const rows = await db.query<{ migration_name: string }>(
        "SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL ORDER BY migration_name",
      );
      expect(rows.map((row) => row.migration_name)).toEqual([...names].sort());
    } finally {
      await db.close();
    }
  });

  it("then, through DATABASE_URL alone, finds it up to date", async () => {
    expect(await dbMigrate({ DATABASE_URL: pg.databaseUrl })).toEqual({
      code: 0,
      stdout: "db:migrate: PostgreSQL is up to date\n",
      stderr: "",
    });
  });
});
