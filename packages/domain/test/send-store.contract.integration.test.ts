// The send's store contract (SendMessageStore: the statements sendMessage
// uses), asserted once and run against the unit suite's hand-written fake
// (test/support/fake-send-store.ts) and against the real store on PGlite and
// PostgreSQL. A change to a statement's behaviour that the fake does not
// follow fails here, so the unit suite cannot go on proving a store that no
// longer exists.
import { newId } from "@sms/crypto";
import { statementName } from "@sms/db";
import {
  availableBackends,
  createTestDatabase,
  dropAllTestDatabases,
  type TestDatabase,
} from "@sms/db/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { SendMessageStore, SendMessageTx } from "../src/messages/send/send-message.ts";
import type { MessageResource } from "../src/model/message.ts";
import { CLAIM_ANSWERED_SQL, claimAnsweredMany } from "../src/store/answered-sends.ts";
import { CLAIM_COUNTED_MANY_SQL, type CountedClaim, claimCountedMany } from "../src/store/idempotency.ts";
import { createStore, type Outcome, type QueuedMessage, transactionOrRollback } from "../src/store/index.ts";
import {
  ANSWERED_UNNAMED_EXECUTIONS,
  flushCommitted,
  INSERT_ANSWERED_SQL,
  messageStore,
  recordOutcomeSql,
  releaseSql,
} from "../src/store/messages.ts";
import { emptyTables, fakeStore, type Tables } from "./support/fake-send-store.ts";
import { createPinnedTestDatabase } from "./support/pinned-database.ts";
import { projectDatabase } from "./support/project-database.ts";

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });
afterAll(() => dropAllTestDatabases());

const NOW = new Date("2026-11-22T10:00:00Z");
const LATER = new Date("2026-11-22T10:00:01Z");
const DAY_MS = 86_400_000;
/** Credits every project starts with. */
const CREDITS = 3;

/** One implementation of the contract: a store, a project in it, and how to make that project paying. */
type Subject = {
  store: SendMessageStore;
  projectId: string;
  markPaid(): Promise<void>;
  close(): Promise<void>;
};

async function fakeSubject(): Promise<Subject> {
  const tables: Tables = { ...emptyTables(), balance: CREDITS };
  return {
    store: fakeStore(tables),
    projectId: "prj_contract",
    markPaid: async () => {
      tables.hasPaidCredits = true;
    },
    close: async () => {},
  };
}

function realSubject(kind: "pglite" | "postgres") {
  return async (): Promise<Subject> => {
    const t: TestDatabase = await createPinnedTestDatabase(kind, NOW);
    const store = createStore(t.db);
    const projectId = newId("prj");
    await store.projects.create(projectId, NOW);
    await store.ledger.grant({ projectId, kind: "grant_free", amount: CREDITS, note: "contract", now: NOW });
    return {
      store,
      projectId,
      markPaid: async () => {
        await store.ledger.grant({ projectId, kind: "grant_paid", amount: 0, note: "paid", now: NOW });
      },
      close: () => t.drop(),
    };
  };
}

const subjects: Array<[string, () => Promise<Subject>]> = [
  ["the unit suite's fake", fakeSubject],
  ...(await availableBackends()).map((kind): [string, () => Promise<Subject>] => [
    `the real store on ${kind}`,
    realSubject(kind),
  ]),
];

const SUBMITTED: Outcome = {
  status: "submitted",
  error: null,
  providerRef: "ref-1",
  nextCheckAt: new Date(LATER.getTime() + 5_000),
};

/** A message of `projectId` as a send prepares it, with a fresh key. */
function queuedMessage(
  projectId: string,
  mode: "test" | "live",
  overrides: Partial<QueuedMessage> = {},
): QueuedMessage {
  return {
    messageId: newId("msg"),
    idempotencyId: newId("idem"),
    scope: { projectId, mode, key: newId("key") },
    fingerprint: `fp-${newId("key")}`,
    expiresAt: new Date(NOW.getTime() + DAY_MS),
    apiKeyId: "key_contract",
    recipientMasked: "+9955••••••56",
    recipientCiphertext: new Uint8Array([1, 2, 3]),
    textCiphertext: new Uint8Array([4, 5, 6]),
    template: "verification_code",
    locale: "en",
    sender: "SMSGE",
    segments: 1,
    encoding: "GSM-7",
    provider: mode === "test" ? "simulator" : "ubill",
    creditsReserved: mode === "live" ? 1 : 0,
    now: NOW,
    ...overrides,
  };
}

