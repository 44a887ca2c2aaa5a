// credit_ledger and projects.credit_balance: the one writer of both. Every
// change is a ledger entry and the same change to the cached balance, in one
// statement; a CHECK keeps the balance >= 0 (spec 4.2 rules 3–4).
import { newId } from "@sms/crypto";
import { isStatementRefusal, params, type Sql, sql, type TransactionSql } from "@sms/db";
import type { CreditEntryKind } from "../model/credits.ts";
import { type CounterWindow, oneCounterClaim, oneCounterValues } from "./limits.ts";

// The daily credit cap is checked in the same UPDATE that debits the balance:
// the project's row lock serialises concurrent reservations, and PostgreSQL
// re-evaluates the WHERE on the newest row version after waiting for it, so
// two sends can never both pass the cap. daily_credits_used counts the UTC day
// named by daily_credits_day (`day`) and starts again from zero on a new day.
/** A reservation's named values. */
export type ReservationValues = {
  amount: number;
  now: Date;
  projectId: string;
  entryId: string;
  messageId: string;
  /** The UTC day of `now`, as a date. */
  day: string;
};
const r = params<ReservationValues>();

/**
 * The reservation's two CTEs, `debited` (the project's balance and its day's
 * use of the cap) and `entry` (the ledger's reservation row, written only when
 * the balance moved). With `from` (a CTE's name), the balance moves only for a
 * row of it.
 */
export function reservationCtes(from?: string) {
  return sql`debited AS (
    UPDATE projects SET credit_balance = credit_balance - CAST(${r.amount} AS integer), updated_at = CAST(${r.now} AS timestamptz),
           daily_credits_used = CASE WHEN daily_credits_day = CAST(${r.day} AS date)
                                     THEN daily_credits_used + CAST(${r.amount} AS integer) ELSE CAST(${r.amount} AS integer) END,
           daily_credits_day = CAST(${r.day} AS date)${sql.raw(from ? `\n    FROM ${from}` : "")}
    WHERE id = ${r.projectId} AND credit_balance >= CAST(${r.amount} AS integer)
      AND (daily_credit_cap IS NULL
           OR (CASE WHEN daily_credits_day = CAST(${r.day} AS date) THEN daily_credits_used ELSE 0 END)
              + CAST(${r.amount} AS integer) <= daily_credit_cap)
    RETURNING projects.id
  ), entry AS (
    INSERT INTO credit_ledger (id, project_id, kind, amount, message_id, created_at)
    SELECT CAST(${r.entryId} AS text), CAST(${r.projectId} AS text), CAST('reservation' AS "CreditEntryKind"), -CAST(${r.amount} AS integer),
           CAST(${r.messageId} AS text), CAST(${r.now} AS timestamptz)
    FROM debited
    RETURNING id
  )`;
}

/** The reservation statement (ReservationValues). */
const RESERVE_SQL = sql`
  WITH ${reservationCtes()}
  SELECT (SELECT count(*)::int FROM entry) AS reserved, p.credit_balance, p.daily_credit_cap
  FROM projects p WHERE p.id = ${r.projectId}`;

// A live send's last write-ahead step: the project's per-minute counter and
// the reservation in one statement, sent with the transaction's COMMIT
// (queryAndCommit), so the two rows every live send of the project waits on
// are held while this statement and the COMMIT run in the server, not across
// a round trip to the service. The counter comes first (the lock order the
// send's give-back follows); without it the balance is not touched. The
// balance moves only when the counter step moved its counter, and the
// counter's new count comes back as `used`; and the statement refuses (raises
// sms_refuse, SQLSTATE SR001) unless it counted and reserved, with what it
// would have returned as the detail: for a statement committed in the same
// message (queryAndCommit), which only an error keeps from committing.
const RESERVE_COUNTED_SQL = sql`
  WITH counted AS (${oneCounterClaim(1)}
  ), ${reservationCtes("counted")}
  SELECT o.*, CASE WHEN o.used IS NULL OR o.reserved = 0 THEN sms_refuse(CAST(row_to_json(o) AS text)) END AS refused
  FROM (SELECT (SELECT count FROM counted) AS used, (SELECT count(*)::int FROM entry) AS reserved,
               p.credit_balance, p.daily_credit_cap
        FROM (SELECT 1) AS one LEFT JOIN projects p ON p.id = ${r.projectId}) AS o`;

