// Fixed-window limits shared by every instance through the database. A
// request refused by one window is counted by none: several checks are
// consumed together, in one transaction, or not at all.
import {
  type LimitCheck,
  type LimitRefusalCode,
  type LimitState,
  limitState,
  windowOf,
} from "../model/limits.ts";
import type { LimitStore, Store, StoreTx } from "../store/index.ts";
import { transactionOrRollback } from "../store/index.ts";

export type LimitRefusal = { ok: false; code: LimitRefusalCode; limit: LimitState };
export type LimitOutcome = { ok: true; states: LimitState[] } | LimitRefusal;

function checkBuckets(checks: LimitCheck[]): void {
  if (new Set(checks.map((check) => check.bucket)).size !== checks.length) {
    throw new TypeError("consumeLimits: every check needs a bucket of its own");
  }
}

/**
 * Consumes the checks in order with `limits` (inside a caller's
 * transaction): the first refusal is returned as it is, and the caller must
 * roll back what the earlier checks took. Keep the order the same everywhere
 * to avoid lock-order deadlocks.
 */
export async function consumeEach(
  limits: Pick<LimitStore, "consume" | "read">,
  checks: LimitCheck[],
  now: Date,
): Promise<LimitOutcome> {
  checkBuckets(checks);
  const states: LimitState[] = [];
  for (const check of checks) {
    const cost = check.cost ?? 1;
    const { start, end } = windowOf(check.window, now);
    const used =
      cost > check.limit
        ? null
        : await limits.consume({ bucket: check.bucket, start, end }, cost, check.limit);
    if (used === null) {
      const current = cost > check.limit ? 0 : await limits.read(check.bucket, start);
      return { ok: false, code: check.refusal, limit: limitState(check, current, end) };
    }
    states.push(limitState(check, used, end));
  }
  return { ok: true, states };
}

/** Consumes every check or none (one statement for a single check, else one transaction). */
export async function consumeLimits(
  store: Pick<Store, "limits" | "transaction">,
  checks: LimitCheck[],
  now: Date,
): Promise<LimitOutcome> {
  if (checks.length <= 1) return consumeEach(store.limits, checks, now);
  return transactionOrRollback<LimitOutcome, LimitRefusal>(store, async (tx: StoreTx, rollback) => {
    const outcome = await consumeEach(tx.limits, checks, now);
    if (!outcome.ok) return rollback(outcome);
    return outcome;
  });
}

/**
 * A lock-free look at the committed counters: the refusal of the first check
 * (in the order given) that is already used up, or null. Counters only grow
 * within a window, so a refusal seen here stands; null proves nothing, and
 * the caller still consumes atomically. It lets a burst of callers who are
 * over a limit answer at once instead of queueing for the counter rows.
 */
export async function exhaustedLimit(
  limits: Pick<LimitStore, "readMany">,
  checks: LimitCheck[],
  now: Date,
): Promise<LimitRefusal | null> {
  const windows = checks.map((check) => ({ check, bucket: check.bucket, ...windowOf(check.window, now) }));
  const used = await limits.readMany(windows);
  for (const [index, { check, end }] of windows.entries()) {
    const count = used[index] ?? 0;
    if (count + (check.cost ?? 1) > check.limit) {
      return { ok: false, code: check.refusal, limit: limitState(check, count, end) };
    }
  }
  return null;
}
