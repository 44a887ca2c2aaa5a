// credit_ledger and projects.credit_balance: the one writer of both. Every
// change is a ledger entry and the same change to the cached balance, in one
// statement; a CHECK keeps the balance >= 0 (spec 4.2 rules 3–4).
import { newId } from "@sms/crypto";
import type { Sql } from "@sms/db";
import type { CreditEntryKind } from "../model/credits.ts";

const RESERVE_SQL = `
  WITH debited AS (
    UPDATE projects SET credit_balance = credit_balance - CAST($1 AS integer), updated_at = CAST($2 AS timestamptz)
    WHERE id = $3 AND credit_balance >= CAST($1 AS integer)
    RETURNING id
  ), entry AS (
    INSERT INTO credit_ledger (id, project_id, kind, amount, message_id, created_at)
    SELECT CAST($4 AS text), CAST($3 AS text), CAST('reservation' AS "CreditEntryKind"), -CAST($1 AS integer),
           CAST($5 AS text), CAST($2 AS timestamptz)
    FROM debited
    RETURNING id
  )
  SELECT count(*)::int AS reserved FROM entry`;

const REFUND_SQL = `
  WITH entry AS (
    INSERT INTO credit_ledger (id, project_id, kind, amount, message_id, note, created_at)
    VALUES ($1, $2, CAST('refund' AS "CreditEntryKind"), CAST($3 AS integer), $4, $5, CAST($6 AS timestamptz))
    ON CONFLICT (message_id, kind) DO NOTHING
    RETURNING amount
  ), credited AS (
    UPDATE projects SET credit_balance = credit_balance + CAST($3 AS integer), updated_at = CAST($6 AS timestamptz)
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

const LIST_PAGE_SQL = `
  SELECT id, kind::text AS kind, amount, message_id, note, created_at FROM credit_ledger
  WHERE project_id = $1
    AND (CAST($2 AS timestamptz) IS NULL OR (created_at, id) < (CAST($2 AS timestamptz), CAST($3 AS text)))
  ORDER BY created_at DESC, id DESC
  LIMIT CAST($4 AS integer)`;

const FOR_MESSAGE_SQL = `
  SELECT id, kind::text AS kind, amount, message_id, note, created_at FROM credit_ledger
  WHERE message_id = $1 AND project_id = $2
  ORDER BY created_at, id`;

type EntryRow = {
  id: string;
  kind: CreditEntryKind;
  amount: number;
  message_id: string | null;
  note: string | null;
  created_at: Date;
};

function entryOf(row: EntryRow): LedgerEntry {
  return {
    id: row.id,
    kind: row.kind,
    amount: Number(row.amount),
    messageId: row.message_id,
    note: row.note,
    createdAt: new Date(row.created_at),
  };
}

export type LedgerEntry = {
  id: string;
  kind: CreditEntryKind;
  amount: number;
  messageId: string | null;
  note: string | null;
  createdAt: Date;
};

export type Balance = {
  /** The cached balance (what a send reserves against). */
  balance: number;
  /** The sum of every ledger entry of the project. */
  ledgerSum: number;
  /** Paid credits were granted at least once: the free-tier allowance no longer applies. */
  hasPaidCredits: boolean;
};

export function ledgerStore(sql: Sql) {
  return {
    /** Reserves a live message's credits (one per segment). False when the balance is too small. */
    async reserve(options: {
      projectId: string;
      messageId: string;
      amount: number;
      now: Date;
    }): Promise<boolean> {
      const [row] = await sql.query<{ reserved: number }>(RESERVE_SQL, [
        options.amount,
        options.now,
        options.projectId,
        newId("cre"),
        options.messageId,
      ]);
      return Number(row?.reserved ?? 0) === 1;
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

    /** The entries that belong to one message (its reservation and refund), oldest first. */
    async forMessage(projectId: string, messageId: string): Promise<LedgerEntry[]> {
      return (await sql.query<EntryRow>(FOR_MESSAGE_SQL, [messageId, projectId])).map(entryOf);
    },
  };
}

export type LedgerStore = ReturnType<typeof ledgerStore>;
