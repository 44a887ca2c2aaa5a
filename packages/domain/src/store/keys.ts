// api_keys: keys are stored as their SHA-256 hash and a displayable prefix,
// never in full.
import type { Sql } from "@sms/db";
import type { KeyMode } from "../model/keys.ts";

export type KeyRecord = {
  id: string;
  projectId: string;
  mode: KeyMode;
  /** The displayable start of the key (`sk_live_AbCd`); never the key. */
  prefix: string;
  /** What the owner called it at creation; null: unnamed. */
  name: string | null;
  createdAt: Date;
  revokedAt: Date | null;
  /** When it last authenticated a request (to the minute), or null if never. */
  lastUsedAt: Date | null;
};

/** What authentication needs about a key and its project. */
export type KeyLookup = {
  id: string;
  keyHash: string;
  mode: KeyMode;
  revokedAt: Date | null;
  project: {
    id: string;
    sender: string | null;
    senderBrandId: number | null;
    suspendedAt: Date | null;
    claimedAt: Date | null;
  };
};

const COLUMNS = "id, project_id, mode::text AS mode, prefix, name, created_at, revoked_at, last_used_at";

type Row = {
  id: string;
  project_id: string;
  mode: KeyMode;
  prefix: string;
  name: string | null;
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
};

function fromRow(row: Row): KeyRecord {
  return {
    id: row.id,
    projectId: row.project_id,
    mode: row.mode,
    prefix: row.prefix,
    name: row.name ?? null,
    createdAt: new Date(row.created_at),
    revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at),
    lastUsedAt: row.last_used_at === null ? null : new Date(row.last_used_at),
  };
}

const CREATE_SQL = `
  INSERT INTO api_keys (id, project_id, mode, key_hash, prefix, created_at, name)
  VALUES ($1, $2, CAST($3 AS "KeyMode"), $4, $5, CAST($6 AS timestamptz), $7)`;

/**
 * What authentication reads of a key `k` and its project `p` (joined by the
 * caller): here by hash, and by an MCP session's key id (mcp-sessions.ts).
 */
export const KEY_LOOKUP_COLUMNS = `k.id, k.key_hash, k.mode::text AS mode, k.revoked_at,
         p.id AS project_id, p.sender, p.sender_brand_id, p.suspended_at, p.claimed_at`;

export type KeyLookupRow = {
  id: string;
  key_hash: string;
  mode: KeyMode;
  revoked_at: Date | null;
  project_id: string;
  sender: string | null;
  sender_brand_id: number | null;
  suspended_at: Date | null;
  claimed_at: Date | null;
};

export function fromKeyLookupRow(row: KeyLookupRow): KeyLookup {
  return {
    id: row.id,
    keyHash: row.key_hash,
    mode: row.mode,
    revokedAt: row.revoked_at,
    project: {
      id: row.project_id,
      sender: row.sender,
      senderBrandId: row.sender_brand_id === null ? null : Number(row.sender_brand_id),
      suspendedAt: row.suspended_at,
      claimedAt: row.claimed_at,
    },
  };
}

const LOOKUP_SQL = `
  SELECT ${KEY_LOOKUP_COLUMNS}
  FROM api_keys k JOIN projects p ON p.id = k.project_id
  WHERE k.key_hash = $1`;

const LIST_SQL = `SELECT ${COLUMNS} FROM api_keys WHERE project_id = $1 ORDER BY created_at, id`;
const FIND_BY_ID_SQL = `SELECT ${COLUMNS} FROM api_keys WHERE id = $1`;
const FIND_BY_PREFIX_SQL = `
  SELECT ${COLUMNS} FROM api_keys WHERE prefix = $1 AND ($2::text IS NULL OR project_id = $2)
  ORDER BY created_at, id LIMIT 10`;
const FIRST_ACTIVE_SQL = `
  SELECT ${COLUMNS} FROM api_keys WHERE project_id = $1 AND mode = CAST($2 AS "KeyMode") AND revoked_at IS NULL
  ORDER BY created_at, id LIMIT 1`;
