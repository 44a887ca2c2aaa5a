// 1. Write ahead, live keys (write-ahead.ts): the one statement of a paid
// project that no rule refuses, counted in the windows of live-windows.ts,
// and, for anything else, the transaction (write-ahead-transaction.ts). The
// project refusals (project-refusals.ts) let a project that the statement
// cannot serve this minute skip it.
import { limitState } from "../../model/limits.ts";
import type { Logger } from "../../ports.ts";
import { liveWindows } from "./live-windows.ts";
import type { Claimed, Draft, Refusal, SendMessageDeps, Taken } from "./types.ts";
import { writeAheadInTransaction } from "./write-ahead-transaction.ts";

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
export async function writeAheadLive(
  deps: SendMessageDeps,
  draft: Draft,
): Promise<Claimed | Taken | Refusal> {
  const { queued } = draft;
  const projectId = queued.scope.projectId;
  const live = liveWindows(deps, draft);
  const { minute, minuteWindow, recipientWindows, counted } = live;
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

  const { decided, paid } = await writeAheadInTransaction(deps, draft, live);
  if (refusals && paid !== undefined) {
    // Until this minute ends, the statement cannot serve a project without paid credits, or one refused as
    // a whole; a paid project whose send went through can use it again.
    if (!paid || ("ok" in decided && refusesProject(decided))) refusals.remember(projectId, minuteWindow.end);
    else if (remembered && !("ok" in decided)) refusals.forget(projectId);
  }
  return decided;
}

/**
 * A live send's write-ahead commits without waiting for the disk, so that its
 * project's minute and balance rows are free one disk flush sooner; it is made
 * durable here (store.messages.flushCommitted, shared by the live sends
 * waiting at the same moment) before uBill hears of the message. When that
 * fails nothing is sent: the send is released as if uBill were not reached
 * (503, retry is safe).
 */
export async function madeDurable(deps: SendMessageDeps, logger: Logger, draft: Draft): Promise<boolean> {
  try {
    await deps.store.messages.flushCommitted();
    return true;
  } catch (error) {
    logger.warn(
      { message_id: draft.queued.messageId, err: error },
      "the write-ahead could not be made durable; nothing is sent",
    );
    return false;
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