describe.each(subjects)("the send's store contract: %s", (_, open) => {
  let s: Subject;
  beforeAll(async () => {
    s = await open();
  });
  afterAll(() => s?.close());

  function message(mode: "test" | "live", overrides: Partial<QueuedMessage> = {}): QueuedMessage {
    return queuedMessage(s.projectId, mode, overrides);
  }

  /** The record a claim of `m`'s key finds while `m` is in flight. */
  const inFlight = (m: QueuedMessage) => ({
    fingerprint: m.fingerprint,
    responseBody: null,
    expiresAt: m.expiresAt,
    messageId: m.messageId,
  });

  const answer = (m: QueuedMessage): MessageResource => ({
    id: m.messageId,
    object: "message",
    to: m.recipientMasked,
    status: "submitted",
    segments: m.segments,
    error: null,
    created_at: NOW.toISOString(),
    updated_at: LATER.toISOString(),
  });

  const minute = (bucket: string, limit: number) => ({
    bucket,
    start: NOW,
    end: new Date(NOW.getTime() + 60_000),
    limit,
  });

  /** A write-ahead that counts no recipient window (the windows have their own cases below). */
  const NO_COUNTERS = { recipient: [] };
  const WRITTEN = { written: true, recipient: [], paid: false };

  describe("a live send's write-ahead (insertQueuedLive, in a transaction)", () => {
    it("claims a free key with its queued message; the key in flight is found, unanswered", async () => {
      const m = message("live");
      expect(await s.store.transaction((tx) => tx.messages.insertQueuedLive(m, NO_COUNTERS))).toEqual(
        WRITTEN,
      );
      expect(await s.store.idempotency.find(m.scope, NOW)).toEqual({
        fingerprint: m.fingerprint,
        responseBody: null,
        expiresAt: m.expiresAt,
        messageId: m.messageId,
      });
      expect(await s.store.messages.read(m.messageId)).toEqual({
        id: m.messageId,
        recipientMasked: m.recipientMasked,
        status: "queued",
        segments: 1,
        errorCode: null,
        errorMessage: null,
        createdAt: NOW,
        updatedAt: NOW,
      });
    });

    it("a taken key writes nothing and names the record that holds it", async () => {
      const first = message("live");
      await s.store.transaction((tx) => tx.messages.insertQueuedLive(first, NO_COUNTERS));
      const second = message("live", { scope: first.scope, fingerprint: "other" });
      expect(await s.store.transaction((tx) => tx.messages.insertQueuedLive(second, NO_COUNTERS))).toEqual({
        written: false,
        prior: inFlight(first),
      });
      expect(await s.store.messages.read(second.messageId)).toBeNull();
    });

    it("a key whose record expired is claimed anew; find no longer sees the old record", async () => {
      const first = message("live", { expiresAt: new Date(NOW.getTime() + 1_000) });
      await s.store.transaction((tx) => tx.messages.insertQueuedLive(first, NO_COUNTERS));
      const after = new Date(NOW.getTime() + 1_000);
      expect(await s.store.idempotency.find(first.scope, after)).toBeNull();
      const second = message("live", { scope: first.scope, now: after });
      expect(await s.store.transaction((tx) => tx.messages.insertQueuedLive(second, NO_COUNTERS))).toEqual(
        WRITTEN,
      );
      expect((await s.store.idempotency.find(first.scope, after))?.messageId).toBe(second.messageId);
    });

    it("a transaction that throws leaves nothing behind", async () => {
      const m = message("live");
      await expect(
        s.store.transaction(async (tx) => {
          await tx.messages.insertQueuedLive(m, NO_COUNTERS);
          await tx.limits.consume(minute(`b-${m.messageId}`, 5), 1, 5);
          throw new Error("refused halfway");
        }),
      ).rejects.toThrow("refused halfway");
      expect(await s.store.idempotency.find(m.scope, NOW)).toBeNull();
      expect(await s.store.messages.read(m.messageId)).toBeNull();
      expect(await s.store.transaction((tx) => tx.limits.read(`b-${m.messageId}`, NOW))).toBe(0);
    });
  });

  describe("recording a live send (recordOutcome, releaseUnsent)", () => {
    it("recordOutcome moves a queued message once and answers its key", async () => {
      const m = message("live");
      await s.store.transaction((tx) => tx.messages.insertQueuedLive(m, NO_COUNTERS));
      const change = {
        messageId: m.messageId,
        createdAt: m.now,
        idempotencyId: m.idempotencyId,
        outcome: SUBMITTED,
        response: answer(m),
        now: LATER,
      };
      expect(await s.store.messages.recordOutcome(change)).toBe(true);
      expect(await s.store.messages.recordOutcome(change)).toBe(false);
      expect((await s.store.messages.read(m.messageId))?.status).toBe("submitted");
      expect((await s.store.idempotency.find(m.scope, NOW))?.responseBody).toEqual(answer(m));
      // An answered message is not released.
      const ids = { messageId: m.messageId, createdAt: m.now, idempotencyId: m.idempotencyId };
      expect(await s.store.messages.releaseUnsent(ids)).toBe(false);
    });

    it("releaseUnsent removes a queued message and frees its key", async () => {
      const m = message("live");
      await s.store.transaction((tx) => tx.messages.insertQueuedLive(m, NO_COUNTERS));
      const ids = { messageId: m.messageId, createdAt: m.now, idempotencyId: m.idempotencyId };
      expect(await s.store.transaction((tx) => tx.messages.releaseUnsent(ids))).toBe(true);
      expect(await s.store.messages.read(m.messageId)).toBeNull();
      expect(await s.store.idempotency.find(m.scope, NOW)).toBeNull();
      expect(await s.store.messages.releaseUnsent(ids)).toBe(false);
    });
  });

  describe("a test send (claimCounted, insertAnswered, releaseClaim, releaseAbandoned)", () => {
    it("claims and counts; the same key again is taken and counts nothing", async () => {
      const m = message("test");
      const counter = minute(`m-${m.messageId}`, 5);
      expect(await s.store.idempotency.claimCounted(m, counter)).toEqual({ claimed: true, used: 1 });
      const again = message("test", { scope: m.scope });
      expect(await s.store.idempotency.claimCounted(again, counter)).toEqual({
        claimed: false,
        prior: inFlight(m),
      });
      expect(await s.store.transaction((tx) => tx.limits.read(counter.bucket, NOW))).toBe(1);
    });

    it("over the minute's limit the key is still claimed, `used` is null, and releaseClaim gives it back", async () => {
      const bucket = `m-${newId("key")}`;
      const first = message("test");
      expect(await s.store.idempotency.claimCounted(first, minute(bucket, 1))).toEqual({
        claimed: true,
        used: 1,
      });
      const second = message("test");
      expect(await s.store.idempotency.claimCounted(second, minute(bucket, 1))).toEqual({
        claimed: true,
        used: null,
      });
      expect((await s.store.idempotency.find(second.scope, NOW))?.messageId).toBe(second.messageId);
      expect(await s.store.idempotency.releaseClaim(second.idempotencyId)).toBe(true);
      expect(await s.store.idempotency.find(second.scope, NOW)).toBeNull();
      expect(await s.store.idempotency.releaseClaim(second.idempotencyId)).toBe(false);
    });

    it("insertAnswered writes the message and answers the claim, once", async () => {
      const m = message("test");
      await s.store.idempotency.claimCounted(m, minute(`m-${m.messageId}`, 5));
      const record = { outcome: SUBMITTED, response: answer(m), now: LATER };
      expect(await s.store.messages.insertAnswered(m, record)).toBe(true);
      expect(await s.store.messages.insertAnswered(m, record)).toBe(false);
      expect(await s.store.messages.read(m.messageId)).toMatchObject({
        status: "submitted",
        updatedAt: LATER,
      });
      expect((await s.store.idempotency.find(m.scope, NOW))?.responseBody).toEqual(answer(m));
      // An answered claim is neither released nor abandoned.
      expect(await s.store.idempotency.releaseClaim(m.idempotencyId)).toBe(false);
      expect(await s.store.idempotency.releaseAbandoned(m.scope, m.messageId)).toBe(false);
    });

    it("releaseAbandoned gives up a claim without a message; insertAnswered then writes nothing", async () => {
      const m = message("test");
      await s.store.idempotency.claimCounted(m, minute(`m-${m.messageId}`, 5));
      expect(await s.store.idempotency.releaseAbandoned(m.scope, "msg_someone_else")).toBe(false);
      expect(await s.store.idempotency.releaseAbandoned(m.scope, m.messageId)).toBe(true);
      expect(await s.store.idempotency.find(m.scope, NOW)).toBeNull();
      expect(
        await s.store.messages.insertAnswered(m, { outcome: SUBMITTED, response: answer(m), now: LATER }),
      ).toBe(false);
      expect(await s.store.messages.read(m.messageId)).toBeNull();
    });

    it("claims at once (group commit): exactly the limit counted, numbered 1..limit; a key sent twice is claimed once", async () => {
      const bucket = `m-${newId("key")}`;
      const sends = Array.from({ length: 30 }, () => message("test"));
      const twice = message("test", { scope: (sends[0] as QueuedMessage).scope });
      const outcomes = await Promise.all(
        [...sends, twice].map((m) => s.store.idempotency.claimCounted(m, minute(bucket, 10))),
      );
      const claimed = outcomes.filter((o) => o.claimed);
      expect(claimed).toHaveLength(30);
      const used = claimed.map((o) => (o.claimed ? o.used : undefined)).filter((u) => u !== null);
      expect([...used].sort((a, b) => Number(a) - Number(b))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(outcomes.filter((o) => !o.claimed)).toHaveLength(1);
      expect(await s.store.transaction((tx) => tx.limits.read(bucket, NOW))).toBe(10);
    });

    it("a claim whose message exists (a live send in flight) is not abandoned", async () => {
      const m = message("live");
      await s.store.transaction((tx) => tx.messages.insertQueuedLive(m, NO_COUNTERS));
      expect(await s.store.idempotency.releaseAbandoned(m.scope, m.messageId)).toBe(false);
      expect(await s.store.idempotency.releaseClaim(m.idempotencyId)).toBe(false);
    });
  });

  describe("a test send in one statement (claimAnswered)", () => {
    const send = (m: QueuedMessage, counter: ReturnType<typeof minute>) => ({
      message: m,
      outcome: SUBMITTED,
      response: answer(m),
      now: LATER,
      counter,
    });
    const answered = (m: QueuedMessage) => ({ ...inFlight(m), responseBody: answer(m) });

    it("claims the key with its answer, counts the send and writes the message; the same key again is taken and changes nothing", async () => {
      const m = message("test");
      const counter = minute(`m-${m.messageId}`, 5);
      expect(await s.store.messages.claimAnswered(send(m, counter))).toEqual({ claimed: true, used: 1 });
      expect(await s.store.idempotency.find(m.scope, NOW)).toEqual(answered(m));
      expect(await s.store.messages.read(m.messageId)).toEqual({
        id: m.messageId,
        recipientMasked: m.recipientMasked,
        status: "submitted",
        segments: 1,
        errorCode: null,
        errorMessage: null,
        createdAt: NOW,
        updatedAt: LATER,
      });
      const again = message("test", { scope: m.scope, fingerprint: "other" });
      expect(await s.store.messages.claimAnswered(send(again, counter))).toEqual({
        claimed: false,
        prior: answered(m),
      });
      expect(await s.store.messages.read(again.messageId)).toBeNull();
      expect(await s.store.transaction((tx) => tx.limits.read(counter.bucket, NOW))).toBe(1);
      // Answered: neither released nor abandoned.
      expect(await s.store.idempotency.releaseClaim(m.idempotencyId)).toBe(false);
      expect(await s.store.idempotency.releaseAbandoned(m.scope, m.messageId)).toBe(false);
    });

    it("over the minute's limit nothing is claimed, counted or written", async () => {
      const counter = minute(`m-${newId("key")}`, 1);
      const first = message("test");
      expect(await s.store.messages.claimAnswered(send(first, counter))).toEqual({ claimed: true, used: 1 });
      const second = message("test");
      expect(await s.store.messages.claimAnswered(send(second, counter))).toEqual({
        claimed: false,
        used: null,
      });
      expect(await s.store.idempotency.find(second.scope, NOW)).toBeNull();
      expect(await s.store.messages.read(second.messageId)).toBeNull();
      expect(await s.store.transaction((tx) => tx.limits.read(counter.bucket, NOW))).toBe(1);
    });

    it("a key whose record expired is claimed anew, with its answer", async () => {
      const first = message("test", { expiresAt: new Date(NOW.getTime() + 1_000) });
      const counter = minute(`m-${first.messageId}`, 5);
      await s.store.messages.claimAnswered(send(first, counter));
      const after = new Date(NOW.getTime() + 1_000);
      const second = message("test", { scope: first.scope, now: after });
      expect(await s.store.messages.claimAnswered(send(second, counter))).toEqual({ claimed: true, used: 2 });
      expect(await s.store.idempotency.find(first.scope, after)).toEqual(answered(second));
    });

    it("a key in flight (a claim without an answer) is taken: found unanswered, nothing counted", async () => {
      const m = message("test");
      const counter = minute(`m-${m.messageId}`, 5);
      await s.store.idempotency.claimCounted(m, minute(`other-${m.messageId}`, 5));
      const again = message("test", { scope: m.scope });
      expect(await s.store.messages.claimAnswered(send(again, counter))).toEqual({
        claimed: false,
        prior: inFlight(m),
      });
      expect(await s.store.transaction((tx) => tx.limits.read(counter.bucket, NOW))).toBe(0);
    });

    it("at once (group commit): exactly the limit written, numbered 1..limit, the rest refused with nothing written; a key sent twice is written once", async () => {
      const counter = minute(`m-${newId("key")}`, 10);
      const sends = Array.from({ length: 30 }, () => message("test"));
      const twice = message("test", { scope: (sends[0] as QueuedMessage).scope });
      const outcomes = await Promise.all(
        [...sends, twice].map((m) => s.store.messages.claimAnswered(send(m, counter))),
      );
      const written = outcomes.flatMap((o) => (o.claimed ? [o.used] : []));
      expect(written.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(outcomes.filter((o) => !o.claimed && !("prior" in o))).toHaveLength(20);
      expect(outcomes.filter((o) => "prior" in o)).toHaveLength(1);
      expect(await s.store.transaction((tx) => tx.limits.read(counter.bucket, NOW))).toBe(10);
      const rows = await Promise.all([...sends, twice].map((m) => s.store.messages.read(m.messageId)));
      expect(rows.filter((row) => row !== null)).toHaveLength(10);
      const records = await Promise.all(sends.map((m) => s.store.idempotency.find(m.scope, NOW)));
      expect(records.filter((record) => record !== null)).toHaveLength(10);
      expect(records.every((record) => record === null || record.responseBody !== null)).toBe(true);
    });
  });

  describe("a test send's recipient tally (issue 53, item 3: claimCounted and claimAnswered)", () => {
    const DAY_START = new Date("2026-11-22T00:00:00Z");
    /** The project's minute `bucket` (limit `limit`) with a tally for recipient `who`, reported against `limits`. */
    const tallied = (bucket: string, who: string, limit = 100, limits = { minute: 100, day: 100 }) => ({
      ...minute(bucket, limit),
      tally: {
        minute: `test_recipient:${who}:minute`,
        day: `test_recipient:${who}:day`,
        dayStart: DAY_START,
        dayEnd: new Date(DAY_START.getTime() + DAY_MS),
        limits,
      },
    });
    const countOf = (bucket: string, start: Date) =>
      s.store.transaction((tx) => tx.limits.read(bucket, start));
    const ways = {
      claimCounted: (m: QueuedMessage, counter: ReturnType<typeof tallied>) =>
        s.store.idempotency.claimCounted(m, counter),
      claimAnswered: (m: QueuedMessage, counter: ReturnType<typeof tallied>) =>
        s.store.messages.claimAnswered({
          message: m,
          outcome: SUBMITTED,
          response: answer(m),
          now: LATER,
          counter,
        }),
    };

    describe.each(Object.keys(ways) as Array<keyof typeof ways>)("%s", (way) => {
      const claim = ways[way];

      it("counts the recipient's minute and day with each send, never refusing; another number starts at one; a key taken counts nothing", async () => {
        const bucket = `m-${newId("key")}`;
        const who = newId("key");
        const counts = [];
        for (let i = 0; i < 3; i++) counts.push(await claim(message("test"), tallied(bucket, who)));
        expect(counts.map((o) => (o.claimed && "recipient" in o ? o.recipient : "none"))).toEqual([
          { minute: 1, day: 1 },
          { minute: 2, day: 2 },
          { minute: 3, day: 3 },
        ]);
        const other = await claim(message("test"), tallied(bucket, newId("key")));
        expect(other).toMatchObject({ claimed: true, recipient: { minute: 1, day: 1 } });
        // The same key again (a replay or a 409 at the store): taken, the tally unmoved.
        const first = message("test");
        await claim(first, tallied(bucket, who));
        const again = await claim(message("test", { scope: first.scope }), tallied(bucket, who));
        expect(again.claimed).toBe(false);
        expect(await countOf(`test_recipient:${who}:minute`, NOW)).toBe(4);
        expect(await countOf(`test_recipient:${who}:day`, DAY_START)).toBe(4);
        // The live key's buckets are not these: nothing of a live allowance was used.
        expect(await countOf(`recipient:${s.projectId}:${who}:minute`, NOW)).toBe(0);
      });

      it("a window at its live limit is not written again and says the limit: nothing is left there", async () => {
        const bucket = `m-${newId("key")}`;
        const who = newId("key");
        const limits = { minute: 2, day: 3 };
        const counts = [];
        for (let i = 0; i < 5; i++) {
          const outcome = await claim(message("test"), tallied(bucket, who, 100, limits));
          counts.push(outcome.claimed && "recipient" in outcome ? outcome.recipient : "none");
        }
        expect(counts).toEqual([
          { minute: 1, day: 1 },
          { minute: 2, day: 2 },
          { minute: 2, day: 3 },
          { minute: 2, day: 3 },
          { minute: 2, day: 3 },
        ]);
        expect(await countOf(`test_recipient:${who}:minute`, NOW)).toBe(2);
        expect(await countOf(`test_recipient:${who}:day`, DAY_START)).toBe(3);
        // Every send was still claimed and counted on the project's minute: the tally never refuses.
        expect(await countOf(bucket, NOW)).toBe(5);
      });

      it("a send refused by the project's minute tallies nothing", async () => {
        const bucket = `m-${newId("key")}`;
        const who = newId("key");
        expect(await claim(message("test"), tallied(bucket, who, 1))).toMatchObject({
          claimed: true,
          recipient: { minute: 1, day: 1 },
        });
        const refused = await claim(message("test"), tallied(bucket, who, 1));
        expect(refused).toMatchObject({ used: null });
        expect("recipient" in refused).toBe(false);
        expect(await countOf(`test_recipient:${who}:minute`, NOW)).toBe(1);
        expect(await countOf(`test_recipient:${who}:day`, DAY_START)).toBe(1);
      });

      it("at once (group commit): one number's sends are numbered 1..n, each counted once", async () => {
        const bucket = `m-${newId("key")}`;
        const who = newId("key");
        const another = newId("key");
        const outcomes = await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            claim(message("test"), tallied(bucket, i % 3 === 2 ? another : who)),
          ),
        );
        const counted = (o: (typeof outcomes)[number]) =>
          o.claimed && "recipient" in o ? o.recipient : undefined;
        const mine = outcomes.filter((_, i) => i % 3 !== 2).map(counted);
        const theirs = outcomes.filter((_, i) => i % 3 === 2).map(counted);
        expect(mine.map((r) => r?.minute).sort((a, b) => Number(a) - Number(b))).toEqual([
          1, 2, 3, 4, 5, 6, 7, 8,
        ]);
        expect(mine.map((r) => r?.day).sort((a, b) => Number(a) - Number(b))).toEqual([
          1, 2, 3, 4, 5, 6, 7, 8,
        ]);
        expect(theirs.map((r) => r?.minute).sort((a, b) => Number(a) - Number(b))).toEqual([1, 2, 3, 4]);
        expect(await countOf(`test_recipient:${who}:minute`, NOW)).toBe(8);
        expect(await countOf(`test_recipient:${another}:day`, DAY_START)).toBe(4);
        expect(await countOf(bucket, NOW)).toBe(12);
      });
    });
  });

  describe("counters, credits and the free tier (in a transaction)", () => {
    it("consume moves a counter only within its limit; release gives back, never below zero", async () => {
      const window = minute(`c-${newId("key")}`, 3);
      await s.store.transaction(async (tx) => {
        expect(await tx.limits.consume(window, 2, 3)).toBe(2);
        expect(await tx.limits.consume(window, 2, 3)).toBeNull();
        expect(await tx.limits.read(window.bucket, NOW)).toBe(2);
        expect(await tx.limits.consume(window, 1, 3)).toBe(3);
        await tx.limits.release(window.bucket, NOW, 1);
        expect(await tx.limits.read(window.bucket, NOW)).toBe(2);
        await tx.limits.release(window.bucket, NOW, 5);
        expect(await tx.limits.read(window.bucket, NOW)).toBe(0);
      });
    });

    it("consumeMany moves each window within its own limit in one step: the refused one stays, the others move", async () => {
      const a = minute(`m-${newId("key")}`, 2);
      const b = minute(`m-${newId("key")}`, 1);
      await s.store.transaction(async (tx) => {
        const both = [
          { ...a, cost: 1, limit: 2 },
          { ...b, cost: 1, limit: 1 },
        ];
        expect(await tx.limits.consumeMany(both)).toEqual([1, 1]);
        expect(await tx.limits.consumeMany(both)).toEqual([2, null]);
        expect(await tx.limits.consumeMany(both)).toEqual([null, null]);
        expect(await tx.limits.read(a.bucket, NOW)).toBe(2);
        expect(await tx.limits.read(b.bucket, NOW)).toBe(1);
        // A cost above the limit moves nothing, even on a fresh window.
        const c = minute(`m-${newId("key")}`, 1);
        expect(await tx.limits.consumeMany([{ ...c, cost: 2, limit: 1 }])).toEqual([null]);
        expect(await tx.limits.read(c.bucket, NOW)).toBe(0);
      });
    });

    it("reserve takes credits only while the balance lasts; a message is refunded at most once", async () => {
      const [a, b] = [newId("msg"), newId("msg")];
      const projectId = s.projectId;
      await s.store.transaction(async (tx) => {
        expect(await tx.ledger.reserve({ projectId, messageId: a, amount: CREDITS, now: NOW })).toEqual({
          ok: true,
        });
        expect(await tx.ledger.reserve({ projectId, messageId: b, amount: 1, now: NOW })).toEqual({
          ok: false,
          code: "insufficient_credits",
        });
        const refund = { projectId, messageId: a, amount: CREDITS, note: "contract", now: LATER };
        expect(await tx.ledger.refund(refund)).toBe(true);
        expect(await tx.ledger.refund(refund)).toBe(false);
        expect(await tx.ledger.reserve({ projectId, messageId: b, amount: CREDITS, now: NOW })).toEqual({
          ok: true,
        });
        expect(await tx.ledger.refund({ ...refund, messageId: b })).toBe(true);
      });
    });

    it("reserveCountedAndCommit counts the minute and reserves in one statement that commits its transaction; a refusal (the minute used up, the balance short) keeps nothing of it", async () => {
      const [a, b, c, d] = [newId("msg"), newId("msg"), newId("msg"), newId("msg")];
      const projectId = s.projectId;
      const window = minute(`rc-${newId("key")}`, 2);
      const other = minute(`rc-other-${newId("key")}`, 0);
      /** A transaction that counts `other` first, then ends with the reservation (rolled back when refused). */
      const reserve = (messageId: string, amount: number, limit = 2) =>
        transactionOrRollback(s.store, async (tx, rollback) => {
          await tx.limits.consume(other, 1, 100);
          const step = await tx.ledger.reserveCountedAndCommit(
            { projectId, messageId, amount, now: NOW },
            { ...window, limit },
          );
          return step.used === null || !step.reservation.ok ? rollback(step) : step;
        });
      const counts = () =>
        s.store.transaction(async (tx) => [
          await tx.limits.read(window.bucket, NOW),
          await tx.limits.read(other.bucket, NOW),
        ]);
      expect(await reserve(a, 1)).toEqual({ used: 1, reservation: { ok: true } });
      expect(await reserve(b, 1)).toEqual({ used: 2, reservation: { ok: true } });
      // Committed, the transaction's earlier write with it.
      expect(await counts()).toEqual([2, 2]);
      // The minute is used up: nothing reserved, nothing of the transaction kept.
      expect(await reserve(c, 1)).toEqual({
        used: null,
        reservation: { ok: false, code: "insufficient_credits" },
      });
      expect(await counts()).toEqual([2, 2]);
      // One credit left (of 3): two with room in the minute are refused, and the minute's count goes back.
      expect(await reserve(d, 2, 10)).toEqual({
        used: 3,
        reservation: { ok: false, code: "insufficient_credits" },
      });
      expect(await counts()).toEqual([2, 2]);
      // The one credit left is still there, and the two reservations are refunded once each.
      await s.store.transaction(async (tx) => {
        expect(await tx.ledger.reserve({ projectId, messageId: c, amount: 2, now: NOW })).toEqual({
          ok: false,
          code: "insufficient_credits",
        });
        for (const messageId of [a, b]) {
          expect(
            await tx.ledger.refund({ projectId, messageId, amount: 1, note: "contract", now: LATER }),
          ).toBe(true);
        }
        expect(await tx.ledger.reserve({ projectId, messageId: c, amount: CREDITS, now: NOW })).toEqual({
          ok: true,
        });
        expect(
          await tx.ledger.refund({ projectId, messageId: c, amount: CREDITS, note: "contract", now: LATER }),
        ).toBe(true);
      });
    });

    it("insertQueuedLive: the key, the queued message and the recipient's windows in one statement, and whether the project has paid credits", async () => {
      /** Rolls back what `work` wrote, as a refused send's transaction does. */
      const rolledBack = async (work: (tx: SendMessageTx) => Promise<void>) => {
        const undo = new Error("roll back");
        await expect(
          s.store.transaction(async (tx) => {
            await work(tx);
            throw undo;
          }),
        ).rejects.toBe(undo);
      };
      const recipient = (limits: number[]) =>
        limits.map((limit) => ({ ...minute(`rcp-${newId("key")}`, limit), cost: 1 }));
      await rolledBack(async (tx) => {
        const first = message("live");
        const windows = recipient([5, 5]);
        expect(await tx.messages.insertQueuedLive(first, { recipient: windows })).toEqual({
          written: true,
          recipient: [1, 1],
          paid: false,
        });
        expect(await tx.limits.read(windows[0]?.bucket ?? "", NOW)).toBe(1);
        expect(await tx.messages.insertQueuedLive(message("live"), { recipient: windows })).toMatchObject({
          recipient: [2, 2],
        });
        // A window refused: the other moves (the caller rolls back).
        expect(await tx.messages.insertQueuedLive(message("live"), { recipient: recipient([0, 5]) })).toEqual(
          {
            written: true,
            recipient: [null, 1],
            paid: false,
          },
        );
        // A taken key writes and counts nothing.
        const again = recipient([5, 5]);
        expect(
          await tx.messages.insertQueuedLive(message("live", { scope: first.scope }), { recipient: again }),
        ).toEqual({
          written: false,
          prior: inFlight(first),
        });
        expect(await tx.limits.read(again[0]?.bucket ?? "", NOW)).toBe(0);
      });
      // writeAheadPaid refuses a project without paid credits, keeping nothing of it.
      const unpaid = message("live");
      const windows = recipient([5, 5]);
      const projectMinute = minute(`min-${newId("key")}`, 5);
      expect(
        await s.store.messages.writeAheadPaid(unpaid, { recipient: windows, minute: projectMinute }),
      ).toEqual({ refused: true });
      expect(await s.store.messages.read(unpaid.messageId)).toBeNull();
      expect(await s.store.idempotency.find(unpaid.scope, NOW)).toBeNull();
      await rolledBack(async (tx) => {
        expect(await tx.limits.read(windows[0]?.bucket ?? "", NOW)).toBe(0);
        expect(await tx.limits.read(projectMinute.bucket, NOW)).toBe(0);
      });
      await s.markPaid();
      await rolledBack(async (tx) => {
        expect(await tx.messages.insertQueuedLive(message("live"), { recipient: recipient([5, 5]) })).toEqual(
          {
            written: true,
            recipient: [1, 1],
            paid: true,
          },
        );
      });
    });

    it("writeAheadPaid: a paid project's key, queued message, windows, minute and reservation in one statement, or nothing at all", async () => {
      await s.markPaid();
      const recipient = (limits: number[]) =>
        limits.map((limit) => ({ ...minute(`rcp-${newId("key")}`, limit), cost: 1 }));
      /** The counts of `buckets` in this minute, read in a transaction that keeps nothing. */
      const counts = async (buckets: string[]) => {
        const read: number[] = [];
        const undo = new Error("read only");
        await expect(
          s.store.transaction(async (tx) => {
            for (const bucket of buckets) read.push(await tx.limits.read(bucket, NOW));
            throw undo;
          }),
        ).rejects.toBe(undo);
        return read;
      };
      const windows = recipient([5, 5]);
      const projectMinute = minute(`min-${newId("key")}`, 3);
      const buckets = [...windows.map((window) => window.bucket), projectMinute.bucket];
      const first = message("live");
      expect(
        await s.store.messages.writeAheadPaid(first, { recipient: windows, minute: projectMinute }),
      ).toEqual({
        written: true,
        used: 1,
      });
      expect((await s.store.messages.read(first.messageId))?.status).toBe("queued");
      expect(await s.store.idempotency.find(first.scope, NOW)).toEqual(inFlight(first));
      expect(await counts(buckets)).toEqual([1, 1, 1]);

      // A taken key writes and counts nothing, and is not a refusal.
      const again = message("live", { scope: first.scope });
      expect(
        await s.store.messages.writeAheadPaid(again, { recipient: windows, minute: projectMinute }),
      ).toEqual({
        written: false,
        prior: inFlight(first),
      });
      expect(await s.store.messages.read(again.messageId)).toBeNull();
      expect(await counts(buckets)).toEqual([1, 1, 1]);

      /** A refusal keeps nothing: no message, no key, no count moved, no credit taken. */
      const refusedKeepsNothing = async (
        m: QueuedMessage,
        counters: Parameters<SendMessageStore["messages"]["writeAheadPaid"]>[1],
        before: number[],
      ) => {
        expect(await s.store.messages.writeAheadPaid(m, counters)).toEqual({ refused: true });
        expect(await s.store.messages.read(m.messageId)).toBeNull();
        expect(await s.store.idempotency.find(m.scope, NOW)).toBeNull();
        expect(await counts(buckets)).toEqual(before);
      };
      // A recipient's daily window with room for one send: it takes it…
      const full = recipient([5, 1]);
      const taken = message("live");
      expect(
        await s.store.messages.writeAheadPaid(taken, { recipient: full, minute: projectMinute }),
      ).toEqual({
        written: true,
        used: 2,
      });
      expect(await counts(full.map((window) => window.bucket))).toEqual([1, 1]);
      // …and refuses the next: the recipient's minute window and the project's minute do not move.
      await refusedKeepsNothing(message("live"), { recipient: full, minute: projectMinute }, [1, 1, 2]);
      expect(await counts(full.map((window) => window.bucket))).toEqual([1, 1]);
      // The project's minute is used up (3 of 3): the recipient's windows do not move.
      expect(
        await s.store.messages.writeAheadPaid(message("live"), { recipient: windows, minute: projectMinute }),
      ).toEqual({ written: true, used: 3 });
      await refusedKeepsNothing(message("live"), { recipient: windows, minute: projectMinute }, [2, 2, 3]);
      // Credits short: more than any balance here.
      const roomy = minute(`min-${newId("key")}`, 5);
      await refusedKeepsNothing(
        message("live", { creditsReserved: 1_000 }),
        { recipient: windows, minute: roomy },
        [2, 2, 3],
      );
      expect(await counts([roomy.bucket])).toEqual([0]);
      // Both messages that were written are there, queued; the refused ones left the ledger alone: a
      // refund of each written message's reservation gives back exactly its credits once.
      for (const m of [first, taken]) {
        expect((await s.store.messages.read(m.messageId))?.status).toBe("queued");
        await s.store.transaction(async (tx) => {
          expect(
            await tx.ledger.refund({
              projectId: s.projectId,
              messageId: m.messageId,
              amount: 1,
              note: "contract",
              now: LATER,
            }),
          ).toBe(true);
        });
      }
    });
  });
});

