// 1. Write ahead, test keys (write-ahead.ts): the key's claim and the
// project's minute in one statement.
import { BUCKETS, limitState, windowOf } from "../../model/limits.ts";
import type { QueuedMessage } from "../../store/index.ts";
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
  const minute = testMinute(deps, queued);
  const claim = await deps.store.idempotency.claimCounted(queued, minute.counter);
  if (!claim.claimed) return { taken: true, prior: claim.prior };
  if (claim.used === null) {
    await persist(deps, input.logger, "release", () =>
      deps.store.idempotency.releaseClaim(queued.idempotencyId),
    );
    return minute.refusal();
  }
  return minute.counted(claim.used);
}

/**
 * A test send's project minute (both ways of writing one: writeAheadTest here, record.ts's recordAnswered):
 * the counter it is counted on, and what its count answers.
 */
export function testMinute(deps: SendMessageDeps, queued: QueuedMessage) {
  const limit = deps.config.messagesPerMinute;
  const window = windowOf("minute", queued.now);
  const check = { limit, window: "minute" as const };
  return {
    counter: { bucket: BUCKETS.messages(queued.scope.projectId), ...window, limit },
    /** The minute is used up: 429, the project's. */
    refusal: (): Refusal => ({
      ok: false,
      code: "rate_limited",
      subject: "project",
      limit: limitState(check, limit, window.end),
    }),
    /** Counted as the minute's `used`-th send. */
    counted: (used: number): Claimed => ({
      freeTierSegments: 0,
      rateLimit: limitState(check, used, window.end),
      counted: [],
    }),
  };
}
