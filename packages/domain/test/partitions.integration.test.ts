// The monthly partitions of messages, message_events and request_log on PGlite
// and PostgreSQL (docs/scaling.md#partitioned-by-month): created ahead by the
// job, rows outside the prepared months kept by the DEFAULT partition and
// moved out when their month is created, whole months dropped once past
// retention (and only then), the per-row purges taking the rest.
import { newId } from "@sms/crypto";
import type { Sql } from "@sms/db";
import { availableBackends, createTestDatabase, type TestDatabase } from "@sms/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { purgeUnclaimedMessages } from "../src/claims/purge-unclaimed-messages.ts";
import { DAY_MS } from "../src/model/time.ts";
import { ensureMonth, ensurePartitions, maintainPartitions } from "../src/privacy/partitions.ts";
import { purgeRequestLog } from "../src/privacy/retention.ts";
import { createStore, type Store } from "../src/store/index.ts";
import { messageLogStore } from "../src/store/message-log.ts";
import { messageStore, PROJECT_MATCHES } from "../src/store/messages.ts";
import { heldByClaimSql } from "../src/store/partitions.ts";
import { insertMessages } from "./support/bulk-messages.ts";
import { rowsRead } from "./support/plan-rows.ts";
import { projectDatabase } from "./support/project-database.ts";
import { aRequestRecord } from "./support/request-records.ts";

const backends = await availableBackends();