describe.each(await availableBackends())("the live write-ahead's commit (%s)", (kind) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(kind);
  });
  afterAll(() => t?.drop());

  it("insertQueuedLive and recordOutcome make their own transactions commit without waiting for the disk, and no other; flushCommitted runs", async () => {
    const projectId = newId("prj");
    await createStore(t.db).projects.create(projectId, NOW);
    const messageId = newId("msg");
    const queued: QueuedMessage = {
      messageId,
      idempotencyId: newId("idem"),
      scope: { projectId, mode: "live", key: newId("key") },
      fingerprint: "fp",
      expiresAt: new Date(NOW.getTime() + DAY_MS),
      apiKeyId: "key_commit",
      recipientMasked: "+9955••••••56",
      recipientCiphertext: new Uint8Array([1]),
      textCiphertext: new Uint8Array([2]),
      template: "verification_code",
      locale: "en",
      sender: "SMSGE",
      segments: 1,
      encoding: "GSM-7",
      provider: "ubill",
      creditsReserved: 1,
      now: NOW,
    };
    const show = async (sql: Pick<TestDatabase["db"], "query">) =>
      (await sql.query<{ synchronous_commit: string }>("SHOW synchronous_commit"))[0]?.synchronous_commit;
    const inside = await t.db.transaction(async (sql) => {
      const before = await show(sql);
      const claim = await messageStore(sql).insertQueuedLive(queued, { recipient: [] });
      return { before, claim, after: await show(sql) };
    });
    expect(inside).toEqual({
      before: "on",
      claim: { written: true, recipient: [], paid: false },
      after: "off",
    });
    expect(await t.db.transaction((sql) => show(sql))).toBe("on");
    await flushCommitted(t.db);
    expect((await createStore(t.db).messages.read(messageId))?.status).toBe("queued");

    // The record that moves it on commits the same way (the send flushes after giving its slot back).
    const response = {
      id: messageId,
      object: "message",
      to: queued.recipientMasked,
      status: "submitted",
      segments: 1,
      error: null,
      created_at: NOW.toISOString(),
      updated_at: NOW.toISOString(),
    } as const;
    const recorded = await t.db.transaction(async (sql) => {
      const moved = await messageStore(sql).recordOutcome({
        messageId,
        createdAt: NOW,
        idempotencyId: queued.idempotencyId,
        outcome: { status: "submitted", error: null, providerRef: "ref-commit", nextCheckAt: null },
        response,
        now: NOW,
      });
      return { moved, after: await show(sql) };
    });
    expect(recorded).toEqual({ moved: true, after: "off" });
    expect(await t.db.transaction((sql) => show(sql))).toBe("on");
    await flushCommitted(t.db);
    expect((await createStore(t.db).messages.read(messageId))?.status).toBe("submitted");
  });

  it("a database that sets sms.synchronous_commit to on (a synchronous standby behind a failover endpoint) commits them durably", async () => {
    const projectId = newId("prj");
    await createStore(t.db).projects.create(projectId, NOW);
    const messageId = newId("msg");
    const show = async (sql: Pick<TestDatabase["db"], "query">) =>
      (await sql.query<{ synchronous_commit: string }>("SHOW synchronous_commit"))[0]?.synchronous_commit;
    const inside = await t.db.transaction(async (sql) => {
      // What ALTER DATABASE … SET sms.synchronous_commit = 'on' gives every session (docs/deploy.md).
      await sql.query("SET LOCAL sms.synchronous_commit = 'on'");
      const claim = await messageStore(sql).insertQueuedLive(
        {
          messageId,
          idempotencyId: newId("idem"),
          scope: { projectId, mode: "live", key: newId("key") },
          fingerprint: "fp",
          expiresAt: new Date(NOW.getTime() + DAY_MS),
          apiKeyId: "key_commit",
          recipientMasked: "+9955••••••56",
          recipientCiphertext: new Uint8Array([1]),
          textCiphertext: new Uint8Array([2]),
          template: "verification_code",
          locale: "en",
          sender: "SMSGE",
          segments: 1,
          encoding: "GSM-7",
          provider: "ubill",
          creditsReserved: 1,
          now: NOW,
        },
        { recipient: [] },
      );
      return { claim, after: await show(sql) };
    });
    expect(inside).toEqual({ claim: { written: true, recipient: [], paid: false }, after: "on" });
  });

  it("every relaxed commit in the store goes through the one switch (RELAXED_COMMIT)", async () => {
    const { readdir, readFile } = await import("node:fs/promises");
    const dir = new URL("../src/store/", import.meta.url);
    const offenders: string[] = [];
    for (const name of await readdir(dir)) {
      if (!name.endsWith(".ts") || name === "relaxed-commit.ts") continue;
      const text = await readFile(new URL(name, dir), "utf8");
      if (/synchronous_commit'\s*,\s*'off'/.test(text)) offenders.push(name);
    }
    expect(offenders).toEqual([]);
  });
});

