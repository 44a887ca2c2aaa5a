// projects: a project's state (claimed, suspended, sender). Its credit
// balance is written by store/ledger.ts only.
import type { Sql } from "@sms/db";

export type ProjectRecord = {
  id: string;
  /** What the owner calls it; null: not named (the pages show the id alone). */
  name: string | null;
  createdAt: Date;
  claimedAt: Date | null;
  accountId: string | null;
  suspendedAt: Date | null;
  /** null: the shared default sender. */
  sender: string | null;
  senderBrandId: number | null;
  creditBalance: number;
  hasPaidCredits: boolean;
  /** The most credits live sends may reserve in one UTC day; null: no cap. */
  dailyCreditCap: number | null;
  /** Credits reserved (less refunds) on the UTC day `day` (YYYY-MM-DD); null day: none yet. */
  dailyCredits: { day: string | null; used: number };
  /** Below this balance the dashboard warns; null: no warning. */
  lowBalanceThreshold: number | null;
};

const COLUMNS =
  "id, name, created_at, claimed_at, account_id, suspended_at, sender, sender_brand_id, credit_balance, has_paid_credits, daily_credit_cap, daily_credits_day, daily_credits_used, low_balance_threshold";

type Row = {
  id: string;
  name: string | null;
  created_at: Date;
  claimed_at: Date | null;
  account_id: string | null;
  suspended_at: Date | null;
  sender: string | null;
  sender_brand_id: number | null;
  credit_balance: number;
  has_paid_credits: boolean;
  daily_credit_cap: number | null;
  daily_credits_day: Date | string | null;
  daily_credits_used: number;
  low_balance_threshold: number | null;
};

const nullableNumber = (value: number | null) => (value === null ? null : Number(value));

/** A DATE column as YYYY-MM-DD, whichever way the driver hands it over (pg: a local Date; PGlite: UTC). */
function dayText(value: Date | string | null): string | null {
  if (value === null) return null;
  if (typeof value === "string") return value.slice(0, 10);
  const local = new Date(value.getTime() - value.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 10);
}

const date = (value: Date | null) => (value === null ? null : new Date(value));

function fromRow(row: Row): ProjectRecord {
  return {
    id: row.id,
    name: row.name,
    createdAt: new Date(row.created_at),
    claimedAt: date(row.claimed_at),
    accountId: row.account_id,
    suspendedAt: date(row.suspended_at),
    sender: row.sender,
    senderBrandId: row.sender_brand_id === null ? null : Number(row.sender_brand_id),
    creditBalance: Number(row.credit_balance),
    hasPaidCredits: row.has_paid_credits,
    dailyCreditCap: nullableNumber(row.daily_credit_cap),
    dailyCredits: { day: dayText(row.daily_credits_day), used: Number(row.daily_credits_used) },
    lowBalanceThreshold: nullableNumber(row.low_balance_threshold),
  };
}

const CREATE_SQL = `
  INSERT INTO projects (id, created_at, updated_at) VALUES ($1, CAST($2 AS timestamptz), CAST($2 AS timestamptz))`;
const FIND_SQL = `SELECT ${COLUMNS} FROM projects WHERE id = $1`;
const LOCK_SQL = `SELECT ${COLUMNS} FROM projects WHERE id = $1 FOR UPDATE`;
const ATTACH_SQL = `
  UPDATE projects SET account_id = $2, claimed_at = CAST($3 AS timestamptz), updated_at = CAST($3 AS timestamptz)
  WHERE id = $1`;
const SET_SUSPENDED_SQL = `
  UPDATE projects SET suspended_at = CAST($2 AS timestamptz), updated_at = CAST($3 AS timestamptz) WHERE id = $1`;
const SET_SPENDING_SQL = `
  UPDATE projects SET daily_credit_cap = CAST($2 AS integer), low_balance_threshold = CAST($3 AS integer),
         updated_at = CAST($4 AS timestamptz)
  WHERE id = $1`;
const SET_CAP_SQL = `
  UPDATE projects SET daily_credit_cap = CAST($2 AS integer), updated_at = CAST($3 AS timestamptz) WHERE id = $1`;
const SET_NAME_SQL = `UPDATE projects SET name = $2, updated_at = CAST($3 AS timestamptz) WHERE id = $1`;
const SET_SENDER_SQL = `
  UPDATE projects SET sender = $2, sender_brand_id = CAST($3 AS integer), updated_at = CAST($4 AS timestamptz)
  WHERE id = $1`;

/** A project as its account's list shows it. */
export type AccountProjectRow = ProjectRecord & {
  messagesToday: number;
  /** The name asked for in the pending sender request, if any. */
  pendingSender: string | null;
};

/** A project as the operator's search finds it. */
export type FoundProject = ProjectRecord & { accountEmail: string | null };

const P_COLUMNS = COLUMNS.split(", ")
  .map((column) => `p.${column}`)
  .join(", ");

