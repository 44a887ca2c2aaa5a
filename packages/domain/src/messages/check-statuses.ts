// The periodic status check (spec 3): every round, due `submitted` messages
// are taken in batches, oldest due first, with FOR UPDATE SKIP LOCKED (so any
// number of instances never check one message twice in a round), asked about
// with a bounded number of provider calls in flight, and moved on together:
// one statement settles a whole batch. uBill's messages are claimed while
// locked and asked after the lock's transaction commits; the simulator's
// (test keys; it answers in this process, at once) are asked and settled
// inside it, each written once. Transitions are monotonic: only `submitted`
// rows move, and `delivered` and `undeliverable` never change again.
import type { Keyring } from "@sms/crypto";
import { type MessageError, type MessageStatus, messageError } from "../model/message.ts";
import type { Clock, Logger } from "../ports.ts";
import type { SmsProvider, StatusReport } from "../provider.ts";
import type { DueMessage, Store, StoreTx } from "../store/index.ts";

export type StatusCheckCounts = {
  checked: number;
  delivered: number;
  undeliverable: number;
  failed: number;
  expired: number;
  errors: number;
};

export type CheckStatusesDeps = {
  store: Pick<Store, "messages" | "transaction">;
  keyring: Keyring;
  clock: Clock;
  logger: Logger;
  providers: { test: SmsProvider; live: SmsProvider | null };
  config: {
    intervalMs: number;
    batchSize: number;
    /** At most this many provider calls in flight at once (per round, per process). */
    concurrency: number;
    /** A message still `submitted` this long after submission becomes `unknown`. */
    deadlineMs: number;
    /** The longest one provider call may take (its timeout): how long a claimed batch may be in flight. */
    callTimeoutMs: number;
  };
};

type Settled = Extract<MessageStatus, "delivered" | "undeliverable" | "failed" | "unknown">;
type Change = { messageId: string; status: Settled; error: MessageError | null };

const COUNT_OF: Record<Settled, keyof StatusCheckCounts> = {
  delivered: "delivered",
  undeliverable: "undeliverable",
  failed: "failed",
  unknown: "expired",
};

/** The provider asked in this process, at once: the simulator (test keys). */
const IN_PROCESS_PROVIDER = "simulator";

export async function checkMessageStatuses(deps: CheckStatusesDeps): Promise<StatusCheckCounts> {
  const { clock, config } = deps;
  const counts: StatusCheckCounts = {
    checked: 0,
    delivered: 0,
    undeliverable: 0,
    failed: 0,
    expired: 0,
    errors: 0,
  };
  const roundStart = clock.now();
  const holdMs = claimHoldMs(config);

  for (;;) {
    // One transaction locks the next batch, oldest due first (FOR UPDATE SKIP
    // LOCKED: no other round, here or on another instance, takes it), and
    // - claims uBill's messages in it: their next check pushed past the longest
    //   their calls may take, so they stay out of other rounds while asked
    //   after the commit, however slow uBill is;
    // - asks the simulator about its messages (in this process, at once) and
    //   settles them, or gives a pending one its next check, before the locks
    //   go: each is written once, not claimed and then settled.
    const batch = await deps.store.transaction(async (tx) => {
      const now = clock.now();
      const locked = await tx.messages.lockDue({ dueBy: roundStart, batchSize: config.batchSize });
      const remote = locked.filter((message) => message.provider !== IN_PROCESS_PROVIDER);
      const local = locked.filter((message) => message.provider === IN_PROCESS_PROVIDER);
      await tx.messages.claimChecks(
        remote.map((message) => message.id),
        new Date(now.getTime() + holdMs),
      );
      const { decidedAt, changes, pending, errors } = await askAll(deps, local);
      const moved = await settleIn(tx, changes, refundsOf(local, changes), decidedAt);
      // Still `submitted`: asked again one interval after this answer.
      await tx.messages.rescheduleChecks(pending, new Date(decidedAt.getTime() + config.intervalMs));
      return { locked, remote, changes, moved, errors };
    });
    if (batch.locked.length === 0) break;
    counts.checked += batch.locked.length;
    counts.errors += batch.errors;
    count(counts, batch.changes, batch.moved);

    const claimed = batch.remote;
    if (claimed.length > 0) {
      const { decidedAt, changes, pending, errors } = await askAll(deps, claimed);
      counts.errors += errors;
      count(counts, changes, await settle(deps, claimed, changes, decidedAt));
      // Still `submitted`: asked again one interval after this answer, as before the longer hold.
      if (pending.length > 0 && holdMs > config.intervalMs) {
        await deps.store.messages.rescheduleChecks(
          pending,
          new Date(decidedAt.getTime() + config.intervalMs),
        );
      }
    }
    if (batch.locked.length < config.batchSize) break;
  }
  return counts;
}

/**
 * Asks about a batch (at most `concurrency` calls in flight) and what the reports make of it: the moves, the ids
 * still `submitted`, and the reports that were errors, decided when the last report came.
 */