describe.runIf((await availableBackends()).includes("postgres"))(
  "the send path's statements' plans on PostgreSQL",
  () => {
    let t: TestDatabase;
    beforeAll(async () => {
      t = await createPinnedTestDatabase("postgres", NOW);
    });
    afterAll(() => t?.drop());

    /**
     * The generic plan of `sql` on this fresh database, where idempotency_records is empty and has no
     * statistics: what each pooled connection's prepared statement keeps until the next ANALYZE, however
     * much the table grows meanwhile.
     */
    async function genericPlan(sql: string, values: Record<number, string> = {}): Promise<string> {
      const parameters = Math.max(...[...sql.matchAll(/\$(\d+)/g)].map((match) => Number(match[1])));
      return t.db.transaction(async (tx) => {
        await tx.query("SET LOCAL plan_cache_mode = force_generic_plan");
        await tx.query(`PREPARE plan_check AS ${sql}`);
        const rows = await tx.query<{ "QUERY PLAN": string }>(
          `EXPLAIN EXECUTE plan_check(${Array.from({ length: parameters }, (_, index) => values[index + 1] ?? "NULL").join(", ")})`,
        );
        await tx.query("DEALLOCATE plan_check");
        return rows.map((row) => row["QUERY PLAN"]).join("\n");
      });
    }

    it("the claims run prepared; the answers unnamed for their first ANSWERED_UNNAMED_EXECUTIONS executions", () => {
      expect(statementName(CLAIM_COUNTED_MANY_SQL.text)).toMatch(/^sms_/);
      expect(statementName(INSERT_ANSWERED_SQL.text)).toBeUndefined();
      expect(statementName("SELECT 1 AS prepared_as_usual")).toMatch(/^sms_/);
    });

    it("on an empty table: the claims (and the one-statement send) probe the key's unique index, the answers the primary key", async () => {
      for (const sql of [CLAIM_COUNTED_MANY_SQL.text, CLAIM_ANSWERED_SQL.text]) {
        const claims = await genericPlan(sql);
        expect(claims).toContain("idempotency_records_project_id_mode_key_key");
        expect(claims).not.toMatch(/Seq Scan on idempotency_records/);
      }
      const answers = await genericPlan(INSERT_ANSWERED_SQL.text);
      expect(answers).toContain("idempotency_records_pkey");
      expect(answers).not.toMatch(/Seq Scan on idempotency_records/);
    });

    it("the claims probe the unique index at every size; the answers the primary key once the table holds as many rows as they run unnamed", async () => {
      const projectId = newId("prj");
      await createStore(t.db).projects.create(projectId, NOW);
      const answer = JSON.stringify({
        id: "msg_0000000000000000000000",
        to: "+995 5** *** *12",
        status: "submitted",
        segments: 1,
        error: null,
        created_at: NOW.toISOString(),
        updated_at: NOW.toISOString(),
      });
      let rows = 0;
      /** Fills idempotency_records to `count` rows like the test sends' (every second one answered). */
      const fillTo = async (count: number) => {
        await t.db.query(
          `INSERT INTO idempotency_records (id, project_id, mode, key, fingerprint, message_id, response_body, expires_at)
           SELECT 'idem_' || g, $1, 'test', 'key_' || g, repeat('f', 64), 'msg_' || g,
                  CASE WHEN g % 2 = 0 THEN CAST($2 AS jsonb) END, CAST($3 AS timestamptz)
           FROM generate_series(CAST($4 AS integer), CAST($5 AS integer)) g`,
          [projectId, answer, new Date(NOW.getTime() + 86_400_000), rows + 1, count],
        );
        rows = count;
      };
      for (const count of [1, 400, ANSWERED_UNNAMED_EXECUTIONS]) {
        await fillTo(count);
        for (const [name, sql] of [
          ["claims", CLAIM_COUNTED_MANY_SQL.text],
          ["one statement", CLAIM_ANSWERED_SQL.text],
        ]) {
          const plan = await genericPlan(sql as string);
          expect(plan, `${name}, ${count} rows`).toContain("idempotency_records_project_id_mode_key_key");
          expect(plan, `${name}, ${count} rows`).not.toMatch(/Seq Scan on idempotency_records/);
        }
      }
      const answers = await genericPlan(INSERT_ANSWERED_SQL.text);
      expect(answers).toContain("idempotency_records_pkey");
      expect(answers).not.toMatch(/Seq Scan on idempotency_records/);
    });

    it("a live send's record and release find the queued message by its primary key, in its month only", async () => {
      // Planned on empty, unanalysed partitions (a fresh database, a new month): the plan each connection
      // keeps. Compared as the enum, the status chose (status, created_at), every queued message's entries.
      const key: Record<string, string> = { messageId: "'msg_0'", createdAt: `'${NOW.toISOString()}'` };
      for (const [name, statement] of [
        ["record", recordOutcomeSql(NOW)],
        ["release", releaseSql(NOW)],
      ] as const) {
        // The key's values by their parameters' numbers.
        const values = Object.fromEntries(
          statement.names.flatMap((param, index) =>
            param in key ? [[index + 1, key[param] as string]] : [],
          ),
        );
        const plan = await genericPlan(statement.text, values);
        expect(plan, name).toMatch(/Index Scan using messages_p\d{4}_\d{2}_pkey/);
        expect(plan, name).not.toContain("status_created_at_idx");
        // Planned over the message's month alone.
        expect(plan, name).not.toMatch(/Subplans Removed/);
        expect(plan.match(/Index Scan using messages_p\d{4}_\d{2}_pkey/g), name).toHaveLength(1);
      }
    });
  },
);

