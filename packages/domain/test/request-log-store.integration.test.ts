// The request log's batch insert on PGlite and PostgreSQL: the rows of
// projects that exist are written, and the statement makes its own
// transaction commit without waiting for the disk, and no other (the log is a
// debugging aid; sends and reads must not queue behind a flush for it).
import { availableBackends, dropAllTestDatabases, type TestDatabase } from "@sms/db/testing";
import { afterAll, describe, expect, it } from "vitest";
import type { RequestRecord } from "../src/store/index.ts";
import { requestLogStore } from "../src/store/request-log.ts";
import { projectDatabase } from "./support/project-database.ts";
import { aRequestRecord } from "./support/request-records.ts";

const NOW = new Date("2026-11-22T10:00:00Z");

afterAll(() => dropAllTestDatabases());

describe.each(await availableBackends())("the request log's batch insert (%s)", (kind) => {
  const suite = projectDatabase(kind, NOW);

  const record = (overrides: Partial<RequestRecord> = {}) =>
    aRequestRecord({ projectId: suite.projectId, createdAt: NOW, ...overrides });

  const synchronousCommit = async (sql: Pick<TestDatabase["db"], "query">) =>
    (await sql.query<{ synchronous_commit: string }>("SHOW synchronous_commit"))[0]?.synchronous_commit;

  it("writes the batch's rows of existing projects, and commits its own transaction asynchronously, no other", async () => {
    const batch = [record(), record({ status: 404, errorCode: "message_not_found" }), record()];
    const gone = record({ projectId: "prj_00000000000000000000000000" });
    const inside = await suite.t.db.transaction(async (sql) => {
      const before = await synchronousCommit(sql);
      await requestLogStore(sql).insertMany([...batch, gone]);
      return { before, after: await synchronousCommit(sql) };
    });
    expect(inside).toEqual({ before: "on", after: "off" });
    // The setting was the transaction's own: the next one commits durably again.
    expect(await synchronousCommit(suite.t.db)).toBe("on");
    const rows = await suite.t.db.query<{ id: string; status: number }>(
      "SELECT id, status FROM request_log WHERE project_id = $1 OR project_id = $2 ORDER BY id",
      [suite.projectId, gone.projectId],
    );
    expect(rows.map((row) => [row.id, row.status])).toEqual(
      batch.map((entry) => [entry.id, entry.status]).sort(([a], [b]) => String(a).localeCompare(String(b))),
    );
  });

  it("an autocommitted batch is written and leaves the connection's setting as it was", async () => {
    const batch = [record(), record()];
    await requestLogStore(suite.t.db).insertMany(batch);
    expect(await synchronousCommit(suite.t.db)).toBe("on");
    const [row] = await suite.t.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM request_log WHERE id = ANY(CAST($1 AS text[]))",
      [batch.map((entry) => entry.id)],
    );
    expect(row?.n).toBe(2);
  });
});