type ReservationRow = {
  used?: number | null;
  reserved: number;
  credit_balance: number;
  daily_credit_cap: number | null;
};

/** The row a statement refused with (sms_refuse's detail), or null for any other error. */
function refusedRow(error: unknown): ReservationRow | null {
  const { detail } = (error ?? {}) as { detail?: unknown };
  if (!isStatementRefusal(error) || typeof detail !== "string") return null;
  return JSON.parse(detail) as ReservationRow;
}

const REFUND_SQL = `
  WITH entry AS (
    INSERT INTO credit_ledger (id, project_id, kind, amount, message_id, note, created_at)
    VALUES ($1, $2, CAST('refund' AS "CreditEntryKind"), CAST($3 AS integer), $4, $5, CAST($6 AS timestamptz))
    ON CONFLICT (message_id, kind) DO NOTHING
    RETURNING amount
  ), credited AS (
    -- A refund gives the day's cap back too when it falls on the same UTC day.
    UPDATE projects SET credit_balance = credit_balance + CAST($3 AS integer), updated_at = CAST($6 AS timestamptz),
           daily_credits_used = CASE WHEN daily_credits_day = CAST(CAST($6 AS timestamptz) AT TIME ZONE 'UTC' AS date)
                                     THEN GREATEST(0, daily_credits_used - CAST($3 AS integer))
                                     ELSE daily_credits_used END
    WHERE id = $2 AND EXISTS (SELECT 1 FROM entry)
    RETURNING id
  )
  SELECT count(*)::int AS refunded FROM credited`;

const GRANT_SQL = `
  WITH entry AS (
    INSERT INTO credit_ledger (id, project_id, kind, amount, note, created_at)
    VALUES ($1, $2, CAST($3 AS "CreditEntryKind"), CAST($4 AS integer), $5, CAST($6 AS timestamptz))
    RETURNING id
  )
  UPDATE projects
  SET credit_balance = credit_balance + CAST($4 AS integer),
      has_paid_credits = has_paid_credits OR CAST($3 AS "CreditEntryKind") = 'grant_paid',
      updated_at = CAST($6 AS timestamptz)
  WHERE id = $2 AND EXISTS (SELECT 1 FROM entry)
  RETURNING credit_balance`;

const FIND_GRANT_SQL = `
  SELECT id, amount FROM credit_ledger
  WHERE project_id = $1 AND kind = CAST($2 AS "CreditEntryKind") AND note = $3
  ORDER BY created_at LIMIT 1`;

const BALANCE_SQL = `
  SELECT p.credit_balance, p.has_paid_credits,
         (SELECT COALESCE(sum(amount), 0)::int FROM credit_ledger WHERE project_id = p.id) AS ledger_sum
  FROM projects p WHERE p.id = $1`;

// message_kept: a reservation refunded because nothing was sent (503) leaves no message behind.
const LIST_PAGE_SQL = `
  SELECT id, kind::text AS kind, amount, message_id, note, created_at,
         (message_id IS NOT NULL AND EXISTS (SELECT 1 FROM messages m WHERE m.id = credit_ledger.message_id)) AS message_kept
  FROM credit_ledger
  WHERE project_id = $1
    AND (CAST($2 AS timestamptz) IS NULL OR (created_at, id) < (CAST($2 AS timestamptz), CAST($3 AS text)))
  ORDER BY created_at DESC, id DESC
  LIMIT CAST($4 AS integer)`;

const FOR_MESSAGE_SQL = `
  SELECT id, kind::text AS kind, amount, message_id, note, created_at FROM credit_ledger
  WHERE message_id = $1 AND project_id = $2
  ORDER BY created_at, id`;

