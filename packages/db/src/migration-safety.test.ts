// The expand/contract rule (docs/operations.md#upgrades) as CI applies it: a
// migration that would break the running previous release is refused unless it
// carries `-- contract: <why>`; the migrations that predate the rule are named.
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  checkMigrations,
  findBreakingChanges,
  GRANDFATHERED,
  GRANDFATHERED_UNTIL,
} from "./migration-safety.ts";
import { MIGRATIONS_DIR } from "./migrator.ts";

const kinds = (sql: string) => findBreakingChanges(sql).map((change) => change.kind);

describe("findBreakingChanges", () => {
  it.each([
    ['ALTER TABLE "messages" DROP COLUMN "body";', "DROP COLUMN"],
    ["ALTER TABLE messages DROP body;", "DROP COLUMN"],
    ["ALTER TABLE IF EXISTS ONLY public.messages DROP COLUMN IF EXISTS body CASCADE;", "DROP COLUMN"],
    ['DROP TABLE "verifications";', "DROP TABLE"],
    ["drop table if exists api_keys cascade;", "DROP TABLE"],
    ['ALTER TABLE "messages" RENAME COLUMN "to" TO "recipient";', "RENAME"],
    ['ALTER TABLE "messages" RENAME TO "sms_messages";', "RENAME"],
    ["ALTER TABLE projects RENAME name TO title;", "RENAME"],
    ["ALTER VIEW daily_usage RENAME TO usage_by_day;", "RENAME"],
    ['ALTER TABLE "messages" ALTER COLUMN "segments" TYPE BIGINT;', "ALTER TYPE"],
    [
      "ALTER TABLE messages ALTER segments SET DATA TYPE numeric(10, 2) USING segments::numeric;",
      "ALTER TYPE",
    ],
    ['ALTER TABLE "messages" ALTER COLUMN "locale" SET NOT NULL;', "SET NOT NULL"],
    ['ALTER TABLE "projects" ADD COLUMN "region" TEXT NOT NULL;', "ADD COLUMN NOT NULL"],
  ])("refuses %s", (sql, kind) => {
    expect(kinds(sql)).toEqual([kind]);
  });

  it("finds each breaking action of one ALTER TABLE, and every statement of a migration", () => {
    const sql = [
      'ALTER TABLE "messages" ADD COLUMN "note" TEXT, DROP COLUMN "body", ALTER COLUMN "to" SET NOT NULL;',
      "CREATE INDEX messages_note ON messages (note);",
      "DROP TABLE old_things;",
    ].join("\n");
    expect(kinds(sql)).toEqual(["DROP COLUMN", "SET NOT NULL", "DROP TABLE"]);
    expect(findBreakingChanges(sql)[0]?.statement).toMatch(/^ALTER TABLE "messages" ADD COLUMN "note" TEXT/);
  });

  it.each([
    ['ALTER TABLE "messages" ADD COLUMN "note" TEXT;'],
    ['ALTER TABLE "projects" ADD COLUMN "region" TEXT NOT NULL DEFAULT \'ge\';'],
    ['ALTER TABLE "projects" ADD COLUMN "n" INTEGER GENERATED ALWAYS AS IDENTITY NOT NULL;'],
    ['CREATE TABLE "upgrade_notes" ("id" BIGINT PRIMARY KEY, "text" TEXT NOT NULL);'],
    ['CREATE INDEX CONCURRENTLY "messages_note" ON "messages" ("note");'],
    ['ALTER TABLE "messages" ALTER COLUMN "locale" DROP NOT NULL;'],
    ['ALTER TABLE "messages" ALTER COLUMN "locale" SET DEFAULT \'en\', ALTER COLUMN "x" DROP DEFAULT;'],
    ['ALTER TABLE "messages" ADD CONSTRAINT "messages_segments_positive" CHECK (segments > 0) NOT VALID;'],
    ['ALTER TABLE "messages" DROP CONSTRAINT "messages_old_check";'],
    ["ALTER TABLE messages RENAME CONSTRAINT messages_a TO messages_b;"],
    ["DROP INDEX IF EXISTS messages_old_idx;"],
    // Words inside comments and strings are not statements.
    ["-- we never DROP TABLE here\nSELECT 'ALTER TABLE t DROP COLUMN c';"],
    ["CREATE FUNCTION f() RETURNS int AS $$ SELECT count(*)::int FROM messages $$ LANGUAGE sql;"],
    // A table made in the same migration is read by no release yet.
    ['CREATE TABLE "drafts" ("id" TEXT, "n" INTEGER);\nALTER TABLE "drafts" ALTER COLUMN "id" SET NOT NULL;'],
  ])("lets an expand-only migration through: %s", (sql) => {
    expect(findBreakingChanges(sql)).toEqual([]);
  });

  it("searches function and DO bodies, whose DDL it cannot parse (the partitions migration renamed tables so)", () => {
    expect(
      kinds(
        "DO $body$ BEGIN EXECUTE format('ALTER TABLE %I RENAME TO %I', 'messages', 'messages_old'); EXECUTE 'DROP TABLE messages_old'; END $body$;",
      ),
    ).toEqual(["DROP TABLE (in a function body)", "RENAME (in a function body)"]);
  });

  it("lets a contract migration through only with a `-- contract: <why>` line", () => {
    const drop = 'ALTER TABLE "messages" DROP COLUMN "legacy_body";\n';
    expect(kinds(drop)).toEqual(["DROP COLUMN"]);
    expect(findBreakingChanges(`-- contract: release 1.4 stopped reading legacy_body\n${drop}`)).toEqual([]);
    // An empty reason, or the word inside another comment, is no marker.
    expect(kinds(`-- contract:\n${drop}`)).toEqual(["DROP COLUMN"]);
    expect(kinds(`-- no contract: here\n${drop}`)).toEqual(["DROP COLUMN"]);
  });
});

