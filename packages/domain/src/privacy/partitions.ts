// The partitions' lifecycle (docs/scaling.md#partitioned-by-month): messages,
// message_events and request_log are partitioned by UTC month. This job keeps
// the partitions of this month and the next `monthsAhead` in place (the
// migration and start-up create them too), and drops a whole month once every
// row in it is past retention:
//
// - request_log: a month whose end is older than REQUEST_LOG_RETENTION_DAYS.
// - messages (with the same month of message_events): only the rows of
//   unclaimed projects are ever deleted (30 days after sending, spec 4.1), so a
//   month goes only when it ended more than 30 days ago AND holds no message of
//   a claimed project; its messages' idempotency records and verifications go
//   with it, as the per-row purge deletes them.
//
// The per-row purges (request-log-purge, unclaimed-messages-purge) still take
// every row the day it expires, so retention stays exact; a dropped partition
// is what they had not reached yet (a backlog after downtime, a shortened
// retention) plus the empty table and indexes they leave behind, which a drop
// returns to the system at once instead of through vacuum.
import { UNCLAIMED_MESSAGE_RETENTION_MS } from "../claims/purge-unclaimed-messages.ts";
import type { Store } from "../store/index.ts";
import { monthStart, PARTITIONED_TABLES, type PartitionedTable } from "../store/partitions.ts";

/** Partitions kept ready beyond the current month. */
export const DEFAULT_PARTITION_MONTHS_AHEAD = 2;

export type PartitionCounts = {
  /** Partitions created this round. */
  created: number;
  /** Partitions dropped this round (a month of messages counts with its message_events month). */
  dropped: number;
  /** Rows those partitions held. */
  rows_dropped: number;
  /** Rows found in the DEFAULT partitions (0 unless something wrote outside the prepared months). */
  default_rows: number;
};

type PartitionDeps = { store: Pick<Store, "partitions" | "transaction"> };

/** Creates the partitions of the month of `now` and the `monthsAhead` next ones where missing. */
export async function ensurePartitions(
  deps: PartitionDeps,
  input: { now: Date; monthsAhead?: number },
): Promise<{ created: number }> {
  const ahead = input.monthsAhead ?? DEFAULT_PARTITION_MONTHS_AHEAD;
  let created = 0;
  for (let offset = 0; offset <= ahead; offset++) {
    created += await ensureMonth(deps, monthStart(input.now, offset));
  }
  return { created };
}

/** Creates every table's partition for the month starting at `month` where missing; returns how many. */
export async function ensureMonth(deps: PartitionDeps, month: Date): Promise<number> {
  let created = 0;
  for (const table of PARTITIONED_TABLES) {
    if (await deps.store.transaction((tx) => tx.partitions.createMonth(table, month))) created++;
  }
  return created;
}

/** One round of the partition-maintenance job: create ahead, drop what is wholly expired. */
export async function maintainPartitions(
  deps: PartitionDeps,
  input: { now: Date; requestLogRetentionMs: number; monthsAhead?: number },
): Promise<PartitionCounts> {
  const { created } = await ensurePartitions(deps, input);
  const requestLog = await dropExpiredRequestLog(deps, {
    cutoff: new Date(input.now.getTime() - input.requestLogRetentionMs),
  });
  const messages = await dropExpiredUnclaimedMessages(deps, {
    cutoff: new Date(input.now.getTime() - UNCLAIMED_MESSAGE_RETENTION_MS),
  });
  let defaultRows = 0;
  for (const table of PARTITIONED_TABLES) defaultRows += await deps.store.partitions.countDefault(table);
  return {
    created,
    dropped: requestLog.dropped + messages.dropped,
    rows_dropped: requestLog.rows + messages.rows,
    default_rows: defaultRows,
  };
}

/** Drops the request_log months that ended before `cutoff`. */
export async function dropExpiredRequestLog(
  deps: PartitionDeps,
  input: { cutoff: Date },
): Promise<{ dropped: number; rows: number }> {
  let dropped = 0;
  let rows = 0;
  for (const partition of await expired(deps, "request_log", input.cutoff)) {
    rows += await deps.store.transaction(async (tx) => {
      const count = await tx.partitions.countRows(partition.name);
      await tx.partitions.drop("request_log", partition.name);
      return count;
    });
    dropped++;
  }
  return { dropped, rows };
}

/**
 * Drops the messages months (and their message_events months) that ended
 * before `cutoff` and hold no message of a claimed project. Returns the
 * months dropped and the messages they held.
 */
export async function dropExpiredUnclaimedMessages(
  deps: PartitionDeps,
  input: { cutoff: Date },
): Promise<{ dropped: number; rows: number; kept: number }> {
  let dropped = 0;
  let rows = 0;
  let kept = 0;
  const events = new Map(
    (await deps.store.partitions.list("message_events")).map((partition) => [
      partition.from.getTime(),
      partition,
    ]),
  );
  for (const partition of await expired(deps, "messages", input.cutoff)) {
    const gone = await deps.store.transaction(async (tx) => {
      if (await tx.partitions.holdsClaimedProject(partition.name)) return null;
      const count = await tx.partitions.countRows(partition.name);
      await tx.partitions.deleteDependentsOfMessages(partition.name);
      // messages before message_events: the order in which a send's statement
      // (and the events trigger) locks them, so the two never deadlock.
      await tx.partitions.drop("messages", partition.name);
      const timeline = events.get(partition.from.getTime());
      if (timeline) await tx.partitions.drop("message_events", timeline.name);
      return count;
    });
    if (gone === null) {
      kept++;
      continue;
    }
    dropped++;
    rows += gone;
  }
  return { dropped, rows, kept };
}

async function expired(deps: PartitionDeps, table: PartitionedTable, cutoff: Date) {
  return (await deps.store.partitions.list(table)).filter((partition) => partition.to <= cutoff);
}
