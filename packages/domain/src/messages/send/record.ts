// 3. Record (send-message.ts): the provider's answer, or the key given back
// when the provider was not reached.
import { BUCKETS, type LimitState, windowOf } from "../../model/limits.ts";
import { type MessageResource, messageError, toMessageResource } from "../../model/message.ts";
import type { Logger } from "../../ports.ts";
import type { SubmitOutcome } from "../../provider.ts";
import type { Outcome, QueuedMessage } from "../../store/index.ts";
import { persist } from "./persist.ts";
import type {
  Claimed,
  Draft,
  SendMessageDeps,
  SendMessageInput,
  SendMessageResult,
  SendMessageTx,
  Taken,
} from "./types.ts";
import { testMinute } from "./write-ahead-test-keys.ts";

/** 3. Record the provider's answer (or release the key when it was not reached). */
export function record(
  deps: SendMessageDeps,
  input: SendMessageInput,
  draft: Draft,
  outcome: SubmitOutcome,
  written: Claimed,
): Promise<SendMessageResult> {
  const step = input.mode === "test" ? recordTest : recordLive;
  return step(deps, input, draft, outcome, written);
}

/** 3, live keys: the queued message moves on; a send that sent nothing gives back what it took. */
async function recordLive(
  deps: SendMessageDeps,
  input: SendMessageInput,
  draft: Draft,
  outcome: SubmitOutcome,
  written: Claimed,
): Promise<SendMessageResult> {
  const { queued } = draft;
  const { messageId, idempotencyId } = queued;
  const later = deps.clock.now();
  const projectId = input.project.id;
  const log = input.logger;
  /**
   * A send that sent nothing gives back what it took, in the order the
   * write-ahead took it (the recipient's counters, the project's minute, its
   * free-tier segments, then the project row), so the two can
   * never deadlock: a send proven unsent (`unsent`) its minute and recipient
   * counts too, because counters count only what may have reached the
   * provider; a rejection (uBill saw it) the free-tier segments and credits.
   */
  const giveBack = async (tx: SendMessageTx, note: string, unsent: boolean) => {
    if (unsent) {
      for (const { bucket, start } of written.counted) await tx.limits.release(bucket, start, 1);
    }
    if (written.freeTierSegments > 0) {
      const { start } = windowOf("utc_day", queued.now);
      await tx.limits.release(BUCKETS.freeTierSegments(projectId), start, written.freeTierSegments);
    }
    if (queued.creditsReserved > 0) {
      await tx.ledger.refund({ projectId, messageId, amount: queued.creditsReserved, note, now: later });
    }
  };
  const tookSomething = queued.creditsReserved > 0 || written.freeTierSegments > 0;

  if (outcome.kind === "unreachable") {
    log.warn(
      { message_id: messageId, provider: draft.provider?.name ?? "none", reason: outcome.reason },
      "provider unreachable",
    );
    // Proven unsent: the message, the key, the counters, the free-tier
    // segments and the credits go in one transaction.
    const released = await persist(deps, log, "release", () =>
      tookSomething || written.counted.length > 0
        ? deps.store.transaction(async (tx) => {
            const done = await tx.messages.releaseUnsent({ messageId, createdAt: queued.now, idempotencyId });
            if (done) await giveBack(tx, "provider unreachable", true);
            return done;
          })
        : deps.store.messages.releaseUnsent({ messageId, createdAt: queued.now, idempotencyId }),
    );
    if (released) return { ok: false, code: "provider_unavailable" };
    // Not released: the recovery sweep's answer stands, or there is nothing
    // left to release (a write-ahead the database lost in a crash before it
    // was made durable): then it is as if it had been released.
    return storedAnswer(deps, messageId, log, written.rateLimit, { ok: false, code: "provider_unavailable" });
  }

  const recorded = outcomeOf(outcome, later, 0);
  const response = answerOf(queued, recorded, later);
  const change = { messageId, createdAt: queued.now, idempotencyId, outcome: recorded, response, now: later };
  const moved = await persist(deps, log, "record", () =>
    recorded.status === "failed" && tookSomething
      ? deps.store.transaction(async (tx) => {
          const done = await tx.messages.recordOutcome(change);
          // A rejection sent nothing: the credits and the free-tier segments go back.
          if (done) await giveBack(tx, "rejected", false);
          return done;
        })
      : deps.store.messages.recordOutcome(change),
  );
  if (!moved) return storedAnswer(deps, messageId, log, written.rateLimit);
  return newAnswer(deps, queued, response, written);
}

/**
 * 3, test keys: the message is written once, answered, with the key's answer.
 * Not reached: the claim is given back. The claim gone meanwhile (a duplicate
 * waited for it in vain and took the key over): nothing is written, and the
 * caller is told to retry with the same key.
 */
