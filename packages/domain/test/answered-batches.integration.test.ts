// messages.insertAnswered through the top-level store's batcher, against both
// backends: sends written together are each written once, answered, with
// their timeline; one send's bad row or given-up claim is its own.
import { newId } from "@sms/crypto";
import { createDatabase, isDatabaseUnavailable } from "@sms/db";
import {
  availableBackends,
  createTestDatabase,
  dropAllTestDatabases,
  type TestDatabase,
  type PrismaDatabase,
  withPrisma,
} from "@sms/db/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { MessageResource } from "../src/model/message.ts";
import { createStore, type Outcome, type QueuedMessage } from "../src/store/index.ts";

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });
afterAll(() => dropAllTestDatabases());

const backends = await availableBackends();
const NOW = new Date("2026-11-22T10:00:00Z");
const LATER = new Date("2026-11-22T10:00:00.040Z");
const SUBMITTED: Outcome = {
  status: "submitted",
  error: null,
  providerRef: "sim-ref",
  nextCheckAt: new Date("2026-11-22T10:00:05Z"),
};

/**
 * PGlite as a first `npm start` has it: migrated after it started, so it has
 * not loaded the enum types' array OIDs (the tests' databases come from a
 * migrated template and have).
 */
async function firstRunPglite(): Promise<TestDatabase> {
  const db = withPrisma(
    await createDatabase({
      pgliteDataDir: "memory://",
      logger: { info() {}, warn() {}, error() {} },
    }),
  );
  await db.migrate();
  return { db, drop: () => db.close() };
}

const databases: Array<[string, () => Promise<TestDatabase>]> = [
  ...backends.map((kind): [string, () => Promise<TestDatabase>] => [kind, () => createTestDatabase(kind)]),
  ["PGlite migrated on its first start", firstRunPglite],
];

