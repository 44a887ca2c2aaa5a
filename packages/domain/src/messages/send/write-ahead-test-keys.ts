// 1. Write ahead, test keys (write-ahead.ts): the key's claim and the
// project's minute in one statement.
import { BUCKETS, limitState, windowOf } from "../../model/limits.ts";
import type { RecipientCount } from "../../store/index.ts";
import { persist } from "./persist.ts";
import type { Claimed, Draft, Refusal, SendMessageDeps, SendMessageInput, Taken } from "./types.ts";

/**
 * Test keys: one statement claims the key and counts the send (asynchronous
 * commit: the answer's durable commit makes both durable before anything is
 * answered). Over the limit, the claim is given back.
 */
export async function writeAheadTest(
  deps: SendMessageDeps,
  input: SendMessageInput,
  draft: Draft,
): Promise<Claimed | Taken | Refusal> {
  const { queued } = draft;
  const minute = testMinute(deps, draft);
  const claim = await deps.store.idempotency.claimCounted(queued, minute.counter);
  if (!claim.claimed) return { taken: true, prior: claim.prior };
  if (claim.used === null) {
    await persist(deps, input.logger, "release", () =>
      deps.store.idempotency.releaseClaim(queued.idempotencyId),
    );
    return minute.refusal();
  }
  return minute.counted(claim.used, claim.recipient);
}

/**
 * A test send's project minute (both ways of writing one: writeAheadTest here, record.ts's recordAnswered):
 * the counter it is counted on, with the recipient's test counters tallied beside it (never refusing), and
 * what its count answers.
 */
export function testMinute(deps: SendMessageDeps, draft: Draft) {
  const { queued } = draft;
  const projectId = queued.scope.projectId;
  const limit = deps.config.messagesPerMinute;
  const window = windowOf("minute", queued.now);
  const day = windowOf("utc_day", queued.now);
  const check = { limit, window: "minute" as const };
  const tally = {
    minute: BUCKETS.testRecipientMinute(projectId, draft.recipient),
    day: BUCKETS.testRecipientDay(projectId, draft.recipient),
    dayStart: day.start,
    dayEnd: day.end,
    limits: { minute: deps.config.recipientLimits.perMinute, day: deps.config.recipientLimits.perDay },
  };
  return {
    counter: { bucket: BUCKETS.messages(projectId), ...window, limit, tally },
    /** The minute is used up: 429, the project's. */
    refusal: (): Refusal => ({
      ok: false,
      code: "rate_limited",
      subject: "project",
      limit: limitState(check, limit, window.end),
    }),
    /** Counted as the minute's `used`-th send; `recipient`: the recipient's test sends with it. */
    counted: (used: number, recipient?: RecipientCount): Claimed => ({
      freeTierSegments: 0,
      rateLimit: limitState(check, used, window.end),
      counted: [],
      ...(recipient ? { recipient: { limit: tally.limits, used: recipient } } : {}),
    }),
  };
}