const LIST_PAGE_SQL = `
  SELECT ${COLUMNS} FROM api_keys
  WHERE project_id = $1
    AND (CAST($2 AS timestamptz) IS NULL OR (created_at, id) < (CAST($2 AS timestamptz), CAST($3 AS text)))
  ORDER BY created_at DESC, id DESC
  LIMIT CAST($4 AS integer)`;
const ACTIVE_OF_MODE_SQL = `
  SELECT ${COLUMNS} FROM api_keys WHERE project_id = $1 AND mode = CAST($2 AS "KeyMode") AND revoked_at IS NULL
  ORDER BY created_at, id`;
// At most one write a minute per key, whichever instance gets there first.
const TOUCH_SQL = `
  UPDATE api_keys SET last_used_at = CAST($2 AS timestamptz)
  WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < CAST($3 AS timestamptz))`;
const REVOKE_SQL = `
  UPDATE api_keys SET revoked_at = CAST($2 AS timestamptz) WHERE id = $1 AND revoked_at IS NULL RETURNING id`;

export function keyStore(sql: Sql) {
  return {
    async create(key: {
      id: string;
      projectId: string;
      mode: KeyMode;
      keyHash: string;
      prefix: string;
      now: Date;
      /** What the owner called it (shown in lists and the request log). */
      name?: string | null;
    }): Promise<void> {
      await sql.query(CREATE_SQL, [
        key.id,
        key.projectId,
        key.mode,
        key.keyHash,
        key.prefix,
        key.now,
        key.name ?? null,
      ]);
    },

    /** One indexed lookup by hash (unique), with the key's project. */
    async lookup(keyHash: string): Promise<KeyLookup | null> {
      const [row] = await sql.query<KeyLookupRow>(LOOKUP_SQL, [keyHash]);
      return row ? fromKeyLookupRow(row) : null;
    },

    /** Every key of a project, oldest first. */
    async listForProject(projectId: string): Promise<KeyRecord[]> {
      return (await sql.query<Row>(LIST_SQL, [projectId])).map(fromRow);
    },

    async findById(keyId: string): Promise<KeyRecord | null> {
      const [row] = await sql.query<Row>(FIND_BY_ID_SQL, [keyId]);
      return row ? fromRow(row) : null;
    },

    /** Keys with this prefix (at most 10), optionally within one project. */
    async findByPrefix(prefix: string, projectId: string | null): Promise<KeyRecord[]> {
      return (await sql.query<Row>(FIND_BY_PREFIX_SQL, [prefix, projectId])).map(fromRow);
    },

    /** The oldest key of `mode` in the project that is not revoked. */
    async firstActive(projectId: string, mode: KeyMode): Promise<KeyRecord | null> {
      const [row] = await sql.query<Row>(FIRST_ACTIVE_SQL, [projectId, mode]);
      return row ? fromRow(row) : null;
    },

    /** One page of a project's keys, newest first, after `after` (exclusive). */
    async listPage(
      projectId: string,
      after: { createdAt: Date; id: string } | null,
      limit: number,
    ): Promise<KeyRecord[]> {
      const rows = await sql.query<Row>(LIST_PAGE_SQL, [
        projectId,
        after?.createdAt ?? null,
        after?.id ?? null,
        limit,
      ]);
      return rows.map(fromRow);
    },

    /** Every key of `mode` in the project that is not revoked, oldest first. */
    async activeOfMode(projectId: string, mode: KeyMode): Promise<KeyRecord[]> {
      return (await sql.query<Row>(ACTIVE_OF_MODE_SQL, [projectId, mode])).map(fromRow);
    },

    /** Records a use of the key at `now`, unless one at or after `notBefore` is recorded already. */
    async touch(keyId: string, now: Date, notBefore: Date): Promise<void> {
      await sql.query(TOUCH_SQL, [keyId, now, notBefore]);
    },

    /** Revokes the key unless it already is; true when this call revoked it. */
    async revoke(keyId: string, now: Date): Promise<boolean> {
      return (await sql.query(REVOKE_SQL, [keyId, now])).length > 0;
    },
  };
}

export type KeyStore = ReturnType<typeof keyStore>;
