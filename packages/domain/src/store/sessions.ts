// dashboard_sessions: signed-in dashboard sessions. The browser holds a random
// token; only its SHA-256 hash is stored. A session ends when it is idle for
// too long (idle_expires_at, moved forward on every use), at its absolute
// expiry, or when its row is deleted (sign-out).
import type { Sql } from "@sms/db";

export type SessionRecord = {
  id: string;
  provider: string;
  subject: string;
  name: string | null;
  createdAt: Date;
  idleExpiresAt: Date;
  expiresAt: Date;
  /** The account of this identity, when it has one (it claimed a project). */
  accountId: string | null;
};

const CREATE_SQL = `
  INSERT INTO dashboard_sessions (id, token_hash, provider, subject, name, created_at, last_seen_at,
                                  idle_expires_at, expires_at)
  VALUES ($1, $2, $3, $4, $5, CAST($6 AS timestamptz), CAST($6 AS timestamptz), CAST($7 AS timestamptz),
          CAST($8 AS timestamptz))`;

// One statement per request: renew the idle expiry (never past the absolute
// one) and find the identity's account.
const RESUME_SQL = `
  WITH s AS (
    UPDATE dashboard_sessions
    SET last_seen_at = CAST($2 AS timestamptz),
        idle_expires_at = LEAST(
          CASE WHEN provider || ':' || subject = ANY(CAST($4 AS text[])) THEN CAST($5 AS timestamptz)
               ELSE CAST($3 AS timestamptz) END,
          expires_at)
    WHERE token_hash = $1 AND idle_expires_at > CAST($2 AS timestamptz) AND expires_at > CAST($2 AS timestamptz)
    RETURNING id, provider, subject, name, created_at, idle_expires_at, expires_at
  )
  SELECT s.id, s.provider, s.subject, s.name, s.created_at, s.idle_expires_at, s.expires_at, ai.account_id
  FROM s LEFT JOIN account_identities ai ON ai.provider = s.provider AND ai.subject = s.subject`;

const DELETE_SQL = `DELETE FROM dashboard_sessions WHERE token_hash = $1 RETURNING id`;

// Every session of an identity and of the other identities of its account.
const DELETE_ALL_SQL = `
  WITH gone AS (
    DELETE FROM dashboard_sessions
    WHERE (provider = $1 AND subject = $2)
       OR (provider, subject) IN (SELECT provider, subject FROM account_identities WHERE account_id = $3)
    RETURNING id
  )
  SELECT count(*)::int AS ended FROM gone`;

const PURGE_SQL = `
  WITH gone AS (
    DELETE FROM dashboard_sessions WHERE id IN (
      SELECT id FROM dashboard_sessions WHERE idle_expires_at <= CAST($1 AS timestamptz)
      ORDER BY idle_expires_at LIMIT CAST($2 AS integer)
      FOR UPDATE SKIP LOCKED
    )
    RETURNING id
  )
  SELECT count(*)::int AS purged FROM gone`;

export function sessionStore(sql: Sql) {
  return {
    async create(session: {
      id: string;
      tokenHash: string;
      provider: string;
      subject: string;
      name: string | null;
      now: Date;
      idleExpiresAt: Date;
      expiresAt: Date;
    }): Promise<void> {
      await sql.query(CREATE_SQL, [
        session.id,
        session.tokenHash,
        session.provider,
        session.subject,
        session.name,
        session.now,
        session.idleExpiresAt,
        session.expiresAt,
      ]);
    },

    /**
     * The live session with this token hash, its idle expiry moved to
     * `idleExpiresAt` (`operators.idleExpiresAt` for an identity listed in
     * `operators.identities`, as `provider:subject`); null when none.
     */
    async resume(
      tokenHash: string,
      now: Date,
      idleExpiresAt: Date,
      operators: { identities: readonly string[]; idleExpiresAt: Date } = { identities: [], idleExpiresAt },
    ): Promise<SessionRecord | null> {
      const [row] = await sql.query<{
        id: string;
        provider: string;
        subject: string;
        name: string | null;
        created_at: Date;
        idle_expires_at: Date;
        expires_at: Date;
        account_id: string | null;
      }>(RESUME_SQL, [tokenHash, now, idleExpiresAt, [...operators.identities], operators.idleExpiresAt]);
      if (!row) return null;
      return {
        id: row.id,
        provider: row.provider,
        subject: row.subject,
        name: row.name,
        createdAt: new Date(row.created_at),
        idleExpiresAt: new Date(row.idle_expires_at),
        expiresAt: new Date(row.expires_at),
        accountId: row.account_id,
      };
    },

    /** Ends the session with this token hash (sign-out); true when there was one. */
    async delete(tokenHash: string): Promise<boolean> {
      return (await sql.query(DELETE_SQL, [tokenHash])).length > 0;
    },

    /** Ends every session of this identity and of its account's other identities; how many ended. */
    async deleteAll(
      identity: { provider: string; subject: string },
      accountId: string | null,
    ): Promise<number> {
      const [row] = await sql.query<{ ended: number }>(DELETE_ALL_SQL, [
        identity.provider,
        identity.subject,
        accountId,
      ]);
      return Number(row?.ended ?? 0);
    },

    /** Deletes one batch of sessions idle-expired by `now`; returns how many. */
    async purgeExpired(now: Date, batchSize: number): Promise<number> {
      const [row] = await sql.query<{ purged: number }>(PURGE_SQL, [now, batchSize]);
      return Number(row?.purged ?? 0);
    },
  };
}

export type SessionStore = ReturnType<typeof sessionStore>;
