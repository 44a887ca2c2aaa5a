// Live admission (send-message.ts): how many live sends run at once.
//
// A live send is first admitted (deps.liveSubmissions.admitted: the places at
// uBill, UBILL_MAX_IN_FLIGHT, and as many sends again as there are live
// database slots, at most one per place): a slow provider then ties up at most
// that many sends, and the rest wait in memory holding nothing. An admitted
// send writes ahead, then takes a place for its call to uBill only (atPlace),
// so that a place goes from one call to the next without waiting for a
// write-ahead in between. A send that has waited UBILL_QUEUE_TIMEOUT_MS in all
// is a 503: before its write-ahead with nothing written, after it released,
// never sent (retry is safe either way).
//
// Its database work waits for one of the live sends' database slots
// (deps.liveSlots, inSlot), so that a burst of them (hundreds of one
// project's, their transactions queued on its per-minute counter and balance
// rows) cannot take every connection of the pool from test sends, reads and
// other projects. The record step takes a slot too, ahead of every waiting
// write-ahead (it finishes a send uBill already has), so live sends never
// hold more than their half of the pool.
//
// A test send is admitted at once, and its work runs outside any slot.
import type { Logger, Timer } from "../../ports.ts";
import type { SubmitOutcome } from "../../provider.ts";
import { SlotWaitTimeout } from "../../slots.ts";
import { submit } from "./submit.ts";
import type { Draft, SendMessageDeps, SendMessageInput } from "./types.ts";

export type LiveAdmission = {
  /** `work` in one of the live database slots (`first`: ahead of every waiting one); a test send's at once. */
  inSlot<T>(work: () => Promise<T>, options?: { first?: boolean }): Promise<T>;
  /** Whether a send would have to wait to be admitted now (every admission taken). */
  wouldWait(): boolean;
  /** `work` once admitted, or "full" when no room came free in time (logged: nothing is sent). */
  admitted<T>(work: () => Promise<T>): Promise<T | "full">;
  /** The call to the provider, for a live send in one of uBill's places, within the rest of its wait. */
  atPlace(draft: Draft): Promise<SubmitOutcome>;
};

/** The admission of one send (its wait counts from its first admitted() call). */
export function liveAdmission(deps: SendMessageDeps, input: SendMessageInput, timer: Timer): LiveAdmission {
  const live = input.mode === "live";
  const slots = live ? deps.liveSlots : undefined;
  const submissions = live ? deps.liveSubmissions : undefined;
  /** When this send began to wait for its admission (the live provider's places' wait counts from it). */
  let queuedAt = 0;
  const noPlace = (logger: Logger) => {
    if (!submissions) return;
    logger.warn(
      { places: submissions.places.size, waited_ms: submissions.waitMs },
      "no place at the live provider came free in time; nothing is sent",
    );
  };
  return {
    inSlot: (work, options) => (slots ? slots.run(work, options) : work()),
    wouldWait: () => submissions !== undefined && submissions.admitted.inUse >= submissions.admitted.size,
    async admitted(work) {
      if (!submissions) return work();
      queuedAt = timer.monotonicMs();
      try {
        return await submissions.admitted.run(work, { timeoutMs: submissions.waitMs });
      } catch (error) {
        if (!(error instanceof SlotWaitTimeout)) throw error;
        noPlace(input.logger);
        return "full";
      }
    },
    atPlace(draft) {
      if (!submissions) return submit(draft, input.logger);
      const timeoutMs = Math.max(0, submissions.waitMs - (timer.monotonicMs() - queuedAt));
      return submissions.places
        .run(() => submit(draft, input.logger), { timeoutMs })
        .catch((error) => {
          if (!(error instanceof SlotWaitTimeout)) throw error;
          noPlace(input.logger);
          return { kind: "unreachable", reason: "no place at the live provider came free in time" } as const;
        });
    },
  };
}
