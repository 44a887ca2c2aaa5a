// sendMessage's branches without a database: a hand-written in-memory store
// that keeps the statements' contracts (store/*.ts), a real keyring and
// scripted providers. The SQL itself is proven by the integration suites.
import { generateKeySpec, parseKeyring } from "@sms/crypto";
import { beforeEach, describe, expect, it } from "vitest";
import type { MessageResource, MessageState } from "../model/message.ts";
import type { SmsProvider, SubmitOutcome, SubmitRequest } from "../provider.ts";
import type { Admission, PriorRecord, QueuedMessage } from "../store/index.ts";
import {
  type SendMessageInput,
  type SendMessageStore,
  type SendMessageTx,
  sendMessage,
} from "./send-message.ts";

const T0 = new Date("2026-11-22T10:00:30Z");
const keyring = parseKeyring(generateKeySpec("unit"));
const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

type Row = QueuedMessage & {
  status: MessageState["status"];
  errorCode: string | null;
  errorMessage: string | null;
  providerRef: string | null;
  nextCheckAt: Date | null;
  updatedAt: Date;
  response: MessageResource | null;
};

/** The tables a send touches, in memory. */
type Tables = {
  records: Map<
    string,
    { id: string; fingerprint: string; response: MessageResource | null; expiresAt: Date }
  >;
  messages: Map<string, Row>;
  counters: Map<string, number>;
  hasPaidCredits: boolean;
  balance: number;
  ledger: Array<{ kind: "reservation" | "refund"; amount: number; messageId: string }>;
};

const scopeKey = (scope: QueuedMessage["scope"]) => `${scope.projectId}|${scope.mode}|${scope.key}`;
const counterKey = (bucket: string, start: Date) => `${bucket}|${start.toISOString()}`;

function fakeStore(tables: Tables, hooks: { loseRace?: boolean; sweepFirst?: boolean } = {}) {
  const find = (scope: QueuedMessage["scope"], now: Date): PriorRecord | null => {
    const record = tables.records.get(scopeKey(scope));
    if (!record || record.expiresAt <= now) return null;
    return { fingerprint: record.fingerprint, responseBody: record.response };
  };
  const tx: SendMessageTx = {
    messages: {
      async insertQueued(m) {
        const existing = tables.records.get(scopeKey(m.scope));
        if (hooks.loseRace || (existing && existing.expiresAt > m.now)) return false;
        tables.records.set(scopeKey(m.scope), {
          id: m.idempotencyId,
          fingerprint: m.fingerprint,
          response: null,
          expiresAt: m.expiresAt,
        });
        tables.messages.set(m.messageId, {
          ...m,
          status: "queued",
          errorCode: null,
          errorMessage: null,
          providerRef: null,
          nextCheckAt: null,
          updatedAt: m.now,
          response: null,
        });
        return true;
      },
      async recordOutcome({ messageId, outcome, response, now }) {
        const row = tables.messages.get(messageId);
        if (hooks.sweepFirst && row)
          Object.assign(row, { status: "unknown", errorCode: "provider_unavailable" });
        if (row?.status !== "queued") return false;
        Object.assign(row, {
          status: outcome.status,
          errorCode: outcome.error?.errorCode ?? null,
          errorMessage: outcome.error?.errorMessage ?? null,
          providerRef: outcome.providerRef,
          nextCheckAt: outcome.nextCheckAt,
          updatedAt: now,
        });
        const record = tables.records.get(scopeKey(row.scope));
        if (record) record.response = response;
        return true;
      },
      async releaseUnsent({ messageId }) {
        const row = tables.messages.get(messageId);
        if (row?.status !== "queued") return false;
        tables.messages.delete(messageId);
        tables.records.delete(scopeKey(row.scope));
        return true;
      },
    },
    projects: { hasPaidCredits: async () => tables.hasPaidCredits },
    limits: {
      async consume(window, cost, limit) {
        const key = counterKey(window.bucket, window.start);
        const used = (tables.counters.get(key) ?? 0) + cost;
        if (used > limit) return null;
        tables.counters.set(key, used);
        return used;
      },
      read: async (bucket, start) => tables.counters.get(counterKey(bucket, start)) ?? 0,
      async release(bucket, start, amount) {
        const key = counterKey(bucket, start);
        tables.counters.set(key, Math.max(0, (tables.counters.get(key) ?? 0) - amount));
      },
    },
    ledger: {
      async reserve({ messageId, amount }) {
        if (tables.balance < amount) return false;
        tables.balance -= amount;
        tables.ledger.push({ kind: "reservation", amount: -amount, messageId });
        return true;
      },
      async refund({ messageId, amount }) {
        if (tables.ledger.some((entry) => entry.kind === "refund" && entry.messageId === messageId))
          return false;
        tables.balance += amount;
        tables.ledger.push({ kind: "refund", amount, messageId });
        return true;
      },
    },
  };
  const store: SendMessageStore = {
    idempotency: {
      async admit({ scope, now, bucket, window, limit }): Promise<Admission> {
        const prior = find(scope, now);
        if (prior) return { prior, used: null };
        return { prior: null, used: await tx.limits.consume({ bucket, ...window }, 1, limit) };
      },
      find: async (scope, now) => find(scope, now),
    },
    messages: {
      ...tx.messages,
      async read(messageId) {
        const row = tables.messages.get(messageId);
        if (!row) return null;
        return {
          id: row.messageId,
          recipientMasked: row.recipientMasked,
          status: row.status,
          segments: row.segments,
          errorCode: row.errorCode,
          errorMessage: row.errorMessage,
          createdAt: row.now,
          updatedAt: row.updatedAt,
        };
      },
    },
    /** All or nothing, as a database transaction: a throw restores every table. */
    async transaction(work) {
      const saved = structuredClone(tables);
      try {
        return await work(tx);
      } catch (error) {
        Object.assign(tables, saved);
        throw error;
      }
    },
  };
  return store;
}

