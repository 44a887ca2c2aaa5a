// The unit suite's hand-written store: the statements a send uses
// (SendMessageStore), in memory, keeping each statement's contract
// (store/*.ts). test/send-store.contract.integration.test.ts runs the same
// assertions against this fake and against the real store on PGlite and
// PostgreSQL, so the two cannot drift apart. Hooks script what only a test
// needs (races, outages).
import { DatabaseUnavailableError } from "@sms/db";
import type { SendMessageStore, SendMessageTx } from "../../src/messages/send/send-message.ts";
import type { MessageResource, MessageState } from "../../src/model/message.ts";
import type {
  Outcome,
  PriorRecord,
  QueuedClaim,
  QueuedMessage,
  RecipientCount,
  RecipientTally,
} from "../../src/store/index.ts";

export type Row = QueuedMessage & {
  status: MessageState["status"];
  errorCode: string | null;
  errorMessage: string | null;
  providerRef: string | null;
  nextCheckAt: Date | null;
  updatedAt: Date;
  response: MessageResource | null;
};

/** The tables a send touches, in memory. */
export type Tables = {
  records: Map<
    string,
    { id: string; fingerprint: string; response: MessageResource | null; expiresAt: Date; messageId?: string }
  >;
  messages: Map<string, Row>;
  counters: Map<string, number>;
  hasPaidCredits: boolean;
  balance: number;
  ledger: Array<{ kind: "reservation" | "refund"; amount: number; messageId: string }>;
  /** Every write-ahead statement: its key's mode, whether it committed asynchronously, and where it ran. */
  writeAheads: Array<{ mode: string; relaxed: boolean; inTransaction: boolean }>;
  /** How many times flushCommitted made the commits before it durable. */
  flushes: number;
};

const scopeKey = (scope: QueuedMessage["scope"]) => `${scope.projectId}|${scope.mode}|${scope.key}`;
const counterKey = (bucket: string, start: Date) => `${bucket}|${start.toISOString()}`;

export type Hooks = {
  /** The write-ahead finds the key claimed a moment ago by a request that has since answered this. */
  loseRaceTo?: MessageResource;
  sweepFirst?: boolean;
  /** recordOutcome and releaseUnsent throw this many times (a database outage) before they work. */
  outage?: number;
  /** What they throw meanwhile (default: DatabaseUnavailableError). */
  outageError?: () => Error;
  /** Runs as releaseAbandoned starts (another duplicate got there first). */
  beforeReleaseAbandoned?: () => void;
  /** flushCommitted throws DatabaseUnavailableError this many times. */
  flushOutage?: number;
  /** With flushOutage: the database lost the queued messages and their keys (a crash before the flush). */
  flushLosesQueued?: boolean;
};

/** A message row's columns once the provider's answer is recorded. */
const settledAs = (outcome: Outcome, now: Date) => ({
  status: outcome.status,
  errorCode: outcome.error?.errorCode ?? null,
  errorMessage: outcome.error?.errorMessage ?? null,
  providerRef: outcome.providerRef,
  nextCheckAt: outcome.nextCheckAt,
  updatedAt: now,
});