// Reservations less their refunds since a time: the credits live sends used.
const SPENT_SINCE_SQL = `
  SELECT COALESCE(-sum(amount), 0)::int AS spent FROM credit_ledger
  WHERE project_id = $1 AND kind IN ('reservation', 'refund') AND created_at >= CAST($2 AS timestamptz)`;

type EntryRow = {
  id: string;
  kind: CreditEntryKind;
  amount: number;
  message_id: string | null;
  note: string | null;
  created_at: Date;
  message_kept?: boolean;
};

function entryOf(row: EntryRow): LedgerEntry {
  return {
    id: row.id,
    kind: row.kind,
    amount: Number(row.amount),
    messageId: row.message_id,
    note: row.note,
    createdAt: new Date(row.created_at),
    ...(row.message_kept === undefined ? {} : { messageKept: row.message_kept }),
  };
}

export type LedgerEntry = {
  id: string;
  kind: CreditEntryKind;
  amount: number;
  messageId: string | null;
  note: string | null;
  createdAt: Date;
  /** In the ledger's pages: whether the entry's message was kept (false: refunded, never sent). */
  messageKept?: boolean;
};

export type Reservation =
  | { ok: true }
  | { ok: false; code: "insufficient_credits" }
  | { ok: false; code: "daily_cap_reached"; cap: number };

export type Balance = {
  /** The cached balance (what a send reserves against). */
  balance: number;
  /** The sum of every ledger entry of the project. */
  ledgerSum: number;
  /** Paid credits were granted at least once: the free-tier allowance no longer applies. */
  hasPaidCredits: boolean;
};

/** A new reservation's ledger entry id, and the UTC day of `now` that its cap counts. */
export function reservationEntry(now: Date): { entryId: string; day: string } {
  return { entryId: newId("cre"), day: now.toISOString().slice(0, 10) };
}

/** A reservation's values (ReservationValues). */
function reserveValues(options: {
  projectId: string;
  messageId: string;
  amount: number;
  now: Date;
}): ReservationValues {
  const { projectId, messageId, amount, now } = options;
  return { projectId, messageId, amount, now, ...reservationEntry(now) };
}

function reservationOf(row: ReservationRow | undefined, amount: number): Reservation {
  if (Number(row?.reserved ?? 0) === 1) return { ok: true };
  // Not reserved: the balance (as this statement saw it) tells which rule refused.
  if (row && row.daily_credit_cap !== null && Number(row.credit_balance) >= amount) {
    return { ok: false, code: "daily_cap_reached", cap: Number(row.daily_credit_cap) };
  }
  return { ok: false, code: "insufficient_credits" };
}