describe.each(backends)("partitions on %s", (kind) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(kind);
  }, 120_000);
  afterAll(() => t?.drop());

  const store = (): Store => createStore(t.db);
  const prisma = () => t.db.prisma;

  /** Attached partitions of `table`, by name. */
  async function partitions(table: string): Promise<string[]> {
    const rows = await t.db.query<{ name: string }>(
      `SELECT c.relname::text AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = CAST($1 AS regclass) ORDER BY 1`,
      [table],
    );
    return rows.map((row) => row.name);
  }

  /** Which partition holds the row of `table` with `column` = `id`. */
  async function home(table: string, column: string, id: string): Promise<string[]> {
    const rows = await t.db.query<{ part: string }>(
      `SELECT tableoid::regclass::text AS part FROM ${table} WHERE ${column} = $1 ORDER BY 1`,
      [id],
    );
    return rows.map((row) => row.part);
  }

  async function project(claimed: boolean): Promise<string> {
    const id = newId("prj");
    await prisma().project.create({
      data: { id, claimedAt: claimed ? new Date("2023-12-01T00:00:00Z") : null },
    });
    return id;
  }

  /** A delivered message at `createdAt` with its two timeline events; its id's time is `createdAt` unless given. */
  async function message(
    projectId: string,
    createdAt: Date,
    id = newId("msg", createdAt.getTime()),
  ): Promise<string> {
    await prisma().message.create({
      data: {
        id,
        projectId,
        mode: "test",
        recipientMasked: "+9955••••••12",
        recipientCiphertext: new Uint8Array([1, 2, 3]),
        template: "verification_code",
        locale: "en",
        sender: "SMSGE",
        segments: 1,
        encoding: "gsm7",
        provider: "simulator",
        status: "delivered",
        createdAt,
        updatedAt: new Date(createdAt.getTime() + 5_000),
      },
    });
    await prisma().messageEvent.createMany({
      data: [
        { messageId: id, status: "queued", createdAt, messageCreatedAt: createdAt },
        {
          messageId: id,
          status: "delivered",
          createdAt: new Date(createdAt.getTime() + 5_000),
          messageCreatedAt: createdAt,
        },
      ],
    });
    return id;
  }

  async function requestLog(projectId: string, createdAt: Date): Promise<string> {
    const id = newId("req", createdAt.getTime());
    await store().requestLog.insertMany([aRequestRecord({ id, projectId, createdAt })]);
    return id;
  }

  it("creates this month's and the next two months' partitions of every table, once", async () => {
    const now = new Date("2031-06-15T12:00:00Z");
    expect(await ensurePartitions({ store: store() }, { now })).toEqual({ created: 9 });
    expect(await ensurePartitions({ store: store() }, { now })).toEqual({ created: 0 });
    for (const table of ["messages", "message_events", "request_log"]) {
      const names = await partitions(table);
      for (const month of ["2031_06", "2031_07", "2031_08"]) expect(names).toContain(`${table}_p${month}`);
      expect(names).not.toContain(`${table}_p2031_09`);
      expect(names).toContain(`${table}_default`);
    }
    // A message of July lands in July's partition, its timeline in July's too.
    const id = await message(await project(true), new Date("2031-07-31T23:59:59.999Z"));
    expect(await home("messages", "id", id)).toEqual(["messages_p2031_07"]);
    expect(await home("message_events", "message_id", id)).toEqual([
      "message_events_p2031_07",
      "message_events_p2031_07",
    ]);
  });

  it("reads a message by id and project through each month's primary key, even on a month without statistics", async () => {
    // A new month (or a fresh database) has no statistics until autovacuum's first ANALYZE; a read by id and
    // project must not walk the project's month through (project_id, created_at, id) meanwhile.
    const projectId = await project(true);
    await ensureMonth({ store: store() }, new Date("2033-05-01T00:00:00Z"));
    await insertMessages(t.db, {
      idPrefix: "msg_bulk",
      projectId,
      count: 3000,
      at: new Date("2033-05-10T00:00:00Z"),
    });
    expect(await store().messages.readInProject("msg_bulk42", projectId)).toMatchObject({ id: "msg_bulk42" });
    expect(await store().messages.readInProject("msg_bulk42", "prj_someone_else")).toBeNull();
    if (kind !== "postgres") return; // PGlite plans the same, but its EXPLAIN output is not what is pinned here.
    const plan = await t.db.query<{ "QUERY PLAN": string }>(
      `EXPLAIN SELECT id FROM messages WHERE id = 'msg_bulk42' AND ${PROJECT_MATCHES.replace("$2", `'${projectId}'`)}`,
    );
    const text = plan.map((row) => row["QUERY PLAN"]).join("\n");
    expect(text).toContain("messages_p2033_05_pkey");
    expect(text).not.toContain("project_id_created_at_id_idx");
  });

  it("reads by id that arrive together go in one statement, each answered with its own project's row or null", async () => {
    const owner = await project(true);
    const other = await project(true);
    const today = new Date();
    const month = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() - 3, 1));
    await ensureMonth({ store: store() }, month);
    const at = (day: number) => new Date(month.getTime() + day * DAY_MS + 12 * 3_600_000);
    const ids: string[] = [];
    for (let day = 1; day <= 12; day++) ids.push(await message(owner, at(day)));
    const theirs = await message(other, at(13));
    // A row created far from its id's time (a clock set wrong): the bounded statement misses it.
    const far = await message(owner, new Date(month.getTime() - 40 * DAY_MS), newId("msg", at(14).getTime()));
    const seen: string[] = [];
    const recording = {
      query: ((text: string, params?: readonly unknown[]) => {
        seen.push(text);
        return t.db.query(text, params);
      }) as Sql["query"],
      transaction: t.db.transaction.bind(t.db),
    };
    // One batch at a time: the first read runs alone, the rest wait for it and go together.
    const batched = createStore(recording, { readBatches: { maxBatch: 64, maxInFlight: 1 } });
    const reads: Array<[string, string]> = [
      ...ids.map((id): [string, string] => [id, owner]),
      [theirs, owner],
      [ids[0] as string, other],
      [newId("msg", at(15).getTime()), owner],
      [far, owner],
      [theirs, other],
    ];
    const answers = await Promise.all(
      reads.map(([id, projectId]) => batched.messages.readInProject(id, projectId)),
    );
    expect(answers.map((answer) => answer?.id ?? null)).toEqual([...ids, null, null, null, far, theirs]);
    const many = seen.filter((text) => text.includes("= ANY("));
    // The first read alone, then the other 16 in one statement (the month of their ids' times); the two it did
    // not find there (an unknown id, the far row) each read alone over every month: 4 statements for 17 reads.
    expect(many).toHaveLength(2);
    expect(seen).toHaveLength(4);
  });

  it("reads a message by id in the month of its id's time, and one created far from its id's time in any month", async () => {
    const projectId = await project(true);
    // Five months ending four months ago (ids of the last two years are read bounded): the middle one is M.
    const today = new Date();
    const monthOf = (offset: number) =>
      new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() - 6 + offset, 1));
    const iso = (offset: number) => `'${monthOf(offset).toISOString()}'`;
    const suffix = (offset: number) => `_p${monthOf(offset).toISOString().slice(0, 7).replace("-", "_")}`;
    for (let offset = -2; offset <= 2; offset++) await ensureMonth({ store: store() }, monthOf(offset));
    const middle = new Date(monthOf(0).getTime() + 14 * DAY_MS + 12 * 3_600_000);
    const id = await message(projectId, middle);
    for (const offset of [-2, -1, 1, 2])
      await message(projectId, new Date(monthOf(offset).getTime() + 9 * DAY_MS));
    // Every by-id read the API and the dashboard make, through a handle that keeps each statement it runs.
    const seen: { text: string; params: readonly unknown[] }[] = [];
    const recording: Sql = {
      query: (text, params = []) => {
        seen.push({ text, params });
        return t.db.query(text, params);
      },
    };
    const messages = messageStore(recording);
    const log = messageLogStore(recording);
    expect(await messages.readInProject(id, projectId)).toMatchObject({ id, status: "delivered" });
    expect(await messages.read(id)).toMatchObject({ id });
    expect(await log.detail(projectId, id)).toMatchObject({ id });
    expect((await log.events(id)).map((event) => event.status)).toEqual(["queued", "delivered"]);
    expect(seen).toHaveLength(4);
    // Each ran once, bounded to M by constants (the id's time is mid-M), and PostgreSQL planned it over M's
    // partition alone: run unnamed with its values, and prepared, as the service's named statements run (a
    // generic plan: with the bound as parameters it would keep every month and prune each time it starts).
    for (const [index, { text, params }] of seen.entries()) {
      expect(text).toContain(iso(0));
      expect(text).toContain(iso(1));
      expect(params).not.toContainEqual(expect.any(Date));
      const unnamed = await t.db.query<{ "QUERY PLAN": string }>(`EXPLAIN (COSTS OFF) ${text}`, [...params]);
      const generic = await t.db.transaction(async (sql) => {
        await sql.query("SET LOCAL plan_cache_mode = force_generic_plan");
        await sql.query(`PREPARE near_read_${index} AS ${text}`);
        try {
          return await sql.query<{ "QUERY PLAN": string }>(
            `EXPLAIN (COSTS OFF) EXECUTE near_read_${index} (${params.map((value) => `'${String(value)}'`).join(", ")})`,
          );
        } finally {
          await sql.query(`DEALLOCATE near_read_${index}`);
        }
      });
      for (const plan of [unnamed, generic]) {
        const lines = plan.map((row) => row["QUERY PLAN"]).join("\n");
        expect(new Set(lines.match(/_p\d{4}_\d{2}|_default/g))).toEqual(new Set([suffix(0)]));
        expect(lines).not.toContain("Subplans Removed");
      }
    }
    // Within a day of a month's start, the month before is read too.
    const earlyNext = await message(projectId, new Date(monthOf(1).getTime() + 3 * 3_600_000));
    seen.length = 0;
    expect(await messages.readInProject(earlyNext, projectId)).toMatchObject({ id: earlyNext });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.text).toContain(iso(0));
    expect(seen[0]!.text).toContain(iso(2));

    // A row whose creation time is months from its id's (a clock set wrong, a test's clock) is found all the same:
    // the bounded read misses and the read over every month follows.
    const drifted = newId("msg", monthOf(-2).getTime() + 19 * DAY_MS);
    const driftedAt = new Date(monthOf(1).getTime() + DAY_MS);
    await t.db.query(
      `INSERT INTO messages (id, project_id, mode, recipient_masked, template, locale, sender, segments, encoding,
                             provider, status, created_at, updated_at)
       VALUES ($1, $2, 'test', '+9955', 'verification_code', 'en', 'SMSGE', 1, 'gsm7', 'simulator', 'submitted',
               CAST($3 AS timestamptz), CAST($3 AS timestamptz))`,
      [drifted, projectId, driftedAt],
    );
    await t.db.query(
      `INSERT INTO message_events (message_id, status, created_at, message_created_at)
       VALUES ($1, 'submitted', CAST($2 AS timestamptz), CAST($2 AS timestamptz))`,
      [drifted, driftedAt],
    );
    seen.length = 0;
    expect(await messages.readInProject(drifted, projectId)).toMatchObject({
      id: drifted,
      status: "submitted",
    });
    expect(await messages.read(drifted)).toMatchObject({ id: drifted });
    expect(await log.detail(projectId, drifted)).toMatchObject({ id: drifted });
    expect((await log.events(drifted)).map((event) => event.status)).toEqual(["submitted"]);
    expect(seen).toHaveLength(8);
    // Another project's message stays absent, bounded or not; so does an id that does not exist.
    expect(await messages.readInProject(id, "prj_someone_else")).toBeNull();
    expect(await messages.readInProject(drifted, "prj_someone_else")).toBeNull();
    expect(await log.detail("prj_someone_else", id)).toBeNull();
    expect(await messages.readInProject(newId("msg", middle.getTime()), projectId)).toBeNull();

    // Only ids of the last two years get a statement of their month: an older one (and one from the future) is
    // read over every month at once, so made-up ids cannot make a prepared statement for each month an id can
    // say (up to the year 10889, past what an ISO timestamp PostgreSQL reads can say).
    // (In the DEFAULT partition: a month created here would be one more for the retention test to drop.)
    const old = new Date(Date.UTC(today.getUTCFullYear() - 3, today.getUTCMonth(), 1));
    const oldId = await message(projectId, new Date(old.getTime() + 5 * DAY_MS));
    seen.length = 0;
    expect(await messages.readInProject(oldId, projectId)).toMatchObject({ id: oldId });
    expect((await log.events(oldId)).map((event) => event.status)).toEqual(["queued", "delivered"]);
    expect(seen).toHaveLength(2);
    for (const { text } of seen) expect(text).not.toContain("TIMESTAMPTZ");
    for (const time of [2 ** 48 - 1, Date.UTC(9999, 11, 31), Date.now() + 3 * DAY_MS, 0]) {
      const madeUp = newId("msg", time);
      seen.length = 0;
      expect(await messages.readInProject(madeUp, projectId)).toBeNull();
      expect(await messages.read(madeUp)).toBeNull();
      expect(await log.detail(projectId, madeUp)).toBeNull();
      expect(await log.events(madeUp)).toEqual([]);
      expect(seen).toHaveLength(4);
    }
  });

  it("keeps a row far outside the prepared months in the DEFAULT partition, and moves it when its month is created", async () => {
    const projectId = await project(true);
    const future = new Date("2040-02-29T08:00:00Z");
    const id = await message(projectId, future);
    const past = await message(projectId, new Date("2001-03-04T05:06:07Z"));
    const request = await requestLog(projectId, future);
    expect(await home("messages", "id", id)).toEqual(["messages_default"]);
    expect(await home("messages", "id", past)).toEqual(["messages_default"]);
    expect(await home("request_log", "id", request)).toEqual(["request_log_default"]);
    // It reads like any other.
    expect(await store().messages.read(id)).toMatchObject({ id, status: "delivered" });
    const before = await prisma().message.findFirstOrThrow({ where: { id } });

    expect(await ensureMonth({ store: store() }, new Date("2040-02-01T00:00:00Z"))).toBe(3);
    expect(await home("messages", "id", id)).toEqual(["messages_p2040_02"]);
    expect(await home("message_events", "message_id", id)).toEqual([
      "message_events_p2040_02",
      "message_events_p2040_02",
    ]);
    expect(await home("request_log", "id", request)).toEqual(["request_log_p2040_02"]);
    // Nothing was lost or changed on the way, and the other stray row stayed.
    expect(await prisma().message.findFirstOrThrow({ where: { id } })).toEqual(before);
    expect(await home("messages", "id", past)).toEqual(["messages_default"]);
    expect(await partitions("messages")).toContain("messages_default");
  });

  it("drops the request-log months wholly past retention; the per-row purge takes the rest", async () => {
    const projectId = await project(true);
    await ensureMonth({ store: store() }, new Date("2025-01-01T00:00:00Z"));
    await ensureMonth({ store: store() }, new Date("2025-02-01T00:00:00Z"));
    const january = [
      await requestLog(projectId, new Date("2025-01-01T00:00:00Z")),
      await requestLog(projectId, new Date("2025-01-15T00:00:00Z")),
      await requestLog(projectId, new Date("2025-01-31T23:59:59.999Z")),
    ];
    const early = await requestLog(projectId, new Date("2025-02-01T00:00:00Z"));
    const late = await requestLog(projectId, new Date("2025-02-27T00:00:00Z"));
    expect(await home("request_log", "id", january[0]!)).toEqual(["request_log_p2025_01"]);

    // 30 days before 2025-03-20 is 2025-02-18: January ended before it, February did not.
    const now = new Date("2025-03-20T00:00:00Z");
    const counts = await maintainPartitions({ store: store() }, { now, requestLogRetentionMs: 30 * DAY_MS });
    // January of request_log (3 rows) and the empty January of messages.
    expect(counts).toMatchObject({ created: 9, dropped: 2, rows_dropped: 3 });
    expect(await partitions("messages")).not.toContain("messages_p2025_01");
    expect(await partitions("request_log")).not.toContain("request_log_p2025_01");
    expect(await partitions("request_log")).toContain("request_log_p2025_02");
    expect(await prisma().requestLogEntry.count({ where: { id: { in: january } } })).toBe(0);

    expect(await purgeRequestLog({ store: store() }, { now, retentionMs: 30 * DAY_MS })).toEqual({
      purged: 1,
    });
    expect(await prisma().requestLogEntry.count({ where: { id: early } })).toBe(0);
    expect(await prisma().requestLogEntry.count({ where: { id: late } })).toBe(1);
    // Run again: nothing more to drop.
    expect(
      await maintainPartitions({ store: store() }, { now, requestLogRetentionMs: 30 * DAY_MS }),
    ).toMatchObject({ created: 0, dropped: 0, rows_dropped: 0 });
  });

  it("drops a month of messages only when all of it is unclaimed projects' past 30 days, with its timeline, idempotency records and verifications", async () => {
    const unclaimed = await project(false);
    const claimed = await project(true);
    await ensureMonth({ store: store() }, new Date("2024-01-01T00:00:00Z"));
    await ensureMonth({ store: store() }, new Date("2024-02-01T00:00:00Z"));
    // January: unclaimed only. February: both.
    const jan = [
      await message(unclaimed, new Date("2024-01-03T00:00:00Z")),
      await message(unclaimed, new Date("2024-01-30T00:00:00Z")),
    ];
    await prisma().idempotencyRecord.create({
      data: {
        id: newId("idem"),
        projectId: unclaimed,
        mode: "test",
        key: "k-jan",
        fingerprint: "f",
        messageId: jan[0]!,
        expiresAt: new Date("2024-01-04T00:00:00Z"),
        createdAt: new Date("2024-01-03T00:00:00Z"),
      },
    });
    await prisma().verification.create({
      data: {
        id: newId("vrf"),
        projectId: unclaimed,
        mode: "test",
        messageId: jan[1]!,
        recipientMasked: "+9955••••••12",
        recipientFingerprint: "fp",
        template: "verification_code",
        locale: "en",
        attemptsRemaining: 5,
        expiresAt: new Date("2024-01-30T00:10:00Z"),
        createdAt: new Date("2024-01-30T00:00:00Z"),
      },
    });
    const febUnclaimed = await message(unclaimed, new Date("2024-02-10T00:00:00Z"));
    const febClaimed = await message(claimed, new Date("2024-02-11T00:00:00Z"));
    // An unclaimed message younger than 30 days stays whatever happens.
    const recent = await message(unclaimed, new Date("2024-03-30T00:00:00Z"));

    const now = new Date("2024-04-15T00:00:00Z");
    const counts = await maintainPartitions({ store: store() }, { now, requestLogRetentionMs: 30 * DAY_MS });
    // January of messages (2 rows, with its timeline), and the empty January and February of request_log.
    expect(counts).toMatchObject({ dropped: 3, rows_dropped: 2 });
    expect(await partitions("messages")).not.toContain("messages_p2024_01");
    expect(await partitions("message_events")).not.toContain("message_events_p2024_01");
    expect(await partitions("messages")).toContain("messages_p2024_02");
    expect(await prisma().message.count({ where: { id: { in: jan } } })).toBe(0);
    expect(await prisma().messageEvent.count({ where: { messageId: { in: jan } } })).toBe(0);
    expect(await prisma().idempotencyRecord.count({ where: { projectId: unclaimed } })).toBe(0);
    expect(await prisma().verification.count({ where: { projectId: unclaimed } })).toBe(0);

    // The per-row purge takes February's unclaimed message (and, through the
    // trigger, its timeline) and leaves the claimed project's.
    expect(
      await purgeUnclaimedMessages({ store: store(), clock: { now: () => now }, config: { batchSize: 10 } }),
    ).toEqual({ messages: 1, idempotency_records: 0 });
    expect(await prisma().message.count({ where: { id: febUnclaimed } })).toBe(0);
    expect(await prisma().messageEvent.count({ where: { messageId: febUnclaimed } })).toBe(0);
    expect(await prisma().message.count({ where: { id: { in: [febClaimed, recent] } } })).toBe(2);
    expect(await prisma().messageEvent.count({ where: { messageId: { in: [febClaimed, recent] } } })).toBe(4);

    // February still holds a claimed project's message: kept, round after round.
    expect(
      await maintainPartitions({ store: store() }, { now, requestLogRetentionMs: 30 * DAY_MS }),
    ).toMatchObject({ dropped: 0 });
    expect(await partitions("messages")).toContain("messages_p2024_02");
  });

  it("keeps a month whose project was claimed after sending, and never drops the DEFAULT partition", async () => {
    const unclaimed = await project(false);
    await ensureMonth({ store: store() }, new Date("2023-05-01T00:00:00Z"));
    const may = await message(unclaimed, new Date("2023-05-05T00:00:00Z"));
    const stray = await message(unclaimed, new Date("1999-05-05T00:00:00Z"));
    // Claimed after its messages were sent: they are kept from then on.
    await prisma().project.update({ where: { id: unclaimed }, data: { claimedAt: new Date("2023-06-01") } });
    const now = new Date("2023-08-01T00:00:00Z");
    expect(
      await maintainPartitions({ store: store() }, { now, requestLogRetentionMs: 30 * DAY_MS }),
    ).toMatchObject({ dropped: 1, rows_dropped: 0 }); // the empty May of request_log
    expect(await partitions("request_log")).not.toContain("request_log_p2023_05");
    expect(await prisma().message.count({ where: { id: { in: [may, stray] } } })).toBe(2);
    expect(await partitions("messages")).toContain("messages_p2023_05");
    expect(await partitions("messages")).toContain("messages_default");
  });

  it.runIf(kind === "postgres")(
    "waits for a claim being confirmed while it looks at a month, then keeps the month",
    async () => {
      const claiming = await project(false);
      await ensureMonth({ store: store() }, new Date("2022-03-01T00:00:00Z"));
      const march = await message(claiming, new Date("2022-03-10T00:00:00Z"));
      const now = new Date("2022-06-01T00:00:00Z");
      let maintained: Promise<unknown> | undefined;
      await t.db.transaction(async (sql) => {
        // The claim holds its project row, as claimProject's transaction does.
        await sql.query("UPDATE projects SET claimed_at = CAST($2 AS timestamptz) WHERE id = $1", [
          claiming,
          now,
        ]);
        maintained = maintainPartitions({ store: store() }, { now, requestLogRetentionMs: 30 * DAY_MS });
        // Commit only once the drop is waiting for that row.
        for (;;) {
          const [row] = await t.db.query<{ waiting: number }>(
            `SELECT count(*)::int AS waiting FROM pg_stat_activity
             WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          );
          if ((row?.waiting ?? 0) > 0) break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      });
      await maintained;
      expect(await partitions("messages")).toContain("messages_p2022_03");
      expect(await prisma().message.count({ where: { id: march } })).toBe(1);
    },
  );
});

describe.runIf(backends.includes("postgres"))(
  "partition maintenance's check of a month on PostgreSQL",
  () => {
    // Its project is never claimed.
    const suite = projectDatabase("postgres", new Date("2021-01-01T00:00:00Z"), { timeoutMs: 120_000 });

    it("finds a month past retention held by a claimed project from one of its messages, not by reading the month", async () => {
      const { t, projectId } = suite;
      const store = createStore(t.db);
      await ensureMonth({ store }, new Date("2021-04-01T00:00:00Z"));
      await t.db.query("INSERT INTO projects (id, claimed_at) VALUES ('prj_claimed_long_ago', '2021-01-01')");
      const april = { at: new Date("2021-04-02T00:00:00Z"), stepMs: 60_000 };
      await insertMessages(t.db, {
        idPrefix: "msg_april_claimed_",
        projectId: "prj_claimed_long_ago",
        count: 5_000,
        ...april,
      });
      await insertMessages(t.db, { idPrefix: "msg_april_unclaimed_", projectId, count: 100, ...april });
      await t.db.query("ANALYZE messages");
      await t.db.query("ANALYZE projects");

      const read = await rowsRead(t.db, heldByClaimSql("messages_p2021_04"));
      // One index entry of the month (and the claimed projects probed until one has a message there), where
      // SELECT DISTINCT project_id read all 5 100.
      expect(read.get("messages")).toBeLessThanOrEqual(2);
      expect(await store.transaction((tx) => tx.partitions.holdsClaimedProject("messages_p2021_04"))).toBe(
        true,
      );
      const counts = await maintainPartitions(
        { store },
        { now: new Date("2021-07-01T00:00:00Z"), requestLogRetentionMs: 30 * DAY_MS },
      );
      expect(counts).toMatchObject({ rows_dropped: 0 });
      const [kept] = await t.db.query<{ count: number }>(
        "SELECT count(*)::int AS count FROM messages WHERE created_at >= '2021-04-01' AND created_at < '2021-05-01'",
      );
      expect(kept?.count).toBe(5_100);
    });
  },
);
