// Reads of one message by id that touch one month, not every month kept.
// `messages` and `message_events` are partitioned by month on the message's
// creation time, and their primary keys begin with the id, so a lookup by id
// alone probes every month's index: one probe more for every month of history
// (docs/scaling.md). The id begins with its creation time (@sms/crypto newId)
// and `created_at` is set at the same moment, so the read is first made
// bounded to the month of the id's time (two months within a day of a month's
// end or start), and PostgreSQL plans it over that month's partition alone.
//
// The bound is in the statement's text, as constants, not parameters: with
// parameters PostgreSQL can only prune when each execution starts, its generic
// plan costs every month, and it went on planning every read instead (a read
// cost PostgreSQL 0.078 ms instead of 0.044 on a database of five months;
// bench/README.md). Each month is one more distinct statement, prepared once per
// connection. The constants come from a Date, never from the caller's text.
//
// A read that finds nothing is made again without the bound, so a row whose
// creation time is far from its id's (a clock set wrong, a test's injected
// clock) is still found; only a lookup of an id that does not exist (or has no
// row) pays for both.
import { idTimestamp } from "@sms/crypto";
import type { Sql } from "@sms/db";

/** How far a row's creation time may be from its id's and still be found by the bounded read. */
export const ID_TIME_MARGIN_MS = 86_400_000;

/** The first instant of the month `time` is in, or of the month after it (`after`), UTC. */
function monthStart(time: number, after = false): Date {
  const at = new Date(time);
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + (after ? 1 : 0), 1));
}

/**
 * `[from, to)`: the whole months that hold every instant within the margin of the time in `id`, or null for an
 * id without one.
 */
export function monthsNear(id: string): { from: Date; to: Date } | null {
  const time = idTimestamp(id);
  if (time === null) return null;
  return { from: monthStart(time - ID_TIME_MARGIN_MS), to: monthStart(time + ID_TIME_MARGIN_MS, true) };
}

/** `column` (a partition key) within `[from, to)`, as constants. */
export function within(column: string, months: { from: Date; to: Date }): string {
  return `${column} >= TIMESTAMPTZ '${months.from.toISOString()}' AND ${column} < TIMESTAMPTZ '${months.to.toISOString()}'`;
}

/**
 * Runs `statements.bounded(bound)`, where `bound` is `column` within the months near the id's time; when that
 * returns no row, or `id` carries no time, runs `statements.unbounded`. Both take `params`.
 */
export async function readNearIdTime<Row>(
  sql: Sql,
  id: string,
  statements: { bounded: (bound: string) => string; unbounded: string; column?: string },
  params: readonly unknown[],
): Promise<Row[]> {
  const months = monthsNear(id);
  if (months !== null) {
    const rows = await sql.query<Row>(
      statements.bounded(within(statements.column ?? "created_at", months)),
      params,
    );
    if (rows.length > 0) return rows;
  }
  return sql.query<Row>(statements.unbounded, params);
}