export function ledgerStore(sql: Sql | TransactionSql) {
  return {
    /**
     * Reserves a live message's credits (one per segment), within the
     * project's daily credit cap. `insufficient_credits` when the balance is
     * too small, `daily_cap_reached` (with the cap) when the day's
     * reservations would pass the cap.
     */
    async reserve(options: {
      projectId: string;
      messageId: string;
      amount: number;
      now: Date;
    }): Promise<Reservation> {
      const [row] = await sql.query<ReservationRow>(
        RESERVE_SQL.text,
        RESERVE_SQL.bind(reserveValues(options)),
      );
      return reservationOf(row, options.amount);
    },

    /**
     * `reserve`, after counting one send in `window` (the project's minute)
     * within `limit`, in one statement, as the transaction's last: it commits
     * the transaction when it counts and reserves. `used`: the window's new
     * count, null when it was used up (then nothing is reserved). When it does
     * not reserve, it refuses and the transaction is already aborted: the
     * caller refuses the send and rolls back, and sends no other statement.
     */
    async reserveCountedAndCommit(
      options: { projectId: string; messageId: string; amount: number; now: Date },
      window: CounterWindow & { limit: number },
    ): Promise<{ used: number | null; reservation: Reservation }> {
      if (!("queryAndCommit" in sql)) {
        throw new Error("ledger.reserveCountedAndCommit: inside a transaction only");
      }
      let row: ReservationRow | undefined;
      try {
        [row] = await sql.queryAndCommit<ReservationRow>(
          RESERVE_COUNTED_SQL.text,
          RESERVE_COUNTED_SQL.bind({ ...reserveValues(options), ...oneCounterValues(window) }),
        );
      } catch (error) {
        const refused = refusedRow(error);
        if (!refused) throw error;
        row = refused;
      }
      const used = row?.used === null || row?.used === undefined ? null : Number(row.used);
      return { used, reservation: reservationOf(row, options.amount) };
    },

    /** Gives a message's reservation back, at most once (unique per message and kind). */
    async refund(options: {
      projectId: string;
      messageId: string;
      amount: number;
      note: string;
      now: Date;
    }): Promise<boolean> {
      const [row] = await sql.query<{ refunded: number }>(REFUND_SQL, [
        newId("cre"),
        options.projectId,
        options.amount,
        options.messageId,
        options.note,
        options.now,
      ]);
      return Number(row?.refunded ?? 0) === 1;
    },

    /**
     * Adds credits: `grant_free` (claiming) raises the balance only;
     * `grant_paid` also sets has_paid_credits, which lifts the free-tier
     * allowance. Returns the entry id and the new balance.
     */
    async grant(options: {
      projectId: string;
      kind: "grant_free" | "grant_paid";
      amount: number;
      note: string;
      now: Date;
    }): Promise<{ entryId: string; balance: number }> {
      const entryId = newId("cre", options.now.getTime());
      const [row] = await sql.query<{ credit_balance: number }>(GRANT_SQL, [
        entryId,
        options.projectId,
        options.kind,
        options.amount,
        options.note,
        options.now,
      ]);
      if (!row) throw new Error(`ledger: no project ${options.projectId} to grant credits to`);
      return { entryId, balance: Number(row.credit_balance) };
    },

    /** The first grant of `kind` with exactly this note (a paid grant's reference). */
    async findGrant(projectId: string, kind: "grant_free" | "grant_paid", note: string) {
      const [row] = await sql.query<{ id: string; amount: number }>(FIND_GRANT_SQL, [projectId, kind, note]);
      return row ? { entryId: row.id, amount: Number(row.amount) } : null;
    },

    /** The cached balance beside the ledger's sum; null when there is no such project. */
    async balance(projectId: string): Promise<Balance | null> {
      const [row] = await sql.query<{
        credit_balance: number;
        has_paid_credits: boolean;
        ledger_sum: number;
      }>(BALANCE_SQL, [projectId]);
      if (!row) return null;
      return {
        balance: Number(row.credit_balance),
        ledgerSum: Number(row.ledger_sum),
        hasPaidCredits: row.has_paid_credits,
      };
    },

    /** One page of a project's entries, newest first, after `after` (exclusive). */
    async listPage(
      projectId: string,
      after: { createdAt: Date; id: string } | null,
      limit: number,
    ): Promise<LedgerEntry[]> {
      const rows = await sql.query<EntryRow>(LIST_PAGE_SQL, [
        projectId,
        after?.createdAt ?? null,
        after?.id ?? null,
        limit,
      ]);
      return rows.map(entryOf);
    },

    /** Credits reserved less refunds since `since` (the low-balance estimate's rate). */
    async spentSince(projectId: string, since: Date): Promise<number> {
      const [row] = await sql.query<{ spent: number }>(SPENT_SINCE_SQL, [projectId, since]);
      return Math.max(0, Number(row?.spent ?? 0));
    },

    /** The entries that belong to one message (its reservation and refund), oldest first. */
    async forMessage(projectId: string, messageId: string): Promise<LedgerEntry[]> {
      return (await sql.query<EntryRow>(FOR_MESSAGE_SQL, [messageId, projectId])).map(entryOf);
    },
  };
}

export type LedgerStore = ReturnType<typeof ledgerStore>;
