// mcp_sessions: the API key an MCP session made for itself (create_test_key),
// by the SHA-256 hash of the session id the client holds (Mcp-Session-Id).
// Never the key: its id, whose row (and project) is read again on every use,
// so a revoked key or a suspended project stops serving the session at once.
// A binding slides like a dashboard session: idle_expires_at moves forward on
// use, never past expires_at.
import type { Sql } from "@sms/db";
import { fromKeyLookupRow, KEY_LOOKUP_COLUMNS, type KeyLookup, type KeyLookupRow } from "./keys.ts";

// A session binds the newest key it made: binding again replaces the key and
// starts its lifetime anew. The key is found by its hash, in the same statement.
const BIND_SQL = `
  INSERT INTO mcp_sessions (session_hash, api_key_id, created_at, last_seen_at, idle_expires_at, expires_at)
  SELECT $1, k.id, CAST($3 AS timestamptz), CAST($3 AS timestamptz), CAST($4 AS timestamptz),
         CAST($5 AS timestamptz)
  FROM api_keys k WHERE k.key_hash = $2
  ON CONFLICT (session_hash) DO UPDATE
  SET api_key_id = EXCLUDED.api_key_id, created_at = EXCLUDED.created_at, last_seen_at = EXCLUDED.last_seen_at,
      idle_expires_at = EXCLUDED.idle_expires_at, expires_at = EXCLUDED.expires_at
  RETURNING session_hash`;

// One statement per use: renew the idle expiry (never past the absolute one)
// and read the key and its project as authentication reads them (keys.lookup).
const RESUME_SQL = `
  WITH s AS (
    UPDATE mcp_sessions
    SET last_seen_at = CAST($2 AS timestamptz),
        idle_expires_at = LEAST(CAST($3 AS timestamptz), expires_at)
    WHERE session_hash = $1 AND idle_expires_at > CAST($2 AS timestamptz) AND expires_at > CAST($2 AS timestamptz)
    RETURNING api_key_id
  )
  SELECT ${KEY_LOOKUP_COLUMNS}
  FROM s JOIN api_keys k ON k.id = s.api_key_id JOIN projects p ON p.id = k.project_id`;

const DELETE_SQL = `DELETE FROM mcp_sessions WHERE session_hash = $1 RETURNING session_hash`;

const PURGE_SQL = `
  WITH gone AS (
    DELETE FROM mcp_sessions WHERE session_hash IN (
      SELECT session_hash FROM mcp_sessions WHERE idle_expires_at <= CAST($1 AS timestamptz)
      ORDER BY idle_expires_at LIMIT CAST($2 AS integer)
      FOR UPDATE SKIP LOCKED
    )
    RETURNING session_hash
  )
  SELECT count(*)::int AS purged FROM gone`;

export function mcpSessionStore(sql: Sql) {
  return {
    /**
     * Binds the key with hash `keyHash` to the session with hash
     * `sessionHash`, replacing any key it had; false when no such key exists.
     */
    async bind(binding: {
      sessionHash: string;
      keyHash: string;
      now: Date;
      idleExpiresAt: Date;
      expiresAt: Date;
    }): Promise<boolean> {
      const rows = await sql.query(BIND_SQL, [
        binding.sessionHash,
        binding.keyHash,
        binding.now,
        binding.idleExpiresAt,
        binding.expiresAt,
      ]);
      return rows.length > 0;
    },

    /** The live session's key (as keys.lookup reads it), its idle expiry moved to `idleExpiresAt`; null when none. */
    async resume(sessionHash: string, now: Date, idleExpiresAt: Date): Promise<KeyLookup | null> {
      const [row] = await sql.query<KeyLookupRow>(RESUME_SQL, [sessionHash, now, idleExpiresAt]);
      return row ? fromKeyLookupRow(row) : null;
    },

    /** Ends the session's binding (the client's DELETE /mcp); true when there was one. */
    async delete(sessionHash: string): Promise<boolean> {
      return (await sql.query(DELETE_SQL, [sessionHash])).length > 0;
    },

    /** Deletes one batch of bindings idle-expired by `now`; returns how many. */
    async purgeExpired(now: Date, batchSize: number): Promise<number> {
      const [row] = await sql.query<{ purged: number }>(PURGE_SQL, [now, batchSize]);
      return Number(row?.purged ?? 0);
    },
  };
}

export type McpSessionStore = ReturnType<typeof mcpSessionStore>;