async function askAll(
  deps: CheckStatusesDeps,
  batch: DueMessage[],
): Promise<{ decidedAt: Date; changes: Change[]; pending: string[]; errors: number }> {
  const reports = await mapLimited(batch, deps.config.concurrency, (message) => ask(deps, message));
  const decidedAt = deps.clock.now();
  const changes: Change[] = [];
  const pending: string[] = [];
  let errors = 0;
  batch.forEach((message, index) => {
    const report = reports[index] ?? { kind: "error", reason: "no report" };
    if (report.kind === "error") errors++;
    const change = decide(message, report, decidedAt, deps.config.deadlineMs);
    if (change) changes.push(change);
    else pending.push(message.id);
  });
  return { decidedAt, changes, pending, errors };
}

/** Counts the moves that happened. */
function count(counts: StatusCheckCounts, changes: Change[], moved: Set<string>): void {
  for (const change of changes) if (moved.has(change.messageId)) counts[COUNT_OF[change.status]]++;
}

/**
 * How long a claim holds a batch: one interval, or, when the batch's calls
 * may take longer (a batch of `batchSize` asked `concurrency` at a time, each
 * up to the call timeout), that and one interval more for settling it.
 */
export function claimHoldMs(config: CheckStatusesDeps["config"]): number {
  const waves = Math.ceil(config.batchSize / Math.max(1, config.concurrency));
  const inFlightMs = waves * config.callTimeoutMs;
  return inFlightMs < config.intervalMs ? config.intervalMs : inFlightMs + config.intervalMs;
}

/** What a report makes of a message, or null when it stays `submitted` (asked again next round). */
function decide(message: DueMessage, report: StatusReport, now: Date, deadlineMs: number): Change | null {
  const messageId = message.id;
  switch (report.kind) {
    case "delivered":
      return { messageId, status: "delivered", error: null };
    case "undeliverable":
      return {
        messageId,
        status: "undeliverable",
        error: messageError("invalid_recipient", "undeliverable"),
      };
    case "failed":
      // The provider says the SMS was not sent after all: like a rejection at
      // submission, the reserved credits go back (the error text says so).
      return { messageId, status: "failed", error: messageError("provider_rejected") };
    case "error":
    case "pending": {
      const overdue =
        message.submittedAt !== null && now.getTime() - message.submittedAt.getTime() >= deadlineMs;
      return overdue
        ? { messageId, status: "unknown", error: messageError("provider_unavailable", "deadline") }
        : null;
    }
  }
}

type Refund = { change: Change; message: DueMessage };

/** The batch's moves, and in the same transaction the refunds of the live messages that failed. */
async function settle(
  deps: CheckStatusesDeps,
  claimed: DueMessage[],
  changes: Change[],
  now: Date,
): Promise<Set<string>> {
  if (changes.length === 0) return new Set();
  const refunds = refundsOf(claimed, changes);
  return refunds.length === 0
    ? deps.store.messages.settleMany(changes, now)
    : deps.store.transaction((tx) => settleIn(tx, changes, refunds, now));
}

/** The failed moves of messages that reserved credits, each with its message: what goes back. */
function refundsOf(batch: DueMessage[], changes: Change[]): Refund[] {
  const byId = new Map(batch.map((message) => [message.id, message]));
  const refunds: Refund[] = [];
  for (const change of changes) {
    const message = byId.get(change.messageId);
    if (change.status === "failed" && message && message.creditsReserved > 0)
      refunds.push({ change, message });
  }
  return refunds;
}

/** settle, in the transaction `tx`: the moves, then the refunds of those that moved. */
async function settleIn(
  tx: Pick<StoreTx, "messages" | "ledger">,
  changes: Change[],
  refunds: Refund[],
  now: Date,
): Promise<Set<string>> {
  if (changes.length === 0) return new Set();
  const moved = await tx.messages.settleMany(changes, now);
  for (const { change, message } of refunds) {
    if (!moved.has(change.messageId)) continue;
    await tx.ledger.refund({
      projectId: message.projectId,
      messageId: message.id,
      amount: message.creditsReserved,
      note: "provider reported failure",
      now,
    });
  }
  return moved;
}

async function ask(deps: CheckStatusesDeps, message: DueMessage): Promise<StatusReport> {
  const provider = message.provider === IN_PROCESS_PROVIDER ? deps.providers.test : deps.providers.live;
  if (!provider || !message.providerRef || !message.submittedAt)
    return { kind: "error", reason: "no provider for this message" };
  try {
    // The number is decrypted only for a provider that reports per number.
    const to =
      provider.reportsByRecipient && message.recipientCiphertext
        ? await deps.keyring.decrypt(message.recipientCiphertext, message.id)
        : "";
    return await provider.checkStatus({
      providerRef: message.providerRef,
      to,
      submittedAt: message.submittedAt,
    });
  } catch (error) {
    deps.logger.warn({ message_id: message.id, err: error }, "status check failed");
    return { kind: "error", reason: "status check failed" };
  }
}

/** `work` over `items` with at most `limit` in flight; results in the items' order. */
async function mapLimited<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    for (let index = next++; index < items.length; index = next++)
      results[index] = await work(items[index] as T);
  });
  await Promise.all(lanes);
  return results;
}
