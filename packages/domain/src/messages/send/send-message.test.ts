// sendMessage's branches without a database: a hand-written in-memory store
// (test/support/fake-send-store.ts, held to the real store's contract by
// test/send-store.contract.integration.test.ts), a real keyring and scripted
// providers. The SQL itself is proven by the integration suites.
import { generateKeySpec, parseKeyring } from "@sms/crypto";
import { DatabaseUnavailableError } from "@sms/db";
import { beforeEach, describe, expect, it } from "vitest";
import {
  emptyTables,
  fakeStore,
  type Hooks,
  type Row,
  type Tables,
} from "../../../test/support/fake-send-store.ts";
import type { MessageResource } from "../../model/message.ts";
import type { SmsProvider, SubmitOutcome, SubmitRequest } from "../../provider.ts";
import { createSlots, type Slots } from "../../slots.ts";
import { createAnsweredKeys } from "../answered-keys.ts";
import { createProjectRefusals, type ProjectRefusals } from "./project-refusals.ts";
import { type LivePlaces, type SendMessageInput, sendMessage } from "./send-message.ts";

const T0 = new Date("2026-11-22T10:00:30Z");
const keyring = parseKeyring(generateKeySpec("unit"));
const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

function scripted(name: "simulator" | "ubill", outcomes: Array<SubmitOutcome | Error>, pure = false) {
  const submitted: SubmitRequest[] = [];
  const provider: SmsProvider = {
    name,
    pure,
    async submit(request) {
      submitted.push(request);
      const next = outcomes.shift() ?? { kind: "accepted", providerRef: `ref-${submitted.length}` };
      if (next instanceof Error) throw next;
      return next;
    },
    checkStatus: async () => ({ kind: "pending" }),
  };
  return { provider, submitted };
}

/** Holds every send `provider` is asked for until open() is called; `calls` counts them. */
function holdAtUbill(provider: SmsProvider) {
  const submit = provider.submit.bind(provider);
  const held = { calls: 0, open: () => {} };
  const gate = new Promise<void>((resolve) => {
    held.open = resolve;
  });
  provider.submit = async (request) => {
    held.calls++;
    await gate;
    return submit(request);
  };
  return held;
}

/** Waits, a millisecond at a time (at most 2 000 turns), until `done()`; fails the test if it never is. */
async function settleUntil(done: () => boolean) {
  for (let turn = 0; turn < 2_000 && !done(); turn++) await new Promise((resolve) => setTimeout(resolve, 1));
  expect(done()).toBe(true);
}

/** Counts the reads of a key's record (`store.idempotency.find`) from now on; returns the count so far. */
function countFinds(store: ReturnType<typeof fakeStore>): () => number {
  const find = store.idempotency.find;
  let count = 0;
  store.idempotency.find = (...args) => {
    count++;
    return find(...args);
  };
  return () => count;
}

/** uBill's places as the tests read them: the calls in use and waiting, then the room in use and waiting. */
const placesState = (bound: LivePlaces) => [
  bound.places.inUse,
  bound.places.waiting,
  bound.admitted.inUse,
  bound.admitted.waiting,
];