// The account's projects by claim (newest first): few per account, read
// through projects_account_id_idx; each count of today's messages is a range
// of messages_project_id_created_at_id_idx.
const LIST_FOR_ACCOUNT_SQL = `
  SELECT ${P_COLUMNS},
         (SELECT count(*)::int FROM messages m
          WHERE m.project_id = p.id AND m.created_at >= CAST($2 AS timestamptz)) AS messages_today,
         (SELECT r.name FROM sender_requests r WHERE r.project_id = p.id AND r.status = 'pending'
          ORDER BY r.created_at DESC LIMIT 1) AS pending_sender
  FROM projects p
  WHERE p.account_id = $1
    AND (CAST($3 AS timestamptz) IS NULL OR (p.claimed_at, p.id) < (CAST($3 AS timestamptz), CAST($4 AS text)))
  ORDER BY p.claimed_at DESC, p.id DESC
  LIMIT CAST($5 AS integer)`;

const FIND_FOR_ACCOUNT_SQL = `SELECT ${COLUMNS} FROM projects WHERE id = $1 AND account_id = $2`;

// The operator's search: by project id (primary key), by a key's displayable
// prefix (api_keys_prefix_idx) or by the account's address (accounts_email_idx).
const SEARCH_SQL = `
  SELECT ${P_COLUMNS}, a.email AS account_email
  FROM projects p LEFT JOIN accounts a ON a.id = p.account_id
  WHERE p.id IN (
    SELECT id FROM projects WHERE id = CAST($1 AS text)
    UNION SELECT project_id FROM api_keys WHERE prefix = CAST($2 AS text)
    UNION SELECT pr.id FROM projects pr JOIN accounts ac ON ac.id = pr.account_id WHERE ac.email = CAST($3 AS text)
  )
  ORDER BY p.created_at DESC, p.id DESC
  LIMIT CAST($4 AS integer)`;

export function projectStore(sql: Sql) {
  return {
    async create(projectId: string, now: Date): Promise<void> {
      await sql.query(CREATE_SQL, [projectId, now]);
    },

    async find(projectId: string): Promise<ProjectRecord | null> {
      const [row] = await sql.query<Row>(FIND_SQL, [projectId]);
      return row ? fromRow(row) : null;
    },

    /** The project if it belongs to `accountId`; null otherwise (absent or another account's). */
    async findForAccount(projectId: string, accountId: string): Promise<ProjectRecord | null> {
      const [row] = await sql.query<Row>(FIND_FOR_ACCOUNT_SQL, [projectId, accountId]);
      return row ? fromRow(row) : null;
    },

    /** One page of an account's projects, newest claim first, after `after` (exclusive). */
    async listForAccount(options: {
      accountId: string;
      todayStart: Date;
      after: { claimedAt: Date; id: string } | null;
      limit: number;
    }): Promise<AccountProjectRow[]> {
      const rows = await sql.query<Row & { messages_today: number; pending_sender: string | null }>(
        LIST_FOR_ACCOUNT_SQL,
        [
          options.accountId,
          options.todayStart,
          options.after?.claimedAt ?? null,
          options.after?.id ?? null,
          options.limit,
        ],
      );
      return rows.map((row) => ({
        ...fromRow(row),
        messagesToday: Number(row.messages_today),
        pendingSender: row.pending_sender,
      }));
    },

    /** Projects matching an id, a key prefix or an account address (each may be null), newest first. */
    async search(options: {
      projectId: string | null;
      keyPrefix: string | null;
      email: string | null;
      limit: number;
    }): Promise<FoundProject[]> {
      const rows = await sql.query<Row & { account_email: string | null }>(SEARCH_SQL, [
        options.projectId,
        options.keyPrefix,
        options.email,
        options.limit,
      ]);
      return rows.map((row) => ({ ...fromRow(row), accountEmail: row.account_email }));
    },

    /** The project, its row locked until the transaction ends (serialises claims, grants, changes). */
    async lock(projectId: string): Promise<ProjectRecord | null> {
      const [row] = await sql.query<Row>(LOCK_SQL, [projectId]);
      return row ? fromRow(row) : null;
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

    /** The owner's spending controls: the daily credit cap and the low-balance threshold (null: none). */
    async setSpending(
      projectId: string,
      spending: { dailyCreditCap: number | null; lowBalanceThreshold: number | null },
      now: Date,
    ): Promise<void> {
      await sql.query(SET_SPENDING_SQL, [
        projectId,
        spending.dailyCreditCap,
        spending.lowBalanceThreshold,
        now,
      ]);
    },

    /** The owner's name for the project; null: no name. */
    async setName(projectId: string, name: string | null, now: Date): Promise<void> {
      await sql.query(SET_NAME_SQL, [projectId, name, now]);
    },

    /** The daily credit cap alone (the operator's). */
    async setDailyCreditCap(projectId: string, cap: number | null, now: Date): Promise<void> {
      await sql.query(SET_CAP_SQL, [projectId, cap, now]);
    },
  };
}

export type ProjectStore = ReturnType<typeof projectStore>;
