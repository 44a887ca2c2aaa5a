// The recovery sweep: a message still `queued` long after it was written was
// left behind by a crash between the write-ahead commit and recording the
// provider's answer. It may or may not have been sent, so it becomes
// `unknown` (never re-sent blindly; credits stay charged), and its idempotency
// record gets that answer so a retry with the same key replays it.
//
// Safe with any number of instances: rows are claimed with FOR UPDATE SKIP
// LOCKED, and a send still in flight that records its outcome later finds the
// message no longer queued and reports the stored `unknown`. Keep the age
// (QUEUED_RECOVERY_SECONDS) well above the provider's submit timeout.
import { IDEMPOTENCY_TTL_MS } from "../model/idempotency.ts";
import { messageError, toMessageResource } from "../model/message.ts";
import type { Clock } from "../ports.ts";
import type { Store } from "../store/index.ts";

export async function recoverQueuedMessages(deps: {
  store: Pick<Store, "transaction">;
  clock: Clock;
  config: {
    /** How long a message may stay queued before it is considered abandoned. */
    olderThanMs: number;
    batchSize: number;
  };
}): Promise<{ recovered: number }> {
  const { batchSize, olderThanMs } = deps.config;
  const error = messageError("provider_unavailable");
  let recovered = 0;
  for (;;) {
    const now = deps.clock.now();
    const batch = await deps.store.transaction(async (tx) => {
      const states = await tx.messages.recoverQueued({
        cutoff: new Date(now.getTime() - olderThanMs),
        error,
        now,
        batchSize,
      });
      for (const state of states) {
        await tx.idempotency.answerRecovered({
          messageId: state.id,
          expiresAt: new Date(state.createdAt.getTime() + IDEMPOTENCY_TTL_MS),
          response: toMessageResource(state),
        });
      }
      return states.length;
    });
    recovered += batch;
    if (batch < batchSize) return { recovered };
  }
}