describe("sendMessage", () => {
  let tables: Tables;
  let now: Date;
  beforeEach(() => {
    tables = emptyTables();
    now = T0;
  });

  function setup(
    options: {
      test?: Array<SubmitOutcome | Error>;
      live?: Array<SubmitOutcome | Error> | null;
      perMinute?: number;
      perRecipient?: { perMinute: number; perDay: number };
      freeTier?: number;
      hooks?: Hooks;
      /** The instance's answered keys, on the fake timer (none: every replay reads the store). */
      answered?: { maxEntries?: number; revalidateAfterMs?: number };
      /** Called on every pause of a bounded wait, after the fake time moved on. */
      onSleep?: (sleptMs: number) => void;
      /** Live sends' database slots. */
      liveSlots?: Slots;
      /** uBill's places for live sends. */
      liveSubmissions?: LivePlaces;
      /** Every transaction waits for this before it starts (open ones counted in `transactions`). */
      transactionGate?: Promise<void>;
      /** The instance's memory of projects whose live sends go straight to the transaction. */
      projectRefusals?: ProjectRefusals;
      /** The test provider is pure (the simulator): a test send is one statement (claimAnswered). */
      pure?: boolean;
    } = {},
  ) {
    const test = scripted("simulator", options.test ?? [], options.pure);
    const live = options.live === null ? null : scripted("ubill", options.live ?? []);
    // Real time, faked: the waits run out without waiting.
    const timer = {
      elapsed: 0,
      sleeps: 0,
      monotonicMs: () => timer.elapsed,
      async sleep(ms: number) {
        timer.elapsed += ms;
        timer.sleeps++;
        options.onSleep?.(timer.elapsed);
      },
    };
    const store = fakeStore(tables, options.hooks);
    const transactions = { open: 0, mostOpen: 0 };
    const gate = options.transactionGate;
    if (gate) {
      /** Holds `work` at the gate, counted as a write-ahead open (a transaction, or the paid one's statement). */
      const gated = async <T>(work: () => Promise<T>): Promise<T> => {
        transactions.open++;
        transactions.mostOpen = Math.max(transactions.mostOpen, transactions.open);
        try {
          await gate;
          return await work();
        } finally {
          transactions.open--;
        }
      };
      const inner = store.transaction.bind(store);
      store.transaction = (work) => gated(() => inner(work));
      const paid = store.messages.writeAheadPaid.bind(store.messages);
      store.messages.writeAheadPaid = (m, counters) => gated(() => paid(m, counters));
    }
    const deps = {
      store,
      liveSlots: options.liveSlots,
      liveSubmissions: options.liveSubmissions,
      keyring,
      clock: { now: () => now },
      timer,
      providers: { test: test.provider, live: live?.provider ?? null },
      answered: options.answered && createAnsweredKeys({ ...options.answered, timer }),
      projectRefusals: options.projectRefusals,
      config: {
        messagesPerMinute: options.perMinute ?? 100,
        recipientLimits: options.perRecipient ?? { perMinute: 2, perDay: 10 },
        freeTierDailySegments: options.freeTier ?? 20,
        defaultSender: "SMSGE",
        simulatorDelayMs: 5_000,
        inFlightWaitMs: 15_000,
        recordRetryMs: 30_000,
        unresolvedRetryAfterMs: 60_000,
      },
    };
    const send = (overrides: Partial<SendMessageInput> & { to?: string; code?: string } = {}) =>
      sendMessage(deps, {
        project: { id: "prj_unit", sender: null, senderBrandId: null, claimed: true },
        mode: "test",
        keyId: "key_unit",
        idempotencyKey: "k-1",
        logger: silent,
        request: {
          to: overrides.to ?? "+995555123456",
          template: "verification_code",
          variables: { code: overrides.code ?? "482913" },
          locale: "en",
        },
        ...overrides,
      });
    return { send, test, live, timer, transactions, store };
  }

  /** The record a first request with the default key and body leaves while it waits for the provider. */
  async function inFlightRecord(body: { code?: string } = {}) {
    const record = {
      id: "idem_1",
      fingerprint: await keyring.fingerprint(
        JSON.stringify(["+995555123456", "verification_code", [["code", body.code ?? "482913"]], "en"]),
      ),
      response: null as MessageResource | null,
      expiresAt: new Date(T0.getTime() + 86_400_000),
      messageId: "msg_first" as string | undefined,
    };
    tables.records.set("prj_unit|test|k-1", record);
    return record;
  }

  const FIRST_ANSWER: MessageResource = {
    id: "msg_first",
    object: "message",
    to: "+9955••••••56",
    status: "submitted",
    segments: 1,
    error: null,
    created_at: "2026-11-22T10:00:30Z",
    updated_at: "2026-11-22T10:00:30Z",
  };

  it("accepted: writes ahead, submits once and records `submitted`, first check after the simulator delay", async () => {
    const { send, test } = setup({ test: [{ kind: "accepted", providerRef: "sim-1" }] });
    const result = await send();
    expect(result).toMatchObject({
      ok: true,
      replayed: false,
      message: { status: "submitted", error: null, segments: 1 },
    });
    if (!result.ok || result.replayed) throw new Error("unreachable");
    expect(result.message.to).toBe("+9955••••••56");
    expect(result.rateLimit).toMatchObject({ limit: 100, remaining: 99, window: "minute" });
    expect(test.submitted).toEqual([
      expect.objectContaining({ to: "+995555123456", sender: { name: "SMSGE", brandId: null } }),
    ]);
    const row = tables.messages.get(result.message.id);
    expect(row).toMatchObject({ status: "submitted", providerRef: "sim-1", creditsReserved: 0 });
    expect(row?.nextCheckAt).toEqual(new Date(T0.getTime() + 5_000));
    // The text and the number are stored encrypted only.
    expect(await keyring.decrypt(row!.textCiphertext, row!.messageId)).toContain("482913");
  });

  describe("a pure simulator: a test send in one statement", () => {
    it("asks the simulator first, then claims, counts and writes the answered message in one durable statement", async () => {
      const { send, test } = setup({ pure: true, test: [{ kind: "accepted", providerRef: "sim-1" }] });
      const result = await send();
      expect(result).toMatchObject({ ok: true, replayed: false, message: { status: "submitted" } });
      if (!result.ok || result.replayed) throw new Error("unreachable");
      expect(result.rateLimit).toMatchObject({ limit: 100, remaining: 99, window: "minute" });
      expect(test.submitted).toHaveLength(1);
      expect(tables.writeAheads).toEqual([{ mode: "test", relaxed: false, inTransaction: false }]);
      expect(tables.messages.get(result.message.id)).toMatchObject({
        status: "submitted",
        providerRef: "sim-1",
      });
      expect(tables.records.get("prj_unit|test|k-1")?.response).toEqual(result.message);
      // The same request again replays the answer; nothing more is written or counted.
      expect(await send()).toEqual({ ok: true, replayed: true, message: result.message });
      expect(tables.messages.size).toBe(1);
      expect([...tables.counters.values()]).toEqual([1]);
    });

    it("over the per-minute limit: 429, and nothing is claimed, counted or written", async () => {
      const { send } = setup({ pure: true, perMinute: 1 });
      await send({ idempotencyKey: "k-1" });
      expect(await send({ idempotencyKey: "k-2" })).toMatchObject({
        ok: false,
        code: "rate_limited",
        subject: "project",
      });
      expect([...tables.records.keys()]).toEqual(["prj_unit|test|k-1"]);
      expect(tables.messages.size).toBe(1);
      expect([...tables.counters.values()]).toEqual([1]);
    });

    it("a key in flight: waits for the first request's answer and replays it, writing nothing", async () => {
      const record = await inFlightRecord();
      const { send } = setup({ pure: true, onSleep: () => (record.response = FIRST_ANSWER) });
      expect(await send()).toEqual({ ok: true, replayed: true, message: FIRST_ANSWER });
      expect(tables.messages.size).toBe(0);
      expect(tables.counters.size).toBe(0);
    });

    it("lost race: the key claimed at the same moment by a request that has answered; its answer stands", async () => {
      const { send } = setup({ pure: true, hooks: { loseRaceTo: FIRST_ANSWER } });
      expect(await send()).toMatchObject({ ok: true, replayed: true, message: FIRST_ANSWER });
      expect(tables.messages.size).toBe(0);
      expect(tables.counters.size).toBe(0);
    });

    it("not reached: the simulator is asked once, the claim taken and given back (503), and a retry sends", async () => {
      const { send, test } = setup({
        pure: true,
        test: [
          { kind: "unreachable", reason: "scripted" },
          { kind: "accepted", providerRef: "sim-2" },
        ],
      });
      expect(await send()).toEqual({ ok: false, code: "provider_unavailable" });
      expect(test.submitted).toHaveLength(1);
      expect(tables.writeAheads).toEqual([{ mode: "test", relaxed: true, inTransaction: false }]);
      expect(tables.records.size).toBe(0);
      expect(await send()).toMatchObject({ ok: true, replayed: false, message: { status: "submitted" } });
      expect(test.submitted).toHaveLength(2);
    });

    it("a verification's send (its row written before the simulator sees the SMS) keeps the two statements", async () => {
      const { send, test } = setup({ pure: true });
      const order: string[] = [];
      const submitTest = test.provider.submit.bind(test.provider);
      test.provider.submit = async (request) => {
        order.push("submit");
        return submitTest(request);
      };
      const result = await send({
        beforeSubmit: async () => {
          order.push(`beforeSubmit with ${tables.records.size} claim`);
        },
      });
      expect(result).toMatchObject({ ok: true, replayed: false });
      expect(order).toEqual(["beforeSubmit with 1 claim", "submit"]);
      expect(tables.writeAheads).toEqual([{ mode: "test", relaxed: true, inTransaction: false }]);
    });

    it("a live send is never one statement", async () => {
      tables.hasPaidCredits = true;
      tables.balance = 5;
      const { send } = setup({ pure: true });
      expect(await send({ mode: "live" })).toMatchObject({ ok: true, replayed: false });
      expect(tables.writeAheads.map((w) => w.mode)).toEqual(["live"]);
      expect(tables.flushes).toBe(2);
    });
  });

  it("a test key's write-ahead commits asynchronously, outside a transaction; a live key's too (one statement for a paid project, a transaction for a free-tier one), made durable before the provider hears of it", async () => {
    // The test write-ahead may skip the disk only because recordOutcome's
    // durable commit flushes it before anything is answered (store/messages.ts).
    // The live one must be on disk before uBill is contacted: flushCommitted.
    tables.hasPaidCredits = true;
    tables.balance = 5;
    const { send, live } = setup();
    if (!live) throw new Error("a live provider is configured");
    const flushesAtSubmit: number[] = [];
    const submitLive = live.provider.submit.bind(live.provider);
    live.provider.submit = async (request) => {
      flushesAtSubmit.push(tables.flushes);
      return submitLive(request);
    };
    expect(await send()).toMatchObject({ ok: true, replayed: false });
    expect(tables.flushes).toBe(0);
    expect(await send({ mode: "live", idempotencyKey: "k-live" })).toMatchObject({
      ok: true,
      replayed: false,
    });
    expect(tables.writeAheads).toEqual([
      { mode: "test", relaxed: true, inTransaction: false },
      { mode: "live", relaxed: true, inTransaction: false },
    ]);
    expect(flushesAtSubmit).toEqual([1]);
    // Its record too commits without waiting for the disk, and is made durable before the answer.
    expect(tables.flushes).toBe(2);

    // Without paid credits (a claimed project's free credits) the one statement refuses, keeping
    // nothing, and the transaction takes the free tier's allowance.
    tables.hasPaidCredits = false;
    expect(await send({ mode: "live", idempotencyKey: "k-free", to: "+995555123457" })).toMatchObject({
      ok: true,
      replayed: false,
    });
    expect(tables.writeAheads.slice(2)).toEqual([
      { mode: "live", relaxed: true, inTransaction: false },
      { mode: "live", relaxed: true, inTransaction: true },
    ]);
    expect(flushesAtSubmit).toEqual([1, 3]);
    expect(tables.flushes).toBe(4);
    expect(tables.messages.size).toBe(3);
  });

  it("a live write-ahead that cannot be made durable sends nothing: 503, the message, key, counters and credits given back", async () => {
    tables.hasPaidCredits = true;
    tables.balance = 5;
    const { send, live } = setup({ hooks: { flushOutage: 1 } });
    if (!live) throw new Error("a live provider is configured");
    expect(await send({ mode: "live", idempotencyKey: "k-live" })).toEqual({
      ok: false,
      code: "provider_unavailable",
    });
    expect(live.submitted).toEqual([]);
    expect(tables.messages.size).toBe(0);
    expect(tables.records.size).toBe(0);
    expect(tables.balance).toBe(5);
    expect([...tables.counters.values()].every((count) => count === 0)).toBe(true);
    // The key is free: the same request again sends.
    expect(await send({ mode: "live", idempotencyKey: "k-live" })).toMatchObject({
      ok: true,
      replayed: false,
    });
    expect(live.submitted).toHaveLength(1);
  });

  it("a live write-ahead the database lost before it was durable (a crash): 503, nothing sent, and a retry sends", async () => {
    tables.hasPaidCredits = true;
    tables.balance = 5;
    const { send, live } = setup({ hooks: { flushOutage: 1, flushLosesQueued: true } });
    if (!live) throw new Error("a live provider is configured");
    expect(await send({ mode: "live", idempotencyKey: "k-live" })).toEqual({
      ok: false,
      code: "provider_unavailable",
    });
    expect(live.submitted).toEqual([]);
    expect(await send({ mode: "live", idempotencyKey: "k-live" })).toMatchObject({
      ok: true,
      replayed: false,
    });
    expect(live.submitted).toHaveLength(1);
  });

  it("replay: the same key and body answer the first response, unchanged, without a second submission", async () => {
    const { send, test } = setup();
    const first = await send();
    now = new Date(T0.getTime() + 60_000);
    const again = await send();
    expect(again).toEqual({ ok: true, replayed: true, message: first.ok ? first.message : null });
    expect(test.submitted).toHaveLength(1);
    // A replay is not counted against the per-minute limit.
    expect([...tables.counters.values()]).toEqual([1]);
  });

  it("the same key with another body is refused, and nothing is sent", async () => {
    const { send, test } = setup();
    await send();
    expect(await send({ code: "111111" })).toEqual({ ok: false, code: "idempotency_key_reused" });
    expect(test.submitted).toHaveLength(1);
  });

  describe("answered keys in memory", () => {
    it("replays a key this instance answered without the store, and refuses another body the same way", async () => {
      const { send, test } = setup({ answered: {} });
      const first = await send();
      if (!first.ok) throw new Error("the first send failed");
      tables.records.clear(); // whatever the store holds now, memory answers (within the revalidation age)
      now = new Date(T0.getTime() + 10_000);
      expect(await send()).toEqual({ ok: true, replayed: true, message: first.message });
      expect(await send({ code: "111111" })).toEqual({ ok: false, code: "idempotency_key_reused" });
      expect(tables.writeAheads).toHaveLength(1);
      expect(test.submitted).toHaveLength(1);
      expect([...tables.counters.values()]).toEqual([1]);
    });

    it("checks a different body before the key it reuses: an invalid one is refused as invalid, not as reused", async () => {
      const { send } = setup({ answered: {} });
      await send();
      expect(await send({ code: "not digits" })).toMatchObject({ ok: false, code: "invalid_variables" });
      expect(await send({ code: "111111" })).toEqual({ ok: false, code: "idempotency_key_reused" });
    });

    it("remembers an answer read from the store, so the next replay skips it", async () => {
      const { send } = setup({ answered: {} });
      const record = await inFlightRecord();
      record.response = FIRST_ANSWER;
      expect(await send()).toEqual({ ok: true, replayed: true, message: FIRST_ANSWER });
      expect(tables.writeAheads).toHaveLength(1);
      expect(await send()).toEqual({ ok: true, replayed: true, message: FIRST_ANSWER });
      expect(tables.writeAheads).toHaveLength(1);
    });

    it("forgets an answer when its record expires: after 24 hours the key sends again", async () => {
      const { send, test } = setup({ answered: {} });
      const first = await send();
      now = new Date(T0.getTime() + 86_400_000);
      const again = await send();
      expect(again).toMatchObject({ ok: true, replayed: false });
      expect(again.ok && first.ok && again.message.id !== first.message.id).toBe(true);
      expect(test.submitted).toHaveLength(2);
    });

    it("answers from memory only for a short revalidation age: then the store decides, and a record gone there (purged early, lost in a failover) is not replayed", async () => {
      const { send, test, timer } = setup({ answered: { revalidateAfterMs: 15_000 } });
      const first = await send();
      if (!first.ok) throw new Error("the first send failed");
      // Within the age: from memory, even though the store lost the record.
      tables.records.clear();
      timer.elapsed += 14_000;
      expect(await send()).toEqual({ ok: true, replayed: true, message: first.message });
      // Past it: the store is asked, finds nothing, and this instance sends as every other one would.
      timer.elapsed += 2_000;
      const again = await send();
      expect(again).toMatchObject({ ok: true, replayed: false });
      expect(again.ok && again.message.id !== first.message.id).toBe(true);
      expect(test.submitted).toHaveLength(2);
    });

    it("a revalidated entry that the store still holds is remembered again, with the store's expiry", async () => {
      const { send, timer, store } = setup({ answered: { revalidateAfterMs: 15_000 } });
      const record = await inFlightRecord();
      record.response = FIRST_ANSWER;
      expect(await send()).toEqual({ ok: true, replayed: true, message: FIRST_ANSWER });
      timer.elapsed += 20_000;
      // Read again from the store (one read of the key's record, no write-ahead)…
      const finds = countFinds(store);
      expect(await send()).toEqual({ ok: true, replayed: true, message: FIRST_ANSWER });
      expect([finds(), tables.writeAheads.length]).toEqual([1, 1]);
      // …and then from memory again.
      expect(await send()).toEqual({ ok: true, replayed: true, message: FIRST_ANSWER });
      expect([finds(), tables.writeAheads.length]).toEqual([1, 1]);
      // The store's expiry bounds it: once the record expires, the key sends anew.
      now = new Date(record.expiresAt.getTime());
      expect(await send()).toMatchObject({ ok: true, replayed: false });
    });

    it("past the revalidation age, replays arriving together share one read of the record: no herd through the send path", async () => {
      const { send, test, timer, store } = setup({ answered: { revalidateAfterMs: 15_000 } });
      const first = await send();
      if (!first.ok) throw new Error("the first send failed");
      timer.elapsed += 20_000;
      const finds = countFinds(store);
      const replays = await Promise.all(Array.from({ length: 8 }, () => send()));
      expect(replays).toEqual(Array(8).fill({ ok: true, replayed: true, message: first.message }));
      // One read for the eight; nothing prepared, written or sent again.
      expect([finds(), tables.writeAheads.length, test.submitted.length]).toEqual([1, 1, 1]);
      // Another body with the key, while the read runs, is refused as reused once the read answers.
      timer.elapsed += 20_000;
      const [again, other] = await Promise.all([send(), send({ code: "111111" })]);
      expect(again).toEqual({ ok: true, replayed: true, message: first.message });
      expect(other).toEqual({ ok: false, code: "idempotency_key_reused" });
      expect([finds(), tables.writeAheads.length]).toEqual([2, 1]);
    });

    it("a reread that fails forgets the entry: the send's own path meets the database as any request does", async () => {
      const { send, test, timer, store } = setup({ answered: { revalidateAfterMs: 15_000 } });
      const first = await send();
      if (!first.ok) throw new Error("the first send failed");
      timer.elapsed += 20_000;
      const find = store.idempotency.find;
      let failures = 1;
      store.idempotency.find = async (...args) => {
        if (failures-- > 0) throw new DatabaseUnavailableError("connect_failed");
        return find(...args);
      };
      // The write-ahead finds the record: a replay all the same, nothing sent again.
      expect(await send()).toEqual({ ok: true, replayed: true, message: first.message });
      expect([tables.writeAheads.length, test.submitted.length]).toEqual([2, 1]);
    });

    it("keeps at most its number of entries, dropping the oldest first", () => {
      const answered = createAnsweredKeys({ maxEntries: 2 });
      const scope = (key: string) => ({ projectId: "prj_unit", mode: "test" as const, key });
      const record = {
        fingerprint: "f",
        responseBody: FIRST_ANSWER,
        expiresAt: new Date(T0.getTime() + 1_000),
      };
      for (const key of ["a", "b", "c"]) answered.remember(scope(key), record);
      expect(["a", "b", "c"].map((key) => answered.get(scope(key), T0) !== null)).toEqual([
        false,
        true,
        true,
      ]);
      expect(answered.get({ ...scope("b"), mode: "live" }, T0)).toBeNull();
    });
  });

  it("in flight: a duplicate waits for the first request's answer and replays it, sending nothing", async () => {
    const record = await inFlightRecord();
    const { send, test, timer } = setup({
      onSleep: (elapsed) => {
        if (elapsed >= 300) record.response = FIRST_ANSWER;
      },
    });
    expect(await send()).toEqual({ ok: true, replayed: true, message: FIRST_ANSWER });
    expect(test.submitted).toHaveLength(0);
    expect(timer.sleeps).toBeGreaterThan(1);
    // Waiting is free: nothing was counted for the duplicate.
    expect(tables.counters.size).toBe(0);
  });

  it("in flight with another body: 409 at once, without waiting", async () => {
    await inFlightRecord({ code: "111111" });
    const { send, timer } = setup();
    expect(await send()).toEqual({ ok: false, code: "idempotency_key_reused" });
    expect(timer.sleeps).toBe(0);
  });

  it("in flight and never answered, its message queued (a send crashed after writing ahead): unresolved once the wait is over", async () => {
    const record = await inFlightRecord();
    record.messageId = "msg_queued";
    tables.messages.set("msg_queued", { messageId: "msg_queued", status: "queued" } as Row);
    const { send, test, timer } = setup();
    expect(await send()).toEqual({ ok: false, code: "first_request_unresolved", retryAfterMs: 60_000 });
    expect(timer.elapsed).toBe(15_000);
    expect(test.submitted).toHaveLength(0);
    expect(tables.messages.size).toBe(1);
  });

  it("a claim that never got its message (a test send died between its two statements): the duplicate takes the key over once its wait is over, and sends", async () => {
    await inFlightRecord();
    const { send, test, timer } = setup();
    expect(await send()).toMatchObject({ ok: true, replayed: false, message: { status: "submitted" } });
    expect(timer.elapsed).toBe(15_000);
    expect(test.submitted).toHaveLength(1);
    expect(tables.messages.size).toBe(1);
  });

  it("a claim another duplicate gave up first: this one waits for that duplicate's send and replays it", async () => {
    const first = await inFlightRecord();
    const ANSWER = { ...FIRST_ANSWER, id: "msg_other" };
    const { send, test, timer } = setup({
      hooks: {
        // The other duplicate's wait ran out a moment earlier: it gave the
        // claim up and claimed the key for its own send, not yet answered.
        beforeReleaseAbandoned: () => {
          tables.records.set("prj_unit|test|k-1", { ...first, id: "idem_other", messageId: "msg_other" });
        },
      },
      onSleep: (elapsed) => {
        const record = tables.records.get("prj_unit|test|k-1");
        if (elapsed > 15_000 && record?.messageId === "msg_other") record.response = ANSWER;
      },
    });
    expect(await send()).toEqual({ ok: true, replayed: true, message: ANSWER });
    expect(timer.elapsed).toBeGreaterThan(15_000);
    expect(test.submitted).toHaveLength(0);
  });

  it("a claim given up while its send was in flight: nothing is written, and the caller hears to retry", async () => {
    const { send, test } = setup();
    // The simulator answers only after a duplicate that waited in vain took
    // the key over (what releaseAbandoned does).
    test.provider.submit = async () => {
      tables.records.clear();
      return { kind: "accepted", providerRef: "sim-late" };
    };
    expect(await send()).toEqual({ ok: false, code: "first_request_unresolved", retryAfterMs: 1_000 });
    expect(tables.messages.size).toBe(0);
  });

  it("in flight, then released (the first request sent nothing): the duplicate starts over and sends", async () => {
    await inFlightRecord();
    const { send, test } = setup({
      onSleep: (elapsed) => {
        if (elapsed >= 100) tables.records.delete("prj_unit|test|k-1");
      },
    });
    expect(await send()).toMatchObject({ ok: true, replayed: false, message: { status: "submitted" } });
    expect(test.submitted).toHaveLength(1);
    expect([...tables.counters.values()]).toEqual([1]);
  });

  it("lost race: another request claimed the key at the same moment; its answer stands, nothing is counted", async () => {
    const { send, test } = setup({ hooks: { loseRaceTo: FIRST_ANSWER } });
    expect(await send()).toEqual({ ok: true, replayed: true, message: FIRST_ANSWER });
    expect(test.submitted).toHaveLength(0);
    expect(tables.messages.size).toBe(0);
    expect(tables.counters.size).toBe(0);
  });

  it("limited: over the per-minute limit nothing is written or sent", async () => {
    const { send, test } = setup({ perMinute: 1 });
    expect((await send()).ok).toBe(true);
    const refused = await send({ idempotencyKey: "k-2" });
    expect(refused).toMatchObject({ ok: false, code: "rate_limited", limit: { limit: 1, remaining: 0 } });
    if (refused.ok || refused.code !== "rate_limited") throw new Error("unreachable");
    expect(refused.limit.resetAt).toEqual(new Date("2026-11-22T10:01:00Z"));
    expect(test.submitted).toHaveLength(1);
    expect(tables.messages.size).toBe(1);
    // The refused request gave its key back: the same key works in the next minute.
    expect(tables.records.size).toBe(1);
    now = new Date("2026-11-22T10:01:00Z");
    expect(await send({ idempotencyKey: "k-2" })).toMatchObject({ ok: true, replayed: false });
  });

  it("the database goes away after the provider accepted: recording is retried, and the send ends `submitted` with its reference", async () => {
    const { send, timer } = setup({
      test: [{ kind: "accepted", providerRef: "sim-kept" }],
      hooks: { outage: 4 },
    });
    const result = await send();
    expect(result).toMatchObject({ ok: true, replayed: false, message: { status: "submitted" } });
    if (!result.ok) throw new Error("unreachable");
    expect(tables.messages.get(result.message.id)).toMatchObject({
      status: "submitted",
      providerRef: "sim-kept",
    });
    expect(tables.records.get("prj_unit|test|k-1")?.response).toEqual(result.message);
    expect(timer.sleeps).toBe(4);
    expect(timer.elapsed).toBeLessThan(30_000);
  });

  it("recording is retried only for so long: then the outage stands; a test send leaves only its unanswered claim", async () => {
    const { send, timer } = setup({ hooks: { outage: 1_000 } });
    await expect(send()).rejects.toBeInstanceOf(DatabaseUnavailableError);
    expect(timer.elapsed).toBe(30_000);
    expect(tables.messages.size).toBe(0);
    expect([...tables.records.values()].map((record) => record.response)).toEqual([null]);
  });

  it("an error that is not an outage is not retried", async () => {
    const { send, timer } = setup({ hooks: { outage: 1, outageError: () => new Error("a bug") } });
    await expect(send()).rejects.toThrow("a bug");
    expect(timer.sleeps).toBe(0);
  });

  it("unreachable while the database is away: the release is retried too, and the key is free again", async () => {
    const { send } = setup({ test: [{ kind: "unreachable", reason: "refused" }], hooks: { outage: 2 } });
    expect(await send()).toEqual({ ok: false, code: "provider_unavailable" });
    expect(tables.messages.size + tables.records.size).toBe(0);
  });

  it("invalid variables are refused before anything is written, naming the variable", async () => {
    const { send, test } = setup();
    const result = await send({ code: "12" });
    expect(result).toMatchObject({
      ok: false,
      code: "invalid_variables",
      detail: expect.stringContaining("`code`"),
    });
    expect(test.submitted).toHaveLength(0);
    expect(tables.records.size + tables.messages.size + tables.counters.size).toBe(0);
  });

  it("rejected (test): `failed` with provider_rejected, answered 201", async () => {
    const { send } = setup({ test: [{ kind: "rejected", code: "provider_rejected", reason: "no" }] });
    expect(await send()).toMatchObject({
      ok: true,
      replayed: false,
      message: { status: "failed", error: { code: "provider_rejected" } },
    });
  });

  it("indeterminate, or an adapter that throws: `unknown` with provider_unavailable, never re-sent", async () => {
    const { send, test } = setup({
      test: [{ kind: "indeterminate", reason: "timeout" }, new Error("adapter bug")],
    });
    expect(await send()).toMatchObject({
      ok: true,
      message: { status: "unknown", error: { code: "provider_unavailable" } },
    });
    expect(await send({ idempotencyKey: "k-2" })).toMatchObject({ ok: true, message: { status: "unknown" } });
    expect(test.submitted).toHaveLength(2);
    expect(await send()).toMatchObject({ ok: true, replayed: true, message: { status: "unknown" } });
    expect(test.submitted).toHaveLength(2);
  });

  it("unreachable: 503, the message and the key are released, and a retry with the same key sends", async () => {
    const { send, test } = setup({ test: [{ kind: "unreachable", reason: "refused" }] });
    expect(await send()).toEqual({ ok: false, code: "provider_unavailable" });
    expect(tables.messages.size).toBe(0);
    expect(tables.records.size).toBe(0);
    expect(await send()).toMatchObject({ ok: true, replayed: false, message: { status: "submitted" } });
    expect(test.submitted).toHaveLength(2);
  });

  describe("live keys", () => {
    const live = (overrides: Partial<SendMessageInput> & { to?: string } = {}) => ({
      mode: "live" as const,
      ...overrides,
    });
    /** How each live write-ahead since `from` ran: the one statement, or the transaction. */
    const ways = (from = 0) =>
      tables.writeAheads.slice(from).map((step) => (step.inTransaction ? "transaction" : "statement"));

    it("a paid project refused as a whole (its minute used up) goes straight to the transaction until that minute ends; recipient refusals are not remembered", async () => {
      tables.hasPaidCredits = true;
      tables.balance = 10;
      const { send } = setup({ perMinute: 2, projectRefusals: createProjectRefusals() });
      const to = (n: number) => `+99555500000${n}`;
      expect(await send(live({ to: to(1), idempotencyKey: "m-1" }))).toMatchObject({ ok: true });
      // The recipient's minute (2) is used up by two sends to one number: refused, not remembered.
      expect(await send(live({ to: to(1), idempotencyKey: "m-2" }))).toMatchObject({ ok: true });
      expect(await send(live({ to: to(1), idempotencyKey: "m-3" }))).toMatchObject({
        ok: false,
        code: "rate_limited",
        subject: "project",
      });
      // That refusal was the project's (its minute was used up too): remembered.
      expect(ways()).toEqual(["statement", "statement", "statement", "transaction"]);
      const before = tables.writeAheads.length;
      for (const [n, key] of [
        [2, "m-4"],
        [3, "m-5"],
      ] as const)
        expect(await send(live({ to: to(n), idempotencyKey: key }))).toMatchObject({
          ok: false,
          code: "rate_limited",
          subject: "project",
        });
      expect(ways(before)).toEqual(["transaction", "transaction"]);
      // The next minute, the statement again.
      now = new Date(T0.getTime() + 60_000);
      const next = tables.writeAheads.length;
      expect(await send(live({ to: to(4), idempotencyKey: "m-6" }))).toMatchObject({ ok: true });
      expect(ways(next)).toEqual(["statement"]);
      expect(tables.balance).toBe(7);
    });

    it("a recipient refusal alone is not remembered: the project's next send to another number uses the statement", async () => {
      tables.hasPaidCredits = true;
      tables.balance = 10;
      const { send } = setup({
        perRecipient: { perMinute: 1, perDay: 10 },
        projectRefusals: createProjectRefusals(),
      });
      expect(await send(live({ to: "+995555000001", idempotencyKey: "r-1" }))).toMatchObject({ ok: true });
      expect(await send(live({ to: "+995555000001", idempotencyKey: "r-2" }))).toMatchObject({
        ok: false,
        code: "rate_limited",
        subject: "recipient",
      });
      expect(await send(live({ to: "+995555000002", idempotencyKey: "r-3" }))).toMatchObject({ ok: true });
      expect(ways()).toEqual(["statement", "statement", "transaction", "statement"]);
    });

    it("a project without paid credits goes straight to the transaction for the rest of the minute; once it has paid credits, its sends use the statement again", async () => {
      tables.hasPaidCredits = false;
      tables.balance = 10;
      const { send } = setup({ projectRefusals: createProjectRefusals() });
      for (const n of [1, 2, 3])
        expect(await send(live({ to: `+99555500000${n}`, idempotencyKey: `f-${n}` }))).toMatchObject({
          ok: true,
        });
      expect(ways()).toEqual(["statement", "transaction", "transaction", "transaction"]);
      // Paid credits granted meanwhile: the transaction serves the send, and the project is forgotten.
      tables.hasPaidCredits = true;
      const granted = tables.writeAheads.length;
      for (const n of [4, 5])
        expect(await send(live({ to: `+99555500000${n}`, idempotencyKey: `f-${n}` }))).toMatchObject({
          ok: true,
        });
      expect(ways(granted)).toEqual(["transaction", "statement"]);
    });

    it("short of credits: remembered for the minute; every refusal still names insufficient_credits", async () => {
      tables.hasPaidCredits = true;
      tables.balance = 0;
      const { send } = setup({ projectRefusals: createProjectRefusals() });
      for (const n of [1, 2])
        expect(await send(live({ to: `+99555500000${n}`, idempotencyKey: `c-${n}` }))).toEqual({
          ok: false,
          code: "insufficient_credits",
        });
      expect(ways()).toEqual(["statement", "transaction", "transaction"]);
      expect(tables.messages.size).toBe(0);
    });

    it("a burst of live sends waits for the live slots, holding no transaction, while test sends go on", async () => {
      tables.hasPaidCredits = true;
      tables.balance = 10;
      const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
      const burst = async (liveSlots: Slots | undefined) => {
        let open = () => {};
        const transactionGate = new Promise<void>((resolve) => {
          open = resolve;
        });
        const { send, transactions } = setup({ liveSlots, transactionGate });
        const sends = ["+995555000001", "+995555000002", "+995555000003"].map((to, index) =>
          send(live({ to, idempotencyKey: `burst-${liveSlots ? "slots" : "none"}-${index}` })),
        );
        await settle();
        const whileBlocked = { open: transactions.open, waiting: liveSlots?.waiting ?? 0 };
        // A test send needs no live slot: it is answered while the live ones wait.
        const testSend = await send({ idempotencyKey: `test-${liveSlots ? "slots" : "none"}` });
        open();
        const results = await Promise.all(sends);
        return { whileBlocked, testSend, results, mostOpen: transactions.mostOpen };
      };

      const slots = createSlots(1);
      const bounded = await burst(slots);
      expect(bounded.whileBlocked).toEqual({ open: 1, waiting: 2 });
      expect(bounded.testSend).toMatchObject({ ok: true, message: { status: "submitted" } });
      expect(bounded.mostOpen).toBe(1);
      for (const result of bounded.results)
        expect(result).toMatchObject({ ok: true, message: { status: "submitted" } });
      expect([slots.inUse, slots.waiting]).toEqual([0, 0]);

      // Without slots, all three hold a transaction at once.
      const unbounded = await burst(undefined);
      expect(unbounded.whileBlocked.open).toBe(3);
      expect(tables.balance).toBe(4);
    });

    /**
     * A paid project with 10 credits, and one place at uBill with room for `ahead` sends written ahead
     * beside it (a send waits up to a minute); `admitted` is the room (with no send ahead, the place's).
     */
    const onePlace = (ahead = 0) => {
      tables.hasPaidCredits = true;
      tables.balance = 10;
      const bound: LivePlaces = { places: createSlots(1), admitted: createSlots(1 + ahead), waitMs: 60_000 };
      const { send, live: ubill } = setup({ liveSubmissions: bound });
      if (!ubill) throw new Error("no live provider");
      return { bound, admitted: bound.admitted, send, ubill };
    };

    it("a live send waits for a place at uBill holding nothing; one that finds none in time is a 503 with nothing written, and its retry is safe", async () => {
      const { bound, admitted, send, ubill } = onePlace();
      // uBill holds every send until the gate opens.
      const held = holdAtUbill(ubill.provider);
      const first = send(live({ to: "+995555000021", idempotencyKey: "place-1" }));
      await settleUntil(() => held.calls === 1);
      // The first holds the one place at uBill; the second waits for it with nothing written or reserved.
      const second = send(live({ to: "+995555000022", idempotencyKey: "place-2" }));
      await settleUntil(() => admitted.waiting === 1);
      const written = () => ({
        messages: tables.messages.size,
        records: [...tables.records.keys()],
        balance: tables.balance,
        ledger: tables.ledger.length,
      });
      expect(written()).toEqual({ messages: 1, records: ["prj_unit|live|place-1"], balance: 9, ledger: 1 });

      // One that finds no place within its wait: 503, nothing written, reserved or sent.
      const impatient = setup({ liveSubmissions: { ...bound, waitMs: 20 } });
      expect(await impatient.send(live({ to: "+995555000023", idempotencyKey: "place-3" }))).toEqual({
        ok: false,
        code: "provider_unavailable",
      });
      expect(written()).toEqual({ messages: 1, records: ["prj_unit|live|place-1"], balance: 9, ledger: 1 });
      expect(impatient.live?.submitted).toEqual([]);
      expect([admitted.inUse, admitted.waiting]).toEqual([1, 1]);

      held.open();
      for (const result of await Promise.all([first, second]))
        expect(result).toMatchObject({ ok: true, replayed: false, message: { status: "submitted" } });
      expect(held.calls).toBe(2);
      expect([admitted.inUse, admitted.waiting]).toEqual([0, 0]);
      // The refused key was never claimed: its retry is a fresh send.
      expect(await send(live({ to: "+995555000023", idempotencyKey: "place-3" }))).toMatchObject({
        ok: true,
        replayed: false,
        message: { status: "submitted" },
      });
      expect([tables.messages.size, tables.balance]).toEqual([3, 7]);
    });

    it("every place at uBill taken: a key already answered is replayed, or 409 for another body, without waiting for a place", async () => {
      const { bound, admitted, send, ubill } = onePlace();
      const answered = await send(live({ to: "+995555000041", idempotencyKey: "answered" }));
      expect(answered).toMatchObject({ ok: true, replayed: false });
      // uBill now holds the next send, and with it the one place.
      const held = holdAtUbill(ubill.provider);
      const holding = send(live({ to: "+995555000042", idempotencyKey: "holding" }));
      await settleUntil(() => admitted.inUse > 0);
      expect([admitted.inUse, admitted.waiting]).toEqual([1, 0]);
      // A send that waited for a place would be refused after 20 ms: these never wait.
      const impatient = setup({ liveSubmissions: { ...bound, waitMs: 20 } });
      expect(await impatient.send(live({ to: "+995555000041", idempotencyKey: "answered" }))).toEqual({
        ok: true,
        replayed: true,
        message: answered.ok ? answered.message : undefined,
      });
      expect(await impatient.send(live({ to: "+995555000049", idempotencyKey: "answered" }))).toEqual({
        ok: false,
        code: "idempotency_key_reused",
      });
      // A new key does wait, and is refused with nothing written.
      expect(await impatient.send(live({ to: "+995555000043", idempotencyKey: "new" }))).toEqual({
        ok: false,
        code: "provider_unavailable",
      });
      expect([tables.messages.size, tables.balance]).toEqual([2, 8]);
      held.open();
      expect(await holding).toMatchObject({ ok: true, replayed: false });
    });

    it("a send written ahead waits for the next place at uBill; one that finds none in time is released, a 503 with nothing kept, and its retry is safe", async () => {
      const { bound, send, ubill } = onePlace(1);
      const held = holdAtUbill(ubill.provider);
      const written = () => ({
        messages: tables.messages.size,
        records: [...tables.records.keys()].sort(),
        balance: tables.balance,
      });
      const first = send(live({ to: "+995555000051", idempotencyKey: "ahead-1" }));
      await settleUntil(() => held.calls === 1);

      // Admitted beside the one place, written ahead, and not given a place within its wait: released.
      const impatient = setup({ liveSubmissions: { ...bound, waitMs: 20 } });
      expect(await impatient.send(live({ to: "+995555000059", idempotencyKey: "ahead-late" }))).toEqual({
        ok: false,
        code: "provider_unavailable",
      });
      expect(written()).toEqual({ messages: 1, records: ["prj_unit|live|ahead-1"], balance: 9 });
      expect(held.calls).toBe(1);

      // Written ahead while the first is at uBill: its message and credit are already there.
      const second = send(live({ to: "+995555000052", idempotencyKey: "ahead-2" }));
      await settleUntil(() => bound.places.waiting === 1);
      expect(written()).toEqual({
        messages: 2,
        records: ["prj_unit|live|ahead-1", "prj_unit|live|ahead-2"],
        balance: 8,
      });
      expect(held.calls).toBe(1);
      // No room beside them: the third waits to be admitted, holding nothing.
      const third = send(live({ to: "+995555000053", idempotencyKey: "ahead-3" }));
      await settleUntil(() => bound.admitted.waiting === 1);
      expect(written().messages).toBe(2);

      held.open();
      for (const result of await Promise.all([first, second, third]))
        expect(result).toMatchObject({ ok: true, replayed: false, message: { status: "submitted" } });
      expect(held.calls).toBe(3);
      expect(placesState(bound)).toEqual([0, 0, 0, 0]);
      // The released key was given back: its retry sends, once.
      expect(await send(live({ to: "+995555000059", idempotencyKey: "ahead-late" }))).toMatchObject({
        ok: true,
        replayed: false,
        message: { status: "submitted" },
      });
      expect([tables.messages.size, tables.balance, held.calls]).toEqual([4, 6, 4]);
    });

    it("a place at uBill is given back however the send ends: uBill not reached, accepted, refused in the write-ahead, replayed", async () => {
      tables.hasPaidCredits = true;
      tables.balance = 1;
      const bound: LivePlaces = { places: createSlots(1), admitted: createSlots(2), waitMs: 60_000 };
      const { send } = setup({
        liveSubmissions: bound,
        live: [{ kind: "unreachable", reason: "connection refused" }],
      });
      // uBill not reached: 503, the credit refunded.
      expect(await send(live({ to: "+995555000031", idempotencyKey: "given-1" }))).toEqual({
        ok: false,
        code: "provider_unavailable",
      });
      expect(tables.balance).toBe(1);
      expect(placesState(bound)).toEqual([0, 0, 0, 0]);
      // Accepted: the one credit spent.
      expect(await send(live({ to: "+995555000032", idempotencyKey: "given-2" }))).toMatchObject({
        ok: true,
      });
      // Refused in the write-ahead (no credits left).
      expect(await send(live({ to: "+995555000033", idempotencyKey: "given-3" }))).toMatchObject({
        ok: false,
        code: "insufficient_credits",
      });
      expect(placesState(bound)).toEqual([0, 0, 0, 0]);
      // A replay of an answered key.
      expect(await send(live({ to: "+995555000032", idempotencyKey: "given-2" }))).toMatchObject({
        ok: true,
        replayed: true,
      });
      expect(placesState(bound)).toEqual([0, 0, 0, 0]);
    });

    it("a live send's record takes a live slot too, ahead of the write-aheads still waiting", async () => {
      tables.hasPaidCredits = true;
      tables.balance = 10;
      const inner = createSlots(1);
      const started: string[] = [];
      const liveSlots: Slots = {
        run: (work, options) =>
          inner.run(() => {
            started.push(options?.first ? "record" : "write-ahead");
            return work();
          }, options),
        size: inner.size,
        get inUse() {
          return inner.inUse;
        },
        get waiting() {
          return inner.waiting;
        },
      };
      const { send } = setup({ liveSlots });
      const results = await Promise.all(
        ["+995555000011", "+995555000012", "+995555000013"].map((to, index) =>
          send(live({ to, idempotencyKey: `ordered-${index}` })),
        ),
      );
      for (const result of results)
        expect(result).toMatchObject({ ok: true, message: { status: "submitted" } });
      expect(started.filter((kind) => kind === "record")).toHaveLength(3);
      // The first send's record did not wait for the third send's write-ahead.
      expect(started.indexOf("record")).toBeLessThan(started.lastIndexOf("write-ahead"));
      expect([inner.inUse, inner.waiting]).toEqual([0, 0]);
    });

    it("the recovery sweep decided first: its stored answer stands", async () => {
      tables.balance = 3;
      const { send } = setup({ hooks: { sweepFirst: true } });
      expect(await send(live())).toMatchObject({ ok: true, replayed: false, message: { status: "unknown" } });
    });

    it("recording is retried only for so long: then the outage stands, and the message stays queued for the sweep", async () => {
      tables.balance = 3;
      const { send, timer } = setup({ hooks: { outage: 1_000 } });
      await expect(send(live())).rejects.toBeInstanceOf(DatabaseUnavailableError);
      expect(timer.elapsed).toBe(30_000);
      expect([...tables.messages.values()].map((row) => row.status)).toEqual(["queued"]);
    });

    it("reserve one credit per segment and take free-tier segments; both stay for an accepted send", async () => {
      tables.balance = 3;
      const { send, live: provider, test } = setup();
      const result = await send(live());
      expect(result).toMatchObject({ ok: true, message: { status: "submitted" } });
      expect(test.submitted).toHaveLength(0);
      expect(provider?.submitted).toHaveLength(1);
      expect(tables.balance).toBe(2);
      expect([...tables.counters.entries()].find(([key]) => key.startsWith("free_tier_segments:"))?.[1]).toBe(
        1,
      );
      const row = [...tables.messages.values()][0];
      expect(row).toMatchObject({ provider: "ubill", creditsReserved: 1, nextCheckAt: now });
    });

    it("a rejection refunds the credits and gives the free-tier segments back", async () => {
      tables.balance = 3;
      const { send } = setup({ live: [{ kind: "rejected", code: "sender_not_allowed", reason: "brand" }] });
      expect(await send(live())).toMatchObject({
        ok: true,
        message: { status: "failed", error: { code: "sender_not_allowed" } },
      });
      expect(tables.balance).toBe(3);
      expect(tables.ledger.map((entry) => entry.kind)).toEqual(["reservation", "refund"]);
      expect([...tables.counters.entries()].find(([key]) => key.startsWith("free_tier_segments:"))?.[1]).toBe(
        0,
      );
    });

    it("an indeterminate answer keeps the credits charged", async () => {
      tables.balance = 3;
      const { send } = setup({ live: [{ kind: "indeterminate", reason: "timeout" }] });
      expect(await send(live())).toMatchObject({ ok: true, message: { status: "unknown" } });
      expect(tables.balance).toBe(2);
    });

    it("unreachable refunds and releases, with no message left; only the write-ahead waits for a flush (the release commits durably)", async () => {
      tables.balance = 3;
      const { send } = setup({ live: [{ kind: "unreachable", reason: "refused" }] });
      expect(await send(live())).toEqual({ ok: false, code: "provider_unavailable" });
      expect(tables.flushes).toBe(1);
      expect(tables.balance).toBe(3);
      expect(tables.messages.size).toBe(0);
      expect([...tables.counters.entries()].find(([key]) => key.startsWith("free_tier_segments:"))?.[1]).toBe(
        0,
      );
    });

    it("unreachable gives back the minute and per-recipient counters too: retries during an outage never lock a number out", async () => {
      tables.balance = 20;
      const outage = Array.from({ length: 8 }, () => ({ kind: "unreachable" as const, reason: "refused" }));
      const { send, live: provider } = setup({
        live: [...outage, { kind: "accepted", providerRef: "ref-after" }],
        perRecipient: { perMinute: 5, perDay: 20 },
      });
      for (let i = 0; i < 8; i++) {
        expect(await send(live())).toEqual({ ok: false, code: "provider_unavailable" });
        // Nothing counted stays counted: every counter the write-ahead moved is back at 0.
        expect([...tables.counters.values()].every((count) => count === 0)).toBe(true);
      }
      // uBill is back: the same key sends, counted once.
      expect(await send(live())).toMatchObject({
        ok: true,
        replayed: false,
        message: { status: "submitted" },
      });
      expect(provider?.submitted).toHaveLength(9);
      const counts = [...tables.counters.entries()].filter(([key]) => !key.startsWith("free_tier_segments:"));
      expect(counts.map(([, count]) => count)).toEqual([1, 1, 1]);
      expect(tables.balance).toBe(19);
    });

    it("with no live provider configured: 503 and nothing kept, no counter moved", async () => {
      tables.balance = 3;
      const { send } = setup({ live: null });
      expect(await send(live())).toEqual({ ok: false, code: "provider_unavailable" });
      expect(tables.balance).toBe(3);
      expect([...tables.counters.values()].every((count) => count === 0)).toBe(true);
    });

    it("with no live provider configured: 503 and nothing kept", async () => {
      tables.balance = 3;
      const { send } = setup({ live: null });
      expect(await send(live())).toEqual({ ok: false, code: "provider_unavailable" });
      expect(tables.balance).toBe(3);
    });

    it("too few credits: 402, the write-ahead rolled back, nothing sent", async () => {
      tables.balance = 0;
      const { send, live: provider } = setup();
      expect(await send(live())).toEqual({ ok: false, code: "insufficient_credits" });
      expect(provider?.submitted).toHaveLength(0);
      expect(tables.messages.size + tables.records.size).toBe(0);
      expect(
        [...tables.counters.entries()].find(([key]) => key.startsWith("free_tier_segments:")),
      ).toBeUndefined();
    });

    it("the free tier's daily segments used up: daily_limit_reached, rolled back; paid credits lift it", async () => {
      tables.balance = 10;
      const { send } = setup({ freeTier: 1 });
      expect((await send(live())).ok).toBe(true);
      const refused = await send(live({ idempotencyKey: "k-2" }));
      expect(refused).toMatchObject({
        ok: false,
        code: "daily_limit_reached",
        subject: "free_tier",
        limit: { limit: 1, remaining: 0 },
      });
      expect(tables.messages.size).toBe(1);
      expect(tables.balance).toBe(9);
      tables.hasPaidCredits = true;
      expect(await send(live({ idempotencyKey: "k-2" }))).toMatchObject({ ok: true, replayed: false });
      expect(tables.balance).toBe(8);
    });

    it("per-recipient limits in the contract's two meanings: a minute's window is rate_limited (reset within 60 s), the day's cap is daily_limit_reached (reset at midnight UTC)", async () => {
      tables.balance = 100;
      tables.hasPaidCredits = true;
      const { send, live: provider } = setup({ perRecipient: { perMinute: 2, perDay: 5 } });
      for (let i = 0; i < 2; i++) {
        expect(await send(live({ idempotencyKey: `r-${i}` }))).toMatchObject({ ok: true, replayed: false });
      }
      const refused = await send(live({ idempotencyKey: "r-2" }));
      expect(refused).toMatchObject({
        ok: false,
        code: "rate_limited",
        subject: "recipient",
        limit: { limit: 2, remaining: 0, window: "minute", resetAt: new Date("2026-11-22T10:01:00Z") },
      });
      if (refused.ok || refused.code !== "rate_limited") throw new Error("not rate_limited");
      expect(refused.limit.resetAt.getTime() - now.getTime()).toBeLessThanOrEqual(60_000);
      // Rolled back: nothing written, nothing reserved, nothing sent.
      expect(tables.messages.size).toBe(2);
      expect(tables.balance).toBe(98);
      expect(provider?.submitted).toHaveLength(2);
      // Another number is unaffected.
      expect(await send(live({ idempotencyKey: "other", to: "+995555000111" }))).toMatchObject({ ok: true });
      // The next minutes allow three more: the day's cap of 5 is then reached.
      now = new Date("2026-11-22T10:01:00Z");
      expect((await send(live({ idempotencyKey: "r-3" }))).ok).toBe(true);
      expect((await send(live({ idempotencyKey: "r-4" }))).ok).toBe(true);
      now = new Date("2026-11-22T10:02:00Z");
      expect((await send(live({ idempotencyKey: "r-5" }))).ok).toBe(true);
      expect(await send(live({ idempotencyKey: "r-6" }))).toMatchObject({
        ok: false,
        code: "daily_limit_reached",
        subject: "recipient",
        limit: { limit: 5, remaining: 0, window: "utc_day", resetAt: new Date("2026-11-23T00:00:00Z") },
      });
      // Counter names carry a keyed fingerprint, never the number.
      const buckets = [...tables.counters.keys()];
      expect(buckets.some((bucket) => bucket.startsWith("recipient:prj_unit:"))).toBe(true);
      expect(buckets.join(" ")).not.toMatch(/555123456|555000111/);
    });

    it("test keys are not subject to the per-recipient limits", async () => {
      const { send } = setup({ perRecipient: { perMinute: 1, perDay: 1 } });
      for (let i = 0; i < 4; i++) {
        expect(await send({ idempotencyKey: `t-${i}` })).toMatchObject({ ok: true, replayed: false });
      }
      expect([...tables.counters.keys()].some((bucket) => bucket.startsWith("recipient:"))).toBe(false);
    });

    it("over the per-minute limit, a live send is refused as the project's, and the recipient's counters do not move", async () => {
      tables.balance = 10;
      const { send } = setup({ perMinute: 1 });
      expect((await send(live())).ok).toBe(true);
      expect(await send(live({ idempotencyKey: "k-2" }))).toMatchObject({
        ok: false,
        code: "rate_limited",
        subject: "project",
      });
      const recipientCounts = [...tables.counters.entries()].filter(([key]) => key.startsWith("recipient:"));
      expect(recipientCounts.map(([, count]) => count)).toEqual([1, 1]);
      expect(tables.balance).toBe(9);
    });

    it("over both the per-minute and a recipient's limit, the project's minute is the refusal (the contract's order), though the project's rows are taken last", async () => {
      tables.balance = 10;
      tables.hasPaidCredits = true;
      const { send } = setup({ perMinute: 1, perRecipient: { perMinute: 1, perDay: 10 } });
      expect((await send(live())).ok).toBe(true);
      expect(await send(live({ idempotencyKey: "k-2" }))).toMatchObject({
        ok: false,
        code: "rate_limited",
        subject: "project",
        limit: { limit: 1, remaining: 0, window: "minute" },
      });
      // Nothing of the refused send stays counted.
      expect([...tables.counters.values()]).toEqual([1, 1, 1]); // the recipient's minute and day, the project's minute
      expect(tables.balance).toBe(9);
    });

    it("a test send's key does not replay a live send with the same Idempotency-Key", async () => {
      tables.balance = 3;
      const { send } = setup();
      await send();
      expect(await send(live())).toMatchObject({ ok: true, replayed: false });
      expect(tables.messages.size).toBe(2);
    });
  });
});
