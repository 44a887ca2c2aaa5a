// The service keeps its monthly partitions (docs/scaling.md#messages-partitioned-by-month),
// both backends: start-up creates the month it starts in and the next two, the
// partition-maintenance job is one of the instance's jobs and does the same as
// the months pass, and a send lands in its month's partition.
import { availableBackends } from "@sms/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestKey, ManualClock, sendMessageRequest, startTestApp, type TestApp } from "../harness.ts";
import { body } from "../support/messages.ts";

const backends = await availableBackends();

describe.each(backends)("monthly partitions on %s", (backend) => {
  let t: TestApp;
  // A month no migration prepared: only start-up and the job can have made it.
  const clock = new ManualClock("2033-05-20T10:00:00Z");
  beforeAll(async () => {
    t = await startTestApp({ backend, clock });
    await t.app.databaseReady;
  });
  afterAll(() => t?.close());

  const partitions = async (table: string) =>
    (
      await t.app.db.query<{ name: string }>(
        `SELECT c.relname::text AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         WHERE i.inhparent = CAST($1 AS regclass) ORDER BY 1`,
        [table],
      )
    ).map((row) => row.name);

  it("start-up creates this month's and the next two months' partitions", async () => {
    for (const table of ["messages", "message_events", "request_log"]) {
      const names = await partitions(table);
      expect(names).toEqual(
        expect.arrayContaining([`${table}_p2033_05`, `${table}_p2033_06`, `${table}_p2033_07`]),
      );
      expect(names).not.toContain(`${table}_p2033_08`);
    }
  });

  it("a send is written to its month's partition, its timeline too", async () => {
    const call = (path: string, init?: RequestInit) => t.request(path, init);
    const { api_key: apiKey } = await createTestKey(call);
    const sent = await call("/v1/messages", sendMessageRequest(apiKey, crypto.randomUUID(), body()));
    expect(sent.status).toBe(201);
    const { id } = (await sent.json()) as { id: string };
    const homes = await t.app.db.query<{ part: string }>(
      `SELECT tableoid::regclass::text AS part FROM messages WHERE id = $1
       UNION ALL SELECT tableoid::regclass::text FROM message_events WHERE message_id = $1`,
      [id],
    );
    expect(homes.length).toBeGreaterThanOrEqual(2);
    expect(new Set(homes.map((row) => row.part))).toEqual(
      new Set(["messages_p2033_05", "message_events_p2033_05"]),
    );
  });

  it("the partition-maintenance job creates the months ahead as time passes", async () => {
    const job = t.app.jobs.find((candidate) => candidate.name === "partition-maintenance");
    expect(job).toBeDefined();
    // The send's request-log record is written by the recorder's next batch; before the clock moves six
    // weeks on, so that it lands in May's partition and not in a default the job finds May gone from.
    await t.app.requestLog.flush();
    clock.set("2033-07-02T00:00:00Z");
    const counts = await job!.run();
    // What a default partition holds, should it hold anything: its table and the row's month key.
    const strays = await t.app.db.query<{ part: string; at: string }>(
      `SELECT 'messages' AS part, created_at::text AS at FROM messages_default
       UNION ALL SELECT 'message_events', message_created_at::text FROM message_events_default
       UNION ALL SELECT 'request_log', created_at::text || ' ' || route FROM request_log_default`,
    );
    expect(strays).toEqual([]);
    expect(counts).toMatchObject({ created: 6, default_rows: 0 });
    expect(await partitions("messages")).toEqual(
      expect.arrayContaining(["messages_p2033_08", "messages_p2033_09"]),
    );
    expect(await job!.run()).toMatchObject({ created: 0 });
  });
});