describe.each(databases)("messages.insertAnswered in batches on %s", (_, open) => {
  let t: TestDatabase;
  let projectId: string;
  beforeAll(async () => {
    t = await open();
    projectId = newId("prj");
    await t.db.prisma.project.create({ data: { id: projectId, createdAt: NOW, updatedAt: NOW } });
  });
  afterAll(() => t?.drop());

  /** The store over `t.db`, counting the insertAnswered statements it runs. */
  function countingStore(batches?: { maxBatch: number; maxInFlight: number }) {
    const counted = { statements: 0 };
    const db: Pick<PrismaDatabase, "query" | "transaction"> = {
      query(sql, params) {
        if (sql.includes("INSERT INTO message_events") && sql.includes("unnest(")) counted.statements++;
        return t.db.query(sql, params);
      },
      transaction: (work) => t.db.transaction(work),
    };
    return { store: createStore(db, { answeredBatches: batches }), counted };
  }

  /** A test send that claimed its key (the record in flight) and is about to be answered. */
  async function claimedSend(overrides: Partial<QueuedMessage> = {}) {
    const message: QueuedMessage = {
      messageId: newId("msg"),
      idempotencyId: newId("idem"),
      scope: { projectId, mode: "test", key: newId("key") },
      fingerprint: "fp",
      expiresAt: new Date(NOW.getTime() + 86_400_000),
      apiKeyId: "key_unit",
      recipientMasked: "+9955••••••56",
      recipientCiphertext: new Uint8Array([1, 2, 3]),
      textCiphertext: new Uint8Array([4, 5, 6, 0, 255]),
      template: "verification_code",
      locale: "en",
      sender: "SMSGE",
      segments: 1,
      encoding: "GSM-7",
      provider: "simulator",
      creditsReserved: 0,
      now: NOW,
      ...overrides,
    };
    await t.db.prisma.idempotencyRecord.create({
      data: {
        id: message.idempotencyId,
        projectId,
        mode: "test",
        key: message.scope.key,
        fingerprint: message.fingerprint,
        messageId: message.messageId,
        expiresAt: message.expiresAt,
      },
    });
    const response: MessageResource = {
      id: message.messageId,
      object: "message",
      to: message.recipientMasked,
      status: "submitted",
      segments: message.segments,
      error: null,
      created_at: NOW.toISOString(),
      updated_at: LATER.toISOString(),
    };
    return { message, response };
  }

  async function written(messageIds: string[]) {
    const messages = await t.db.prisma.message.findMany({ where: { id: { in: messageIds } } });
    const events = await t.db.prisma.messageEvent.findMany({
      where: { messageId: { in: messageIds } },
      orderBy: { createdAt: "asc" },
    });
    return new Map(
      messages.map((message) => [
        message.id,
        { ...message, events: events.filter((event) => event.messageId === message.id) },
      ]),
    );
  }

  it("writes sends that arrive while others are written in one statement, each once, answered, with both events", async () => {
    const { store, counted } = countingStore();
    const sends = await Promise.all(Array.from({ length: 50 }, () => claimedSend()));
    const results = await Promise.all(
      sends.map(({ message, response }) =>
        store.messages.insertAnswered(message, { outcome: SUBMITTED, response, now: LATER }),
      ),
    );
    expect(results).toEqual(sends.map(() => true));
    // Four statements at once, each alone; the other 46 waited and went together.
    expect(counted.statements).toBe(5);

    const rows = await written(sends.map((send) => send.message.messageId));
    expect(rows.size).toBe(50);
    for (const { message, response } of sends) {
      const row = rows.get(message.messageId);
      expect(row).toMatchObject({
        projectId,
        status: "submitted",
        providerRef: "sim-ref",
        submittedAt: LATER,
        nextCheckAt: SUBMITTED.nextCheckAt,
        createdAt: NOW,
        updatedAt: LATER,
        creditsReserved: 0,
      });
      expect([...(row?.textCiphertext ?? [])]).toEqual([4, 5, 6, 0, 255]);
      expect(row?.events.map((event) => [event.status, event.createdAt, event.messageCreatedAt])).toEqual([
        ["queued", NOW, NOW],
        ["submitted", LATER, NOW],
      ]);
      const record = await t.db.prisma.idempotencyRecord.findUnique({ where: { id: message.idempotencyId } });
      expect(record?.responseBody).toEqual(response);
    }
  });

  it("a send whose claim was given up or answered meanwhile is not written; the rest of its batch is", async () => {
    const { store, counted } = countingStore({ maxBatch: 64, maxInFlight: 1 });
    const first = await claimedSend();
    const [kept, givenUp, answered] = await Promise.all([claimedSend(), claimedSend(), claimedSend()]);
    await t.db.prisma.idempotencyRecord.delete({ where: { id: givenUp?.message.idempotencyId } });
    await t.db.prisma.idempotencyRecord.update({
      where: { id: answered?.message.idempotencyId },
      data: { responseBody: { id: "msg_other" } },
    });
    const results = await Promise.all(
      [first, kept, givenUp, answered].map((send) =>
        send
          ? store.messages.insertAnswered(send.message, {
              outcome: SUBMITTED,
              response: send.response,
              now: LATER,
            })
          : null,
      ),
    );
    expect(results).toEqual([true, true, false, false]);
    expect(counted.statements).toBe(2);
    const rows = await written([first, kept, givenUp, answered].map((send) => send?.message.messageId ?? ""));
    expect([...rows.keys()].sort()).toEqual([first.message.messageId, kept?.message.messageId].sort());
    const other = await t.db.prisma.idempotencyRecord.findUnique({
      where: { id: answered?.message.idempotencyId },
    });
    expect(other?.responseBody).toEqual({ id: "msg_other" });
  });

  it("a send whose row the database refuses fails alone: the others of its batch are written one by one", async () => {
    const { store, counted } = countingStore({ maxBatch: 64, maxInFlight: 1 });
    const first = await claimedSend();
    const good = await Promise.all([claimedSend(), claimedSend(), claimedSend()]);
    // Out of range for the integer column: the whole statement fails.
    const bad = await claimedSend({ segments: 2 ** 40 });
    const calls = [first, good[0], bad, good[1], good[2]].map((send) =>
      send
        ? store.messages
            .insertAnswered(send.message, { outcome: SUBMITTED, response: send.response, now: LATER })
            .then(
              (value) => ({ value }),
              (error: unknown) => ({ error }),
            )
        : null,
    );
    const results = await Promise.all(calls);
    expect(results.map((result) => (result && "value" in result ? result.value : "threw"))).toEqual([
      true,
      true,
      "threw",
      true,
      true,
    ]);
    // The first alone, the batch of four that failed, then each of the four alone.
    expect(counted.statements).toBe(6);
    const ids = [first, ...good, bad].map((send) => send?.message.messageId ?? "");
    const rows = await written(ids);
    expect(rows.size).toBe(4);
    expect(rows.has(bad.message.messageId)).toBe(false);
    const record = await t.db.prisma.idempotencyRecord.findUnique({
      where: { id: bad.message.idempotencyId },
    });
    expect(record?.responseBody).toBeNull();
  });

  it.each([
    ["read-only (25006, as after a failover)", "25006"],
    ["out of disk (53100)", "53100"],
  ])(
    "a database that refuses writes, %s, fails the whole batch as an outage: no send runs again alone",
    async (_name, sqlState) => {
      const { store, counted } = countingStore({ maxBatch: 64, maxInFlight: 1 });
      const first = await claimedSend();
      const others = await Promise.all([claimedSend(), claimedSend(), claimedSend()]);
      await refuseWrites(t, sqlState);
      try {
        const calls = [first, ...others].map((send) =>
          store.messages
            .insertAnswered(send.message, { outcome: SUBMITTED, response: send.response, now: LATER })
            .then(
              () => null,
              (error: unknown) => error,
            ),
        );
        const errors = await Promise.all(calls);
        for (const error of errors) expect(isDatabaseUnavailable(error)).toBe(true);
        // The first alone, then the other three together: never one by one.
        expect(counted.statements).toBe(2);
      } finally {
        await allowWrites(t);
      }
      expect((await written([first, ...others].map((send) => send.message.messageId))).size).toBe(0);
    },
  );
});

/** Every insert into messages fails with `sqlState` (a refusal the test can lift again), as a full or read-only database would. */
async function refuseWrites(t: TestDatabase, sqlState: string): Promise<void> {
  await t.db.query(`CREATE OR REPLACE FUNCTION test_refuse_writes() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'writes refused' USING ERRCODE = '${sqlState}'; END $$`);
  await t.db.query(`CREATE TRIGGER test_refuse_writes BEFORE INSERT ON messages
    FOR EACH STATEMENT EXECUTE FUNCTION test_refuse_writes()`);
}

async function allowWrites(t: TestDatabase): Promise<void> {
  await t.db.query("DROP TRIGGER IF EXISTS test_refuse_writes ON messages");
}