function scripted(name: "simulator" | "ubill", outcomes: Array<SubmitOutcome | Error>) {
  const submitted: SubmitRequest[] = [];
  const provider: SmsProvider = {
    name,
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

describe("sendMessage", () => {
  let tables: Tables;
  let now: Date;
  beforeEach(() => {
    tables = {
      records: new Map(),
      messages: new Map(),
      counters: new Map(),
      hasPaidCredits: false,
      balance: 0,
      ledger: [],
    };
    now = T0;
  });

  function setup(
    options: {
      test?: Array<SubmitOutcome | Error>;
      live?: Array<SubmitOutcome | Error> | null;
      perMinute?: number;
      freeTier?: number;
      hooks?: Parameters<typeof fakeStore>[1];
    } = {},
  ) {
    const test = scripted("simulator", options.test ?? []);
    const live = options.live === null ? null : scripted("ubill", options.live ?? []);
    const deps = {
      store: fakeStore(tables, options.hooks),
      keyring,
      clock: { now: () => now },
      providers: { test: test.provider, live: live?.provider ?? null },
      config: {
        messagesPerMinute: options.perMinute ?? 100,
        freeTierDailySegments: options.freeTier ?? 20,
        defaultSender: "SMSGE",
        simulatorDelayMs: 5_000,
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
    return { send, test, live };
  }

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
    expect(await send({ code: "111111" })).toEqual({
      ok: false,
      code: "idempotency_key_reused",
      inFlight: false,
    });
    expect(test.submitted).toHaveLength(1);
  });

  it("in flight: a duplicate while the first has no answer yet is told so", async () => {
    const { send } = setup();
    tables.records.set("prj_unit|test|k-1", {
      id: "idem_1",
      fingerprint: await keyring.fingerprint(
        JSON.stringify(["+995555123456", "verification_code", [["code", "482913"]], "en"]),
      ),
      response: null,
      expiresAt: new Date(T0.getTime() + 86_400_000),
    });
    expect(await send()).toEqual({ ok: false, code: "idempotency_key_reused", inFlight: true });
  });

  it("lost race: another request claimed the key between admit and write-ahead; its answer stands", async () => {
    const { send, test } = setup({ hooks: { loseRace: true } });
    expect(await send()).toEqual({ ok: false, code: "idempotency_key_reused", inFlight: true });
    expect(test.submitted).toHaveLength(0);
    expect(tables.messages.size).toBe(0);
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

  it("the recovery sweep decided first: its stored answer stands", async () => {
    const { send } = setup({ hooks: { sweepFirst: true } });
    expect(await send()).toMatchObject({ ok: true, replayed: false, message: { status: "unknown" } });
  });

  describe("live keys", () => {
    const live = (overrides: Partial<SendMessageInput> = {}) => ({ mode: "live" as const, ...overrides });

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

    it("unreachable refunds and releases, with no message left", async () => {
      tables.balance = 3;
      const { send } = setup({ live: [{ kind: "unreachable", reason: "refused" }] });
      expect(await send(live())).toEqual({ ok: false, code: "provider_unavailable" });
      expect(tables.balance).toBe(3);
      expect(tables.messages.size).toBe(0);
      expect([...tables.counters.entries()].find(([key]) => key.startsWith("free_tier_segments:"))?.[1]).toBe(
        0,
      );
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
        limit: { limit: 1, remaining: 0 },
      });
      expect(tables.messages.size).toBe(1);
      expect(tables.balance).toBe(9);
      tables.hasPaidCredits = true;
      expect(await send(live({ idempotencyKey: "k-2" }))).toMatchObject({ ok: true, replayed: false });
      expect(tables.balance).toBe(8);
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
