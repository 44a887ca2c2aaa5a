// claim_tokens: a test project's single-use claim link, stored as the
// SHA-256 hash of its token only.
import type { Sql } from "@sms/db";

export type ClaimTokenRecord = {
  id: string;
  projectId: string;
  expiresAt: Date;
  usedAt: Date | null;
  usedByAccountId: string | null;
};

/** A token with what the claim page needs of its project. */
export type ClaimTokenView = ClaimTokenRecord & {
  project: { createdAt: Date; claimedAt: Date | null; accountId: string | null };
};

type Row = {
  id: string;
  project_id: string;
  expires_at: Date;
  used_at: Date | null;
  used_by_account_id: string | null;
};

function fromRow(row: Row): ClaimTokenRecord {
  return {
    id: row.id,
    projectId: row.project_id,
    expiresAt: new Date(row.expires_at),
    usedAt: row.used_at === null ? null : new Date(row.used_at),
    usedByAccountId: row.used_by_account_id,
  };
}

const CREATE_SQL = `
  INSERT INTO claim_tokens (id, project_id, token_hash, expires_at, created_at)
  VALUES ($1, $2, $3, CAST($4 AS timestamptz), CAST($5 AS timestamptz))`;
const LOCK_SQL = `
  SELECT id, project_id, expires_at, used_at, used_by_account_id FROM claim_tokens WHERE token_hash = $1 FOR UPDATE`;
const VIEW_SQL = `
  SELECT t.id, t.project_id, t.expires_at, t.used_at, t.used_by_account_id,
         p.created_at AS project_created_at, p.claimed_at, p.account_id
  FROM claim_tokens t JOIN projects p ON p.id = t.project_id
  WHERE t.token_hash = $1`;
const MARK_USED_SQL = `
  UPDATE claim_tokens SET used_at = CAST($3 AS timestamptz), used_by_account_id = $2 WHERE id = $1`;

export function claimStore(sql: Sql) {
  return {
    async create(token: {
      id: string;
      projectId: string;
      tokenHash: string;
      expiresAt: Date;
      now: Date;
    }): Promise<void> {
      await sql.query(CREATE_SQL, [token.id, token.projectId, token.tokenHash, token.expiresAt, token.now]);
    },

    /** The token, its row locked until the transaction ends: concurrent confirmations queue here. */
    async lockByHash(tokenHash: string): Promise<ClaimTokenRecord | null> {
      const [row] = await sql.query<Row>(LOCK_SQL, [tokenHash]);
      return row ? fromRow(row) : null;
    },

    async viewByHash(tokenHash: string): Promise<ClaimTokenView | null> {
      const [row] = await sql.query<
        Row & { project_created_at: Date; claimed_at: Date | null; account_id: string | null }
      >(VIEW_SQL, [tokenHash]);
      if (!row) return null;
      return {
        ...fromRow(row),
        project: {
          createdAt: new Date(row.project_created_at),
          claimedAt: row.claimed_at === null ? null : new Date(row.claimed_at),
          accountId: row.account_id,
        },
      };
    },

    async markUsed(tokenId: string, accountId: string, now: Date): Promise<void> {
      await sql.query(MARK_USED_SQL, [tokenId, accountId, now]);
    },
  };
}

export type ClaimStore = ReturnType<typeof claimStore>;
