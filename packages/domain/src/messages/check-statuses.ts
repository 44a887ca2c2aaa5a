// The periodic status check (spec 3): every round, due `submitted` messages
// are claimed in batches with FOR UPDATE SKIP LOCKED (so any number of
// instances never check one message twice in a round), asked about with a
// bounded number of provider calls in flight, and moved on together: one
// statement (one transaction) settles a whole batch. Transitions are
// monotonic: only `submitted` rows move, and `delivered` and `undeliverable`
// never change again.
import type { Keyring } from "@sms/crypto";
import { type MessageError, type MessageStatus, messageError } from "../model/message.ts";
import type { Clock, Logger } from "../ports.ts";
import type { SmsProvider, StatusReport } from "../provider.ts";
import type { DueMessage, Store } from "../store/index.ts";

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

  for (;;) {
    const now = clock.now();
    // Claim: push next_check_at one interval ahead, so the rest of this round
    // (here or on another instance) skips these rows.
    const claimed = await deps.store.messages.claimDue({
      dueBy: roundStart,
      nextCheckAt: new Date(now.getTime() + config.intervalMs),
      batchSize: config.batchSize,
    });
    if (claimed.length === 0) break;
    counts.checked += claimed.length;

    const reports = await mapLimited(claimed, config.concurrency, (message) => ask(deps, message));
    const decidedAt = clock.now();
    const changes: Change[] = [];
    claimed.forEach((message, index) => {
      const report = reports[index] ?? { kind: "error", reason: "no report" };
      if (report.kind === "error") counts.errors++;
      const change = decide(message, report, decidedAt, config.deadlineMs);
      if (change) changes.push(change);
    });
    await settle(deps, claimed, changes, decidedAt, counts);
    if (claimed.length < config.batchSize) break;
  }
  return counts;
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

/** One transaction: the batch's moves, and the refunds of the live messages that failed. */
async function settle(
  deps: CheckStatusesDeps,
  claimed: DueMessage[],
  changes: Change[],
  now: Date,
  counts: StatusCheckCounts,
): Promise<void> {
  if (changes.length === 0) return;
  const byId = new Map(claimed.map((message) => [message.id, message]));
  const refunds = changes.filter(
    (change) => change.status === "failed" && (byId.get(change.messageId)?.creditsReserved ?? 0) > 0,
  );
  const moved =
    refunds.length === 0
      ? await deps.store.messages.settleMany(changes, now)
      : await deps.store.transaction(async (tx) => {
          const moved = await tx.messages.settleMany(changes, now);
          for (const change of refunds) {
            const message = byId.get(change.messageId);
            if (!message || !moved.has(change.messageId)) continue;
            await tx.ledger.refund({
              projectId: message.projectId,
              messageId: message.id,
              amount: message.creditsReserved,
              note: "provider reported failure",
              now,
            });
          }
          return moved;
        });
  for (const change of changes) if (moved.has(change.messageId)) counts[COUNT_OF[change.status]]++;
}

async function ask(deps: CheckStatusesDeps, message: DueMessage): Promise<StatusReport> {
  const provider = message.provider === "simulator" ? deps.providers.test : deps.providers.live;
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