describe.each(await availableBackends())("claimCountedMany, one statement per window (%s)", (kind) => {
  const suite = projectDatabase(kind, NOW);

  const claimOf = (key = newId("key")): CountedClaim["claim"] => ({
    idempotencyId: newId("idem"),
    scope: { projectId: suite.projectId, mode: "test", key },
    fingerprint: `fp-${newId("key")}`,
    messageId: newId("msg"),
    expiresAt: new Date(NOW.getTime() + DAY_MS),
    now: NOW,
  });
  const window = (bucket: string, limit: number) => ({
    bucket,
    start: NOW,
    end: new Date(NOW.getTime() + 60_000),
    limit,
  });

  it("within the limit: every distinct key claimed, the counter moved once, `used` in order", async () => {
    const bucket = `m-${newId("key")}`;
    const items = Array.from({ length: 4 }, () => ({ claim: claimOf(), counter: window(bucket, 10) }));
    const outcomes = await claimCountedMany(suite.t.db, items);
    expect(outcomes).toEqual([1, 2, 3, 4].map((used) => ({ claimed: true, used })));
    expect(await createStore(suite.t.db).limits.read(bucket, NOW)).toBe(4);
  });

  it("past the limit: filled exactly to it, the rest claimed uncounted; a repeated or earlier key is taken, without a statement of its own", async () => {
    const bucket = `m-${newId("key")}`;
    const earlier = claimOf();
    await claimCountedMany(suite.t.db, [{ claim: earlier, counter: window(`other-${bucket}`, 10) }]);
    const items = Array.from({ length: 8 }, () => ({ claim: claimOf(), counter: window(bucket, 5) }));
    const first = items[0]?.claim as CountedClaim["claim"];
    const repeated = { ...claimOf(first.scope.key), fingerprint: "fp-repeat" };
    const outcomes = await claimCountedMany(suite.t.db, [
      ...items,
      { claim: repeated, counter: window(bucket, 5) },
      { claim: { ...claimOf(earlier.scope.key) }, counter: window(bucket, 5) },
      { claim: { ...claimOf(earlier.scope.key) }, counter: window(bucket, 5) },
    ]);
    expect(outcomes.slice(0, 8)).toEqual([
      ...[1, 2, 3, 4, 5].map((used) => ({ claimed: true, used })),
      ...[0, 0, 0].map(() => ({ claimed: true, used: null })),
    ]);
    // A key repeated in the batch sees what a concurrent statement would: taken, look it up
    // (its first appearance claimed it), or the same prior record as its first appearance.
    expect(outcomes[8]).toEqual({ claimed: false, prior: null });
    expect((await createStore(suite.t.db).idempotency.find(first.scope, NOW))?.messageId).toBe(
      first.messageId,
    );
    expect(outcomes[9]).toMatchObject({ claimed: false, prior: { messageId: earlier.messageId } });
    expect(outcomes[10]).toEqual(outcomes[9]);
    expect(await createStore(suite.t.db).limits.read(bucket, NOW)).toBe(5);
  });
});

