// idempotency_records: the answer a key gets again for 24 hours (spec 4.2).
// The record is written together with its message (store/messages.ts:
// insertQueued, recordOutcome, releaseUnsent); these are the other statements.
import type { Sql } from "@sms/db";
import type { IdempotencyScope } from "../model/idempotency.ts";
import type { MessageResource } from "../model/message.ts";

/** A key's record: the request's fingerprint, and its answer once there is one (null: still in flight). */
export type PriorRecord = { fingerprint: string; responseBody: MessageResource | null };

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

export function parseBody(value: unknown): MessageResource | null {
  if (value === null || value === undefined) return null;
  return (typeof value === "string" ? JSON.parse(value) : value) as MessageResource;
}

export function idempotencyStore(sql: Sql) {
  return {
    /** A key's unexpired record as it stands now (after losing a race for it, or while waiting for its answer). */
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
