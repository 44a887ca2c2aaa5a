// Fixed-window limits shared by every instance through the database.
// One atomic statement per window: the counter only moves when the new total
// stays within the limit, so a concurrent burst can never overshoot, and a
// request refused by one window is not counted by any (one transaction).
import type { PrismaClient } from "@sms/db";
import { DAY_MS, startOfUtcDay } from "../time.ts";

type Tx = Pick<PrismaClient, "$queryRaw">;

export type LimitWindow = "minute" | "utc_day";

export type LimitCheck = {
  /**
   * Counter identity, e.g. "test_keys:addr:203.0.113.7:minute". Never put
   * secrets in it. One bucket per window: a counter row is (bucket, window
   * start), and a minute and a day that start at the same instant (00:00 UTC)
   * would otherwise share one row.
   */
  bucket: string;
  window: LimitWindow;
  limit: number;
  /** How much this request uses (1 request, or N segments). */
  cost?: number;
  /** The error a refusal by this window means. */
  refusal: "rate_limited" | "daily_limit_reached";
};

export type LimitState = { limit: number; remaining: number; resetAt: Date; window: LimitWindow };

export type LimitOutcome =
  | { ok: true; states: LimitState[] }
  | { ok: false; refusal: LimitCheck["refusal"]; state: LimitState };

function windowOf(window: LimitWindow, now: Date): { start: Date; end: Date } {
  if (window === "minute") {
    const start = new Date(Math.floor(now.getTime() / 60_000) * 60_000);
    return { start, end: new Date(start.getTime() + 60_000) };
  }
  const start = startOfUtcDay(now);
  return { start, end: new Date(start.getTime() + DAY_MS) };
}

/** What a window looks like once `used` of its limit is taken. */
function stateAfter(check: LimitCheck, used: number, resetAt: Date): LimitState {
  return { limit: check.limit, remaining: Math.max(0, check.limit - used), resetAt, window: check.window };
}

class Refused extends Error {
  constructor(
    readonly refusal: LimitCheck["refusal"],
    readonly state: LimitState,
  ) {
    super("limit reached");
  }
}

async function consumeOne(tx: Tx, check: LimitCheck, now: Date): Promise<LimitState> {
  const cost = check.cost ?? 1;
  const { start, end } = windowOf(check.window, now);
  const refused = (used: number) => new Refused(check.refusal, stateAfter(check, used, end));
  if (cost > check.limit) throw refused(0);
  const rows = await tx.$queryRaw<Array<{ count: number }>>`
    INSERT INTO rate_limit_counters (bucket, window_start, count, expires_at)
    VALUES (${check.bucket}, ${start}, ${cost}, ${end})
    ON CONFLICT (bucket, window_start)
    DO UPDATE SET count = rate_limit_counters.count + EXCLUDED.count
    WHERE rate_limit_counters.count + EXCLUDED.count <= ${check.limit}
    RETURNING count`;
  const row = rows[0];
  if (!row) {
    const current = await tx.$queryRaw<Array<{ count: number }>>`
      SELECT count FROM rate_limit_counters WHERE bucket = ${check.bucket} AND window_start = ${start}`;
    throw refused(Number(current[0]?.count ?? check.limit));
  }
  return stateAfter(check, Number(row.count), end);
}

/**
 * Consumes every check or none. Checks are applied in the order given; keep
 * that order the same everywhere to avoid lock-order deadlocks.
 * Pass a transaction client to make the limits part of a larger transaction.
 */
export async function consumeLimits(options: {
  tx: Tx;
  checks: LimitCheck[];
  now: Date;
}): Promise<LimitOutcome> {
  if (new Set(options.checks.map((check) => check.bucket)).size !== options.checks.length) {
    throw new TypeError("consumeLimits: every check needs a bucket of its own");
  }
  const states: LimitState[] = [];
  try {
    for (const check of options.checks) states.push(await consumeOne(options.tx, check, options.now));
    return { ok: true, states };
  } catch (error) {
    if (error instanceof Refused) return { ok: false, refusal: error.refusal, state: error.state };
    throw error;
  }
}

/**
 * A lock-free look at the committed counters: the refusal of the first check
 * (in the order given) that is already used up, or null. Counters only grow
 * within a window, so a refusal seen here stands; null proves nothing, and
 * the caller still consumes atomically. It lets a burst of callers who are
 * over a limit answer at once instead of queueing for the counter rows.
 */
export async function exhaustedLimit(options: {
  tx: Tx;
  checks: LimitCheck[];
  now: Date;
}): Promise<Extract<LimitOutcome, { ok: false }> | null> {
  const windows = options.checks.map((check) => ({ check, ...windowOf(check.window, options.now) }));
  const rows = await options.tx.$queryRaw<Array<{ bucket: string; window_start: Date; count: number }>>`
    SELECT bucket, window_start, count FROM rate_limit_counters
    WHERE bucket = ANY(${windows.map(({ check }) => check.bucket)}::text[])
      AND window_start = ANY(${windows.map(({ start }) => start.toISOString())}::timestamptz[])`;
  for (const { check, start, end } of windows) {
    const row = rows.find(
      (candidate) =>
        candidate.bucket === check.bucket && new Date(candidate.window_start).getTime() === start.getTime(),
    );
    const used = Number(row?.count ?? 0);
    if (used + (check.cost ?? 1) > check.limit) {
      return { ok: false, refusal: check.refusal, state: stateAfter(check, used, end) };
    }
  }
  return null;
}

/** Thrown inside a transaction to roll it back when a limit refuses. */
export class LimitRefusal extends Error {
  constructor(readonly outcome: Extract<LimitOutcome, { ok: false }>) {
    super("limit reached");
  }
}

/** Consumes inside `tx` and throws LimitRefusal (rolling the transaction back) when refused. */
export async function consumeLimitsOrThrow(options: {
  tx: Tx;
  checks: LimitCheck[];
  now: Date;
}): Promise<LimitState[]> {
  const outcome = await consumeLimits(options);
  if (!outcome.ok) throw new LimitRefusal(outcome);
  return outcome.states;
}

/** The state to advertise in RateLimit-* headers: the window closest to exhaustion. */
export function tightestState(states: LimitState[]): LimitState | undefined {
  return [...states].sort(
    (a, b) => a.remaining / a.limit - b.remaining / b.limit || a.resetAt.getTime() - b.resetAt.getTime(),
  )[0];
}
