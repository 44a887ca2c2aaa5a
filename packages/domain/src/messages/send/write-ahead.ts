// 1. Write ahead (send-message.ts): claim the key and count the send, before
// the provider is contacted.
import { consumeEach } from "../../limits/consume-limits.ts";
import { BUCKETS, type LimitCheck, type LimitState, limitState, windowOf } from "../../model/limits.ts";
import { type QueuedMessage, transactionOrRollback } from "../../store/index.ts";
import { persist } from "./persist.ts";
import type {
  Claimed,
  Draft,
  Refusal,
  SendMessageDeps,
  SendMessageInput,
  SendMessageTx,
  Taken,
} from "./types.ts";

/**
 * 1. Write ahead, committed before the provider is contacted. The request
 * that claims the key is counted; one that finds the key taken is not.
 */
export async function writeAhead(
  deps: SendMessageDeps,
  input: SendMessageInput,
  draft: Draft,
): Promise<Claimed | Taken | Refusal> {
  return input.mode === "test" ? writeAheadTest(deps, input, draft) : writeAheadLive(deps, draft);
}

/**
 * Test keys: one statement claims the key and counts the send (asynchronous
 * commit: the answer's durable commit makes both durable before anything is
 * answered). Over the limit, the claim is given back.
 */
async function writeAheadTest(
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

/**
 * Live keys: the key and the queued message first (a taken key ends here,
 * nothing else counted), then the per-recipient limits (a minute, a UTC day),
 * the per-minute limit, the free-tier allowance (projects without paid
 * credits) and the credit reservation. A refusal undoes everything. The lock
 * order (recipient, minute, free tier, balance) is the order `record.ts` gives
 * them back in; the project's rows come last because every live send of the
 * project waits on them, and each is held until the commit.
 *
 * A project with paid credits (the ones that send in volume) whose send no
 * rule refuses: one statement does it all, committed on its own
 * (messages.writeAheadPaid), so the rows are held while the server runs it,
 * not across round trips to this process, whose event loop may be busy with
 * hundreds of connections. One round trip where a transaction took three
 * (BEGIN, the key with the recipient's windows, the minute with the
 * reservation and the COMMIT), and a statement prepared once per connection.
 *
 * Any other case is that transaction, which the statement's refusal leaves
 * nothing to undo: it finds the refusal that the contract's order gives (the
 * project's minute, then the recipient, then the free tier, then credits; a
 * recipient refusal first counts the minute too, in the transaction it rolls
 * back, and reports the project if that is also used up), or takes a free-tier
 * project's allowance. A concurrent send can change the verdict between the
 * two; the transaction's is the one answered. A project the transaction found
 * without paid credits, or refused as a whole, skips the statement until that
 * minute ends (deps.projectRefusals): a client retrying past its limit costs
 * one write-ahead a try, not two.
 *
 * Both commit without waiting for the disk, so the project's rows are free one
 * disk flush sooner; send-message.ts makes the write-ahead durable before
 * uBill is contacted.
 */
async function writeAheadLive(deps: SendMessageDeps, draft: Draft): Promise<Claimed | Taken | Refusal> {
  const { queued } = draft;
  const projectId = queued.scope.projectId;
  const { config } = deps;
  const recipient = draft.recipient ?? "";
  const minute: LimitCheck = {
    bucket: BUCKETS.messages(projectId),
    window: "minute",
    limit: config.messagesPerMinute,
    refusal: "rate_limited",
  };
  // The recipient's limits in the contract's two meanings: a minute's
  // window (rate_limited, retry within the minute) and a daily cap
  // (daily_limit_reached, reset at midnight UTC).
  const perRecipient: LimitCheck[] = [
    {
      bucket: BUCKETS.recipientMinute(projectId, recipient),
      window: "minute",
      limit: config.recipientLimits.perMinute,
      refusal: "rate_limited",
    },
    {
      bucket: BUCKETS.recipientDay(projectId, recipient),
      window: "utc_day",
      limit: config.recipientLimits.perDay,
      refusal: "daily_limit_reached",
    },
  ];
  const windows = perRecipient.map((check) => ({ check, ...windowOf(check.window, queued.now) }));
  const minuteWindow = windowOf("minute", queued.now);
  const recipientWindows = windows.map(({ check, start, end }) => ({
    bucket: check.bucket,
    start,
    end,
    cost: 1,
    limit: check.limit,
  }));
  // In the order the rows were locked: `record.ts` gives them back in it.
  const counted = [
    ...windows.map(({ check, start }) => ({ bucket: check.bucket, start })),
    { bucket: minute.bucket, start: minuteWindow.start },
  ];

  // The send of a project with paid credits that no rule refuses, in one statement. Anything else
  // (a refusal, a project without paid credits) is the transaction's below, which was not begun. A
  // project the statement cannot serve this minute (project-refusals.ts) goes straight to it.
  const refusals = deps.projectRefusals;
  const remembered = refusals?.has(projectId, queued.now) ?? false;
  if (!remembered) {
    const fast = await deps.store.messages.writeAheadPaid(queued, {
      recipient: recipientWindows,
      minute: { bucket: minute.bucket, ...minuteWindow, limit: minute.limit },
    });
    if (!("refused" in fast)) {
      if (!fast.written) return { taken: true, prior: fast.prior };
      return { freeTierSegments: 0, rateLimit: limitState(minute, fast.used, minuteWindow.end), counted };
    }
  }

  /** Whether the project has paid credits, as the transaction found it (unknown: the key was taken). */
  let paid: boolean | undefined;
  const decided = await transactionOrRollback<Claimed | Taken, Refusal, SendMessageTx>(
    deps.store,
    inTransaction,
  );
  if (refusals && paid !== undefined) {
    // Until this minute ends, the statement cannot serve a project without paid credits, or one refused as
    // a whole; a paid project whose send went through can use it again.
    if (!paid || ("ok" in decided && refusesProject(decided))) refusals.remember(projectId, minuteWindow.end);
    else if (remembered && !("ok" in decided)) refusals.forget(projectId);
  }
  return decided;

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

/**
 * A refusal of the whole project, not of one recipient: its minute used up, its credits short, its daily
 * credit cap or free-tier allowance reached.
 */
function refusesProject(refusal: Refusal): boolean {
  if (refusal.code === "insufficient_credits") return true;
  if (refusal.code !== "rate_limited" && refusal.code !== "daily_limit_reached") return false;
  return "subject" in refusal && refusal.subject !== "recipient";
}