describe.each((await availableBackends()).filter((kind) => kind === "postgres"))(
  "claimAnsweredMany when a concurrent claim commits first (%s)",
  (kind) => {
    const suite = projectDatabase(kind, NOW);

    it("the key claimed meanwhile by a statement that commits first: nothing written, nothing counted", async () => {
      const store = createStore(suite.t.db);
      const bucket = `m-${newId("key")}`;
      const counter = { bucket, start: NOW, end: new Date(NOW.getTime() + 60_000), limit: 10 };
      const m = queuedMessage(suite.projectId, "test", { fingerprint: "fp-second" });
      const { key } = m.scope;
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let inserted!: () => void;
      const claimedFirst = new Promise<void>((resolve) => {
        inserted = resolve;
      });
      // Another request's claim of the key, uncommitted while this statement starts; a second key in the
      // same statement is claimed and counted alone.
      const first = suite.t.db.transaction(async (tx) => {
        await tx.query(
          `INSERT INTO idempotency_records (id, project_id, mode, key, fingerprint, message_id, response_body, expires_at, created_at)
           VALUES ($1, $2, 'test', $3, 'fp-first', 'msg_first', NULL, $4, $5)`,
          [newId("idem"), suite.projectId, key, m.expiresAt, NOW],
        );
        inserted();
        await held;
      });
      await claimedFirst;
      const other: QueuedMessage = {
        ...m,
        messageId: newId("msg"),
        idempotencyId: newId("idem"),
        scope: { ...m.scope, key: newId("key") },
      };
      const second = claimAnsweredMany(
        suite.t.db,
        [m, other].map((message) => ({
          message,
          outcome: SUBMITTED,
          response: { id: message.messageId } as MessageResource,
          now: LATER,
          counter,
        })),
      );
      // The statement waits on the uncommitted key (ON CONFLICT), then finds it committed.
      await vi.waitFor(
        async () => {
          const [row] = await suite.t.db.query<{ waiting: number }>(
            "SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
          );
          expect(row?.waiting).toBe(1);
        },
        { timeout: 10_000 },
      );
      release();
      await first;
      expect(await second).toEqual([
        { claimed: false, prior: null },
        { claimed: true, used: 1 },
      ]);
      expect(await store.limits.read(bucket, NOW)).toBe(1);
      expect(await store.messages.read(m.messageId)).toBeNull();
      expect((await store.messages.read(other.messageId))?.status).toBe("submitted");
      expect((await store.idempotency.find(m.scope, NOW))?.messageId).toBe("msg_first");
    });
  },
);