async function recordTest(
  deps: SendMessageDeps,
  input: SendMessageInput,
  draft: Draft,
  outcome: SubmitOutcome,
  written: Claimed,
): Promise<SendMessageResult> {
  const { queued } = draft;
  const log = input.logger;
  if (outcome.kind === "unreachable") {
    log.warn(
      { message_id: queued.messageId, provider: draft.provider?.name ?? "none", reason: outcome.reason },
      "provider unreachable",
    );
    await persist(deps, log, "release", () => deps.store.idempotency.releaseClaim(queued.idempotencyId));
    return { ok: false, code: "provider_unavailable" };
  }
  const later = deps.clock.now();
  const recorded = outcomeOf(outcome, later, deps.config.simulatorDelayMs);
  const response = answerOf(queued, recorded, later);
  const stored = await persist(deps, log, "record", () =>
    deps.store.messages.insertAnswered(queued, { outcome: recorded, response, now: later }),
  );
  if (!stored) {
    log.warn({ message_id: queued.messageId }, "the key's claim was given up while the send was in flight");
    return { ok: false, code: "first_request_unresolved", retryAfterMs: 1_000 };
  }
  return newAnswer(deps, queued, response, written);
}

/**
 * 1 and 3 in one, test keys whose simulator is pure (send-message.ts): the
 * simulator has answered, and one durable statement claims the key, counts
 * the send against the project's minute and writes the message with the key's
 * answer, or does nothing: the key is taken (its record, for the caller's
 * wait), or the minute is used up (429).
 */
export async function recordAnswered(
  deps: SendMessageDeps,
  draft: Draft,
  outcome: Exclude<SubmitOutcome, { kind: "unreachable" }>,
): Promise<SendMessageResult | Taken> {
  const { queued } = draft;
  const later = deps.clock.now();
  const recorded = outcomeOf(outcome, later, deps.config.simulatorDelayMs);
  const response = answerOf(queued, recorded, later);
  const minute = testMinute(deps, draft);
  const claim = await deps.store.messages.claimAnswered({
    message: queued,
    outcome: recorded,
    response,
    now: later,
    counter: minute.counter,
  });
  if ("prior" in claim) return { taken: true, prior: claim.prior };
  if (!claim.claimed) return minute.refusal();
  return newAnswer(deps, queued, response, minute.counted(claim.used, claim.recipient));
}

/** A new send's answer (201), remembered for this instance's replays. */
function newAnswer(
  deps: SendMessageDeps,
  queued: QueuedMessage,
  response: MessageResource,
  written: Claimed,
): SendMessageResult {
  const { fingerprint, expiresAt } = queued;
  deps.answered?.remember(queued.scope, { fingerprint, expiresAt, responseBody: response });
  const { rateLimit, recipient } = written;
  return recipient
    ? { ok: true, replayed: false, message: response, rateLimit, recipient }
    : { ok: true, replayed: false, message: response, rateLimit };
}

/** The Message resource a send answers. */
function answerOf(queued: QueuedMessage, recorded: Outcome, now: Date): MessageResource {
  return toMessageResource({
    id: queued.messageId,
    recipientMasked: queued.recipientMasked,
    status: recorded.status,
    segments: queued.segments,
    errorCode: recorded.error?.errorCode ?? null,
    errorMessage: recorded.error?.errorMessage ?? null,
    createdAt: queued.now,
    updatedAt: now,
  });
}

/** What a definitive (or indeterminate) provider answer makes of the message. */
function outcomeOf(
  outcome: Exclude<SubmitOutcome, { kind: "unreachable" }>,
  now: Date,
  firstCheckDelayMs: number,
): Outcome {
  switch (outcome.kind) {
    case "accepted":
      return {
        status: "submitted",
        error: null,
        providerRef: outcome.providerRef,
        nextCheckAt: new Date(now.getTime() + firstCheckDelayMs),
      };
    case "rejected":
      return { status: "failed", error: messageError(outcome.code), providerRef: null, nextCheckAt: null };
    case "indeterminate":
      return {
        status: "unknown",
        error: messageError("provider_unavailable"),
        providerRef: null,
        nextCheckAt: null,
      };
  }
}

/** The recovery sweep decided first (the provider took very long): its answer stands. */
async function storedAnswer(
  deps: SendMessageDeps,
  messageId: string,
  logger: Logger,
  rateLimit: LimitState,
  /** The answer when the message is not there at all (default: an error). */
  whenGone?: SendMessageResult,
): Promise<SendMessageResult> {
  // The recovery sweep, or an earlier attempt of this very statement whose
  // answer the database connection lost: either way the stored state stands.
  logger.warn({ message_id: messageId }, "the message had already left queued; answering its stored state");
  const state = await deps.store.messages.read(messageId);
  if (!state && whenGone) return whenGone;
  if (!state) throw new Error("a message vanished while its send was in flight");
  return { ok: true, replayed: false, message: toMessageResource(state), rateLimit };
}
