// projects: a project's state (claimed, suspended, sender). Its credit
// balance is written by store/ledger.ts only.
import type { Sql } from "@sms/db";

export type ProjectRecord = {
  id: string;
  createdAt: Date;
  claimedAt: Date | null;
  accountId: string | null;
  suspendedAt: Date | null;
  /** null: the shared default sender. */
  sender: string | null;
  senderBrandId: number | null;
  creditBalance: number;
  hasPaidCredits: boolean;
};

const COLUMNS =
  "id, created_at, claimed_at, account_id, suspended_at, sender, sender_brand_id, credit_balance, has_paid_credits";

type Row = {
  id: string;
  created_at: Date;
  claimed_at: Date | null;
  account_id: string | null;
  suspended_at: Date | null;
  sender: string | null;
  sender_brand_id: number | null;
  credit_balance: number;
  has_paid_credits: boolean;
};

const date = (value: Date | null) => (value === null ? null : new Date(value));

function fromRow(row: Row): ProjectRecord {
  return {
    id: row.id,
    createdAt: new Date(row.created_at),
    claimedAt: date(row.claimed_at),
    accountId: row.account_id,
    suspendedAt: date(row.suspended_at),
    sender: row.sender,
    senderBrandId: row.sender_brand_id === null ? null : Number(row.sender_brand_id),
    creditBalance: Number(row.credit_balance),
    hasPaidCredits: row.has_paid_credits,
  };
}

const CREATE_SQL = `
  INSERT INTO projects (id, created_at, updated_at) VALUES ($1, CAST($2 AS timestamptz), CAST($2 AS timestamptz))`;
const FIND_SQL = `SELECT ${COLUMNS} FROM projects WHERE id = $1`;
const LOCK_SQL = `SELECT ${COLUMNS} FROM projects WHERE id = $1 FOR UPDATE`;
const HAS_PAID_SQL = `SELECT has_paid_credits FROM projects WHERE id = $1`;
const ATTACH_SQL = `
  UPDATE projects SET account_id = $2, claimed_at = CAST($3 AS timestamptz), updated_at = CAST($3 AS timestamptz)
  WHERE id = $1`;
const SET_SUSPENDED_SQL = `
  UPDATE projects SET suspended_at = CAST($2 AS timestamptz), updated_at = CAST($3 AS timestamptz) WHERE id = $1`;
const SET_SENDER_SQL = `
  UPDATE projects SET sender = $2, sender_brand_id = CAST($3 AS integer), updated_at = CAST($4 AS timestamptz)
  WHERE id = $1`;

export function projectStore(sql: Sql) {
  return {
    async create(projectId: string, now: Date): Promise<void> {
      await sql.query(CREATE_SQL, [projectId, now]);
    },

    async find(projectId: string): Promise<ProjectRecord | null> {
      const [row] = await sql.query<Row>(FIND_SQL, [projectId]);
      return row ? fromRow(row) : null;
    },

    /** The project, its row locked until the transaction ends (serialises claims, grants, changes). */
    async lock(projectId: string): Promise<ProjectRecord | null> {
      const [row] = await sql.query<Row>(LOCK_SQL, [projectId]);
      return row ? fromRow(row) : null;
    },

    async hasPaidCredits(projectId: string): Promise<boolean> {
      const [row] = await sql.query<{ has_paid_credits: boolean }>(HAS_PAID_SQL, [projectId]);
      return row?.has_paid_credits === true;
    },

    /** Claimed: the project belongs to `accountId` from `now` on. */
    async attachAccount(projectId: string, accountId: string, now: Date): Promise<void> {
      await sql.query(ATTACH_SQL, [projectId, accountId, now]);
    },

    async setSuspendedAt(projectId: string, suspendedAt: Date | null, now: Date): Promise<void> {
      await sql.query(SET_SUSPENDED_SQL, [projectId, suspendedAt, now]);
    },

    /** The approved sender; both null: back to the shared default. */
    async setSender(
      projectId: string,
      sender: string | null,
      brandId: number | null,
      now: Date,
    ): Promise<void> {
      await sql.query(SET_SENDER_SQL, [projectId, sender, brandId, now]);
    },
  };
}

export type ProjectStore = ReturnType<typeof projectStore>;
