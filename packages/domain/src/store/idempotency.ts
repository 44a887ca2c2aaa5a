// idempotency_records: the answer a key gets again for 24 hours (spec 4.2).
// The record is written together with its message (store/messages.ts:
// insertQueued, recordOutcome, releaseUnsent); these are the other statements.
import type { Sql } from "@sms/db";
import type { IdempotencyScope } from "../model/idempotency.ts";
import type { MessageResource } from "../model/message.ts";

/** A key's record: the request's fingerprint, and its answer once there is one (null: still in flight). */
export type PriorRecord = { fingerprint: string; responseBody: MessageResource | null };

/**
 * What admit found: the key's earlier record (nothing counted), or else the
 * window's count including this request (null: the limit was already reached,
 * nothing counted).
 */
export type Admission = { prior: PriorRecord; used: null } | { prior: null; used: number | null };

const ADMIT_SQL = `
  WITH prior AS (
    SELECT fingerprint, response_body FROM idempotency_records
    WHERE project_id = $1 AND mode = CAST($2 AS "KeyMode") AND key = $3 AND expires_at > CAST($4 AS timestamptz)
  ), counted AS (
    INSERT INTO rate_limit_counters (bucket, window_start, count, expires_at)
    SELECT CAST($5 AS text), CAST($6 AS timestamptz), 1, CAST($7 AS timestamptz)
    WHERE NOT EXISTS (SELECT 1 FROM prior)
    ON CONFLICT (bucket, window_start) DO UPDATE SET count = rate_limit_counters.count + 1
    WHERE rate_limit_counters.count < CAST($8 AS integer)
    RETURNING count
  )
  SELECT set_config('synchronous_commit', 'off', true) AS relaxed,
    EXISTS (SELECT 1 FROM prior) AS has_prior,
    (SELECT fingerprint FROM prior) AS fingerprint,
    (SELECT response_body FROM prior) AS response_body,
    (SELECT count FROM counted) AS used`;

const FIND_SQL = `
  SELECT fingerprint, response_body FROM idempotency_records
  WHERE project_id = $1 AND mode = CAST($2 AS "KeyMode") AND key = $3 AND expires_at > CAST($4 AS timestamptz)`;

const ANSWER_RECOVERED_SQL = `
  UPDATE idempotency_records SET response_body = CAST($1 AS jsonb)
  WHERE expires_at = CAST($2 AS timestamptz) AND message_id = $3 AND response_body IS NULL`;

const PURGE_EXPIRED_SQL = `
  WITH gone AS (
    DELETE FROM idempotency_records
    WHERE id IN (
      SELECT id FROM idempotency_records
      WHERE expires_at <= CAST($1 AS timestamptz)
      ORDER BY expires_at
      LIMIT CAST($2 AS integer)
      FOR UPDATE SKIP LOCKED
    )
    RETURNING id
  )
  SELECT count(*)::int AS purged FROM gone`;

const DELETE_FOR_MESSAGES_SQL = `
  WITH gone AS (DELETE FROM idempotency_records WHERE message_id = ANY(CAST($1 AS text[])) RETURNING id)
  SELECT count(*)::int AS deleted FROM gone`;

const COUNT_NOT_UNDER_KEY_SQL = `
  SELECT count(*)::int AS count FROM idempotency_records
  WHERE expires_at > CAST($1 AS timestamptz) AND split_part(fingerprint, ':', 1) <> $2`;

function parseBody(value: unknown): MessageResource | null {
  if (value === null || value === undefined) return null;
  return (typeof value === "string" ? JSON.parse(value) : value) as MessageResource;
}

export function idempotencyStore(sql: Sql) {
  return {
    /**
     * Step 1 of a send, one statement: an unexpired record for this key wins
     * (nothing is counted for a replay); otherwise one request is counted in
     * `bucket`'s window, atomically (the counter only moves while it stays
     * within `limit`, so a burst never overshoots).
     *
     * The counter row is hot (every send of a project updates it), so this
     * statement commits asynchronously (`synchronous_commit = off` for its own
     * transaction only): the row lock is released without waiting for the WAL
     * flush. A database crash can lose the last few increments, which only
     * allows a few more sends; nothing else is written here.
     */
    async admit(options: {
      scope: IdempotencyScope;
      now: Date;
      bucket: string;
      window: { start: Date; end: Date };
      limit: number;
    }): Promise<Admission> {
      const { scope, now, bucket, window, limit } = options;
      const [row] = await sql.query<{
        has_prior: boolean;
        fingerprint: string | null;
        response_body: unknown;
        used: number | null;
      }>(ADMIT_SQL, [scope.projectId, scope.mode, scope.key, now, bucket, window.start, window.end, limit]);
      if (row?.has_prior && row.fingerprint !== null) {
        return {
          prior: { fingerprint: row.fingerprint, responseBody: parseBody(row.response_body) },
          used: null,
        };
      }
      return { prior: null, used: row?.used === null || row?.used === undefined ? null : Number(row.used) };
    },

    /** A key's unexpired record as it stands now (after losing a race for it). */
    async find(scope: IdempotencyScope, now: Date): Promise<PriorRecord | null> {
      const [row] = await sql.query<{ fingerprint: string; response_body: unknown }>(FIND_SQL, [
        scope.projectId,
        scope.mode,
        scope.key,
        now,
      ]);
      return row ? { fingerprint: row.fingerprint, responseBody: parseBody(row.response_body) } : null;
    },

    /**
     * Gives an in-flight record the answer the recovery sweep decided. The
     * record expires exactly 24 hours after its message was created: that
     * finds it through the expires_at index (message_id has none).
     */
    async answerRecovered(options: { messageId: string; expiresAt: Date; response: MessageResource }) {
      await sql.query(ANSWER_RECOVERED_SQL, [
        JSON.stringify(options.response),
        options.expiresAt,
        options.messageId,
      ]);
    },

    /** Deletes one batch of records whose 24 hours are over; returns how many. */
    async purgeExpired(now: Date, batchSize: number): Promise<number> {
      const [row] = await sql.query<{ purged: number }>(PURGE_EXPIRED_SQL, [now, batchSize]);
      return Number(row?.purged ?? 0);
    },

    async deleteForMessages(messageIds: string[]): Promise<number> {
      const [row] = await sql.query<{ deleted: number }>(DELETE_FOR_MESSAGES_SQL, [messageIds]);
      return Number(row?.deleted ?? 0);
    },

    /** Unexpired records whose fingerprint was made under another key than `keyId`. */
    async countFingerprintsNotUnderKey(keyId: string, now: Date): Promise<number> {
      const [row] = await sql.query<{ count: number }>(COUNT_NOT_UNDER_KEY_SQL, [now, keyId]);
      return Number(row?.count ?? 0);
    },
  };
}

export type IdempotencyStore = ReturnType<typeof idempotencyStore>;
