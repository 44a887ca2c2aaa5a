// 1. Write ahead, a live key's transaction (write-ahead-live.ts): any send
// the one statement did not take (a refusal, a project without paid credits).
import { consumeEach } from "../../limits/consume-limits.ts";
import { BUCKETS, type LimitState, limitState, windowOf } from "../../model/limits.ts";
import { transactionOrRollback } from "../../store/index.ts";
import type { LiveWindows } from "./live-windows.ts";
import type { Claimed, Draft, Refusal, SendMessageDeps, SendMessageTx, Taken } from "./types.ts";

/**
 * The live write-ahead as a transaction: the key and the queued message with
 * the recipient's windows, then the project's minute, the free-tier allowance
 * (projects without paid credits) and the credit reservation, in that lock
 * order; a refusal rolls everything back and is the answer, in the order the
 * contract gives (the project's minute is reported before a recipient's).
 * `paid`: whether the project has paid credits, as the transaction found it
 * (undefined: the key was taken).
 */
export async function writeAheadInTransaction(
  deps: SendMessageDeps,
  draft: Draft,
  live: LiveWindows,
): Promise<{ decided: Claimed | Taken | Refusal; paid: boolean | undefined }> {
  const { queued } = draft;
  const projectId = queued.scope.projectId;
  const { config } = deps;
  const { minute, windows, minuteWindow, recipientWindows, counted } = live;
  let paid: boolean | undefined;
  const decided = await transactionOrRollback<Claimed | Taken, Refusal, SendMessageTx>(
    deps.store,
    inTransaction,
  );
  return { decided, paid };

  async function inTransaction(
    tx: SendMessageTx,
    rollback: (value: Refusal) => never,
  ): Promise<Claimed | Taken> {
    const claim = await tx.messages.insertQueuedLive(queued, { recipient: recipientWindows });
    if (!claim.written) return { taken: true, prior: claim.prior };
    paid = claim.paid;
    const countMinute = () => consumeEach(tx.limits, [minute], queued.now);
    /** The project's minute is reported before any later refusal, as if it had been counted first. */
    const projectFirst = async (refusal: Refusal): Promise<Refusal> => {
      const project = await countMinute();
      return project.ok
        ? refusal
        : { ok: false, code: "rate_limited", subject: "project", limit: project.limit };
    };
    // The first recipient window refused, in order, is the refusal.
    const refused = windows.find((_, index) => claim.recipient[index] === null);
    if (refused) {
      const current = await tx.limits.read(refused.check.bucket, refused.start);
      const limit = limitState(refused.check, current, refused.end);
      return rollback(
        await projectFirst(
          refused.check.refusal === "rate_limited"
            ? { ok: false, code: "rate_limited", subject: "recipient", limit }
            : { ok: false, code: "daily_limit_reached", subject: "recipient", limit },
        ),
      );
    }
    const reservation = {
      projectId,
      messageId: queued.messageId,
      amount: queued.creditsReserved,
      now: queued.now,
    };
    let rateLimit: LimitState;
    let freeTierSegments = 0;
    let reserved: Awaited<ReturnType<SendMessageTx["ledger"]["reserve"]>>;
    if (claim.paid) {
      // Projects with paid credits: the minute and the reservation in one
      // statement, committed with it. A refusal has aborted the transaction:
      // nothing more is sent in it but the ROLLBACK.
      const { start, end } = minuteWindow;
      const step = await tx.ledger.reserveCountedAndCommit(reservation, {
        bucket: minute.bucket,
        start,
        end,
        limit: minute.limit,
      });
      if (step.used === null) {
        // The minute refused one more send: its count is at the limit.
        return rollback({
          ok: false,
          code: "rate_limited",
          subject: "project",
          limit: limitState(minute, minute.limit, end),
        });
      }
      rateLimit = limitState(minute, step.used, end);
      reserved = step.reservation;
    } else {
      const project = await countMinute();
      if (!project.ok)
        return rollback({ ok: false, code: "rate_limited", subject: "project", limit: project.limit });
      rateLimit = project.states[0] as LimitState;
      const taken = await consumeEach(
        tx.limits,
        [
          {
            bucket: BUCKETS.freeTierSegments(projectId),
            window: "utc_day",
            limit: config.freeTierDailySegments,
            cost: queued.segments,
            refusal: "daily_limit_reached",
          },
        ],
        queued.now,
      );
      if (!taken.ok) {
        return rollback({ ok: false, code: "daily_limit_reached", subject: "free_tier", limit: taken.limit });
      }
      freeTierSegments = queued.segments;
      reserved = await tx.ledger.reserve(reservation);
    }
    if (!reserved.ok) {
      if (reserved.code === "insufficient_credits")
        return rollback({ ok: false, code: "insufficient_credits" });
      const { end } = windowOf("utc_day", queued.now);
      return rollback({
        ok: false,
        code: "daily_limit_reached",
        subject: "credit_cap",
        limit: { limit: reserved.cap, remaining: 0, resetAt: end, window: "utc_day" },
      });
    }
    return { freeTierSegments, rateLimit, counted };
  }
}