export function fakeStore(tables: Tables, hooks: Hooks = {}) {
  const down = () => {
    if ((hooks.outage ?? 0) <= 0) return;
    hooks.outage = (hooks.outage ?? 0) - 1;
    throw hooks.outageError?.() ?? new DatabaseUnavailableError("connection_lost");
  };
  const find = (scope: QueuedMessage["scope"], now: Date): PriorRecord | null => {
    const record = tables.records.get(scopeKey(scope));
    if (!record || record.expiresAt <= now) return null;
    return {
      fingerprint: record.fingerprint,
      responseBody: record.response,
      expiresAt: record.expiresAt,
      messageId: record.messageId ?? "msg_unknown",
    };
  };
  /** The key's claim: "claimed", or the record found (null: claimed by another at the same moment). */
  const claimKey = (m: QueuedMessage): "claimed" | PriorRecord | null => {
    if (hooks.loseRaceTo) {
      tables.records.set(scopeKey(m.scope), {
        id: "idem_winner",
        fingerprint: m.fingerprint,
        response: hooks.loseRaceTo,
        expiresAt: m.expiresAt,
      });
      hooks.loseRaceTo = undefined;
      return null;
    }
    const prior = find(m.scope, m.now);
    if (prior) return prior;
    tables.records.set(scopeKey(m.scope), {
      id: m.idempotencyId,
      fingerprint: m.fingerprint,
      response: null,
      expiresAt: m.expiresAt,
      messageId: m.messageId,
    });
    return "claimed";
  };
  /** Deletes the record `matches` picks if it has neither an answer nor a message. */
  const releaseUnanswered = (
    matches: (key: string, record: { id: string; messageId?: string }) => boolean,
  ) => {
    for (const [key, record] of tables.records) {
      if (!matches(key, record) || record.response !== null) continue;
      if (record.messageId && tables.messages.has(record.messageId)) return false;
      tables.records.delete(key);
      return true;
    }
    return false;
  };
  /** The key's claim and the queued message, one write-ahead statement in a transaction. */
  const writeQueued = (m: QueuedMessage, relaxed: boolean, inTransaction = true): QueuedClaim => {
    tables.writeAheads.push({ mode: m.scope.mode, relaxed, inTransaction });
    const claim = claimKey(m);
    if (claim !== "claimed") return { written: false, prior: claim };
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
    return { written: true };
  };
  const tx: SendMessageTx = {
    messages: {
      async insertQueuedLive(m, counters) {
        // Committed asynchronously: flushCommitted makes it durable.
        const claim = writeQueued(m, true);
        if (!claim.written) return claim;
        const recipient = await tx.limits.consumeMany(counters.recipient);
        return { written: true, recipient, paid: tables.hasPaidCredits };
      },
      async recordOutcome({ messageId, outcome, response, now }) {
        down();
        const row = tables.messages.get(messageId);
        if (hooks.sweepFirst && row)
          Object.assign(row, { status: "unknown", errorCode: "provider_unavailable" });
        if (row?.status !== "queued") return false;
        Object.assign(row, settledAs(outcome, now));
        const record = tables.records.get(scopeKey(row.scope));
        if (record) record.response = response;
        return true;
      },
      async releaseUnsent({ messageId }) {
        down();
        const row = tables.messages.get(messageId);
        if (row?.status !== "queued") return false;
        tables.messages.delete(messageId);
        tables.records.delete(scopeKey(row.scope));
        return true;
      },
    },
    limits: {
      async consume(window, cost, limit) {
        const key = counterKey(window.bucket, window.start);
        const used = (tables.counters.get(key) ?? 0) + cost;
        if (used > limit) return null;
        tables.counters.set(key, used);
        return used;
      },
      async consumeMany(windows) {
        const used: Array<number | null> = [];
        for (const window of windows) used.push(await tx.limits.consume(window, window.cost, window.limit));
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
        if (tables.balance < amount) return { ok: false, code: "insufficient_credits" };
        tables.balance -= amount;
        tables.ledger.push({ kind: "reservation", amount: -amount, messageId });
        return { ok: true };
      },
      async reserveCountedAndCommit(reservation, window) {
        const used = await tx.limits.consume(window, 1, window.limit);
        if (used === null) return { used, reservation: { ok: false, code: "insufficient_credits" } };
        return { used, reservation: await tx.ledger.reserve(reservation) };
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
  /** A counted test send's recipient tally (the real store's recipientTallyCtes): never refusing. */
  const tally = (counter: { start: Date; tally?: RecipientTally }): RecipientCount | undefined => {
    if (!counter.tally) return undefined;
    const { limits } = counter.tally;
    // A counter at its live limit is not written again: it says the limit.
    const step = (bucket: string, start: Date, limit: number) => {
      const key = counterKey(bucket, start);
      const before = tables.counters.get(key) ?? 0;
      if (before >= limit) return limit;
      tables.counters.set(key, before + 1);
      return before + 1;
    };
    return {
      minute: step(counter.tally.minute, counter.start, limits.minute),
      day: step(counter.tally.day, counter.tally.dayStart, limits.day),
    };
  };
  const store: SendMessageStore = {
    idempotency: {
      find: async (scope, now) => find(scope, now),
      async claimCounted(claim, counter) {
        tables.writeAheads.push({ mode: claim.scope.mode, relaxed: true, inTransaction: false });
        const m = claim as QueuedMessage;
        const claimed = claimKey(m);
        if (claimed !== "claimed") return { claimed: false, prior: claimed };
        const used = await tx.limits.consume(counter, 1, counter.limit);
        const recipient = used === null ? undefined : tally(counter);
        return recipient ? { claimed: true, used, recipient } : { claimed: true, used };
      },
      async releaseClaim(idempotencyId) {
        down();
        return releaseUnanswered((_, record) => record.id === idempotencyId);
      },
      async releaseAbandoned(scope, messageId) {
        hooks.beforeReleaseAbandoned?.();
        return releaseUnanswered((key, record) => key === scopeKey(scope) && record.messageId === messageId);
      },
    },
    messages: {
      async flushCommitted() {
        if ((hooks.flushOutage ?? 0) > 0) {
          hooks.flushOutage = (hooks.flushOutage ?? 0) - 1;
          for (const [id, row] of tables.messages) {
            if (!hooks.flushLosesQueued || row.status !== "queued") continue;
            tables.messages.delete(id);
            tables.records.delete(scopeKey(row.scope));
          }
          throw new DatabaseUnavailableError("connection_lost");
        }
        tables.flushes++;
      },
      recordOutcome: tx.messages.recordOutcome,
      releaseUnsent: tx.messages.releaseUnsent,
      async writeAheadPaid(m, counters) {
        // One statement of its own, committed asynchronously; a refusal leaves every table as it was.
        const saved = structuredClone(tables);
        const refused = () => {
          Object.assign(tables, saved, { writeAheads: tables.writeAheads });
          return { refused: true } as const;
        };
        const claim = writeQueued(m, true, false);
        if (!claim.written) return claim;
        if (!tables.hasPaidCredits) return refused();
        const recipient = await tx.limits.consumeMany(counters.recipient);
        if (recipient.includes(null)) return refused();
        const { minute } = counters;
        const used = await tx.limits.consume(minute, 1, minute.limit);
        if (used === null) return refused();
        const reserved = await tx.ledger.reserve({
          projectId: m.scope.projectId,
          messageId: m.messageId,
          amount: m.creditsReserved,
          now: m.now,
        });
        if (!reserved.ok) return refused();
        return { written: true, used };
      },
      async claimAnswered({ message: m, outcome, response, now, counter }) {
        // One durable statement: the key, the minute's count and the answered message, or nothing.
        tables.writeAheads.push({ mode: m.scope.mode, relaxed: false, inTransaction: false });
        if (hooks.loseRaceTo) return { claimed: false, prior: claimKey(m) as PriorRecord | null };
        const prior = find(m.scope, m.now);
        if (prior) return { claimed: false, prior };
        // Counted and claimed with no await in between: one statement, as the real store's.
        const counted = counterKey(counter.bucket, counter.start);
        const used = (tables.counters.get(counted) ?? 0) + 1;
        if (used > counter.limit) return { claimed: false, used: null };
        tables.counters.set(counted, used);
        claimKey(m);
        const record = tables.records.get(scopeKey(m.scope));
        if (record) record.response = response;
        tables.messages.set(m.messageId, { ...m, ...settledAs(outcome, now), response });
        const recipient = tally(counter);
        return recipient ? { claimed: true, used, recipient } : { claimed: true, used };
      },
      async insertAnswered(m, { outcome, response, now }) {
        down();
        const record = tables.records.get(scopeKey(m.scope));
        if (record?.id !== m.idempotencyId || record.response !== null) return false;
        record.response = response;
        tables.messages.set(m.messageId, { ...m, ...settledAs(outcome, now), response });
        return true;
      },
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
        // The write-aheads tried are a log of what ran, not a table: it keeps the rolled-back ones.
        Object.assign(tables, saved, { writeAheads: tables.writeAheads });
        throw error;
      }
    },
  };
  return store;
}

/** Empty tables: no records, messages or counters; no credits. */
export function emptyTables(): Tables {
  return {
    records: new Map(),
    messages: new Map(),
    counters: new Map(),
    hasPaidCredits: false,
    balance: 0,
    ledger: [],
    writeAheads: [],
    flushes: 0,
  };
}
