// partitions: the monthly partitions of messages, message_events and
// request_log (migration 20261220000000_partitions, docs/scaling.md). Each
// table is range-partitioned on its creation time, one partition per UTC month
// named `<table>_pYYYY_MM`, plus `<table>_default` for any row outside them.
// message_events is partitioned on its message's created_at with the same
// months, so a month of messages and its timeline go together.
//
// DDL takes ACCESS EXCLUSIVE on the parent (CREATE … PARTITION OF, DETACH):
// every statement here runs in a transaction with a short lock_timeout, so a
// long transaction on the table makes the job give up and retry next round
// instead of queueing every send behind it.
import type { Sql } from "@sms/db";

export type PartitionedTable = "messages" | "message_events" | "request_log";

export const PARTITIONED_TABLES: readonly PartitionedTable[] = ["messages", "message_events", "request_log"];

const PARTITION_KEY: Record<PartitionedTable, string> = {
  messages: "created_at",
  message_events: "message_created_at",
  request_log: "created_at",
};

/**
 * Whether some message in the messages partition `name` is a claimed project's: the claimed projects one by
 * one (their `claimed_at` index), each probing the month's `(project_id, created_at, id)` index, until one
 * has a message there. The partition-maintenance round asks it of every month past retention, every round:
 * it read each such month whole (`SELECT DISTINCT project_id`) and share-locked its projects, while claimed
 * projects keep their messages and so nearly every month past retention stays.
 */
export function heldByClaimSql(name: string): string {
  return `SELECT EXISTS (
    SELECT 1 FROM projects p WHERE p.claimed_at IS NOT NULL
      AND EXISTS (SELECT 1 FROM ${quoted(name)} m WHERE m.project_id = p.id)
  ) AS claimed`;
}

/** One monthly partition: [from, to). */
export type MonthPartition = { name: string; from: Date; to: Date };

/** The first instant (UTC) of the month `date` falls in, moved by `months`. */
export function monthStart(date: Date, months = 0): Date {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + months, 1));
}

/** `messages_p2026_11` for November 2026. */
export function partitionName(table: PartitionedTable, month: Date): string {
  return `${table}_p${month.getUTCFullYear()}_${String(month.getUTCMonth() + 1).padStart(2, "0")}`;
}

const MONTH_NAME = /_p(\d{4})_(\d{2})$/;

// Attached partitions of a parent, from the catalog (relispartition: attached).
const LIST_SQL = `
  SELECT c.relname::text AS name FROM pg_inherits i
  JOIN pg_class c ON c.oid = i.inhrelid
  JOIN pg_class p ON p.oid = i.inhparent
  JOIN pg_namespace n ON n.oid = p.relnamespace
  WHERE p.relname = $1 AND n.nspname = current_schema()
  ORDER BY c.relname`;

/** Waits at most this long for a table lock, then the round gives up (and the next one retries). */
const LOCK_TIMEOUT = "2s";

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;
const literal = (date: Date) => `'${date.toISOString()}'`;