describe("checkMigrations", () => {
  const scratch: string[] = [];
  afterEach(async () => {
    await Promise.all(scratch.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });

  async function folder(files: Record<string, string>): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), "sms-migration-safety-"));
    scratch.push(dir);
    for (const [name, sql] of Object.entries(files)) {
      await mkdir(join(dir, name));
      await writeFile(join(dir, name, "migration.sql"), sql);
    }
    return dir;
  }

  it("passes the repository's prisma/migrations", async () => {
    expect(await checkMigrations(MIGRATIONS_DIR)).toEqual([]);
  });

  it("names exactly the migrations up to the cut-off as grandfathered, and every one of them exists", async () => {
    const names = (await readdir(MIGRATIONS_DIR, { withFileTypes: true }))
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(names).toContain(GRANDFATHERED_UNTIL);
    expect(new Set(names.filter((name) => name <= GRANDFATHERED_UNTIL))).toEqual(new Set(GRANDFATHERED));
  });

  it("refuses a new breaking migration after the cut-off, and one slipped in under it with an older name", async () => {
    const dir = await folder({
      "20261122000000_init": "DROP TABLE grandfathered_anyway;",
      "20261130000000_sneaky": 'ALTER TABLE "messages" RENAME COLUMN "to" TO "recipient";',
      "20270105000000_add_note": 'ALTER TABLE "messages" ADD COLUMN "note" TEXT;',
      "20270110000000_drop_body": 'ALTER TABLE "messages" DROP COLUMN "body";',
      "20270115000000_contract_body":
        '-- contract: 1.5 no longer reads body\nALTER TABLE "messages" DROP COLUMN "body";',
    });
    expect(await checkMigrations(dir)).toEqual([
      {
        migration: "20261130000000_sneaky",
        changes: [{ kind: "RENAME", statement: 'ALTER TABLE "messages" RENAME COLUMN "to" TO "recipient"' }],
      },
      {
        migration: "20270110000000_drop_body",
        changes: [{ kind: "DROP COLUMN", statement: 'ALTER TABLE "messages" DROP COLUMN "body"' }],
      },
    ]);
  });
});