export function partitionStore(sql: Sql) {
  async function list(table: PartitionedTable): Promise<MonthPartition[]> {
    const rows = await sql.query<{ name: string }>(LIST_SQL, [table]);
    const months: MonthPartition[] = [];
    for (const { name } of rows) {
      const match = MONTH_NAME.exec(name);
      if (!match || name !== `${table}${match[0]}`) continue;
      const from = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, 1));
      months.push({ name, from, to: monthStart(from, 1) });
    }
    return months.sort((a, b) => a.from.getTime() - b.from.getTime());
  }

  async function countRows(name: string): Promise<number> {
    const [row] = await sql.query<{ count: number }>(`SELECT count(*)::int AS count FROM ${quoted(name)}`);
    return Number(row?.count ?? 0);
  }

  return {
    /** `table`'s attached monthly partitions, oldest first. */
    list,

    /** How many rows `table`'s DEFAULT partition holds (0 in normal operation). */
    countDefault: (table: PartitionedTable) => countRows(`${table}_default`),

    countRows,

    /**
     * Creates `table`'s partition for the month starting at `month`, unless it
     * is attached already; rows of that month in the DEFAULT partition (which
     * would make a plain CREATE … PARTITION OF fail) move into it: the default
     * is detached meanwhile, so the move fires no trigger and no other insert
     * sees a gap. Inside a transaction. True when it created one.
     */
    async createMonth(table: PartitionedTable, month: Date): Promise<boolean> {
      const name = partitionName(table, month);
      const present = async () => (await list(table)).some((partition) => partition.name === name);
      if (await present()) return false;
      await sql.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
      // The parent's lock first: concurrent rounds on several instances wait
      // here, and the second one then sees the partition attached.
      await sql.query(`LOCK TABLE ${quoted(table)} IN SHARE UPDATE EXCLUSIVE MODE`);
      if (await present()) return false;
      const from = literal(month);
      const to = literal(monthStart(month, 1));
      const key = quoted(PARTITION_KEY[table]);
      const defaults = quoted(`${table}_default`);
      const [stray] = await sql.query<{ found: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM ${defaults} WHERE ${key} >= ${from} AND ${key} < ${to}) AS found`,
      );
      const create = `CREATE TABLE ${quoted(name)} PARTITION OF ${quoted(table)} FOR VALUES FROM (${from}) TO (${to})`;
      if (!stray?.found) {
        await sql.query(create);
        return true;
      }
      await sql.query(`ALTER TABLE ${quoted(table)} DETACH PARTITION ${defaults}`);
      await sql.query(create);
      await sql.query(
        `INSERT INTO ${quoted(table)} SELECT * FROM ${defaults} WHERE ${key} >= ${from} AND ${key} < ${to}`,
      );
      await sql.query(`DELETE FROM ${defaults} WHERE ${key} >= ${from} AND ${key} < ${to}`);
      await sql.query(`ALTER TABLE ${quoted(table)} ATTACH PARTITION ${defaults} DEFAULT`);
      return true;
    },

    /**
     * Whether any message in the messages partition `name` belongs to a
     * claimed project. First without a lock (heldByClaimSql): a claim is never
     * undone and a claimed project's messages stay, so a month found holding
     * one holds it for good, and nearly every month past retention does (any
     * claimed project that sent in it). Only a month without one is read
     * whole: the projects that have messages there are share-locked (as the
     * per-row purge does), so a claim being confirmed is waited for and one
     * not begun yet cannot start until this transaction ends.
     */
    async holdsClaimedProject(name: string): Promise<boolean> {
      const [held] = await sql.query<{ claimed: boolean }>(heldByClaimSql(name));
      if (held?.claimed) return true;
      const [row] = await sql.query<{ claimed: boolean }>(
        `WITH present AS (
           SELECT p.id, p.claimed_at FROM projects p
           WHERE p.id IN (SELECT DISTINCT project_id FROM ${quoted(name)})
           FOR SHARE
         )
         SELECT EXISTS (SELECT 1 FROM present WHERE claimed_at IS NOT NULL) AS claimed`,
      );
      return row?.claimed ?? true;
    },

    /**
     * What the per-row purge deletes with a message and that lives outside
     * its partition: its idempotency records and verification. Returns how
     * many of each went.
     */
    async deleteDependentsOfMessages(name: string): Promise<{ idempotency: number; verifications: number }> {
      const [row] = await sql.query<{ idempotency: number; verifications: number }>(
        `WITH ids AS (SELECT id FROM ${quoted(name)}),
         verifications AS (DELETE FROM verifications v USING ids WHERE v.message_id = ids.id RETURNING 1),
         idempotency AS (DELETE FROM idempotency_records r USING ids WHERE r.message_id = ids.id RETURNING 1)
         SELECT (SELECT count(*) FROM idempotency)::int AS idempotency,
                (SELECT count(*) FROM verifications)::int AS verifications`,
      );
      return { idempotency: Number(row?.idempotency ?? 0), verifications: Number(row?.verifications ?? 0) };
    },

    /**
     * Detaches the partition `name` from `table` and drops it, in the caller's
     * transaction (a plain DETACH: CONCURRENTLY cannot run in a transaction,
     * and is refused while the table has a DEFAULT partition).
     */
    async drop(table: PartitionedTable, name: string): Promise<void> {
      await sql.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
      await sql.query(`ALTER TABLE ${quoted(table)} DETACH PARTITION ${quoted(name)}`);
      await sql.query(`DROP TABLE ${quoted(name)}`);
    },
  };
}

export type PartitionStore = ReturnType<typeof partitionStore>;
