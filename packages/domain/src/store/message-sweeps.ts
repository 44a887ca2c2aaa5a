// message-sweeps: the statements that work through many messages at once,
// each a batch taken FOR UPDATE SKIP LOCKED so instances never take the same
// rows: the status-check round (lockDue, claimChecks, settleMany), the recovery sweep
// (recoverQueued), retention (purgeText, lockUnclaimedBefore, delete), key
// rotation (lockForRotation, setCiphertexts, countNotUnderKey) and the
// backlog gauges (countBacklog). Like messages.ts, every statement that sets
// messages.status writes its message_events row in the same statement. A
// message's own statements (its send, its reads) are in messages.ts; the
// top-level store offers both as `store.messages`.
import type { Sql } from "@sms/db";
import type { MessageError, MessageState, MessageStatus } from "../model/message.ts";
import { notifyChanged } from "./changes.ts";
import { fromRow, RESOURCE_COLUMNS, type ResourceRow } from "./messages.ts";

type DueRow = {
  id: string;
  provider: string;
  provider_ref: string | null;
  recipient_ciphertext: Uint8Array | null;
  submitted_at: Date | null;
  project_id: string;
  credits_reserved: number;
};

function dueOf(row: DueRow): DueMessage {
  return {
    id: row.id,
    provider: row.provider,
    providerRef: row.provider_ref,
    recipientCiphertext: row.recipient_ciphertext ? new Uint8Array(row.recipient_ciphertext) : null,
    submittedAt: row.submitted_at ? new Date(row.submitted_at) : null,
    projectId: row.project_id,
    creditsReserved: Number(row.credits_reserved),
  };
}

/** A `submitted` message claimed by a status-check round. */
export type DueMessage = {
  id: string;
  provider: string;
  providerRef: string | null;
  recipientCiphertext: Uint8Array | null;
  submittedAt: Date | null;
  projectId: string;
  creditsReserved: number;
};

const DUE_COLUMNS =
  "id, provider, provider_ref, recipient_ciphertext, submitted_at, project_id, credits_reserved";

const LOCK_DUE_SQL = `
  SELECT ${DUE_COLUMNS} FROM messages
  WHERE status = 'submitted' AND next_check_at <= CAST($1 AS timestamptz)
  ORDER BY next_check_at
  LIMIT CAST($2 AS integer)
  FOR UPDATE SKIP LOCKED`;

const SETTLE_MANY_SQL = `
  WITH moved AS (
    UPDATE messages AS m
    SET status = CAST(c.status AS "MessageStatus"), error_code = c.error_code, error_message = c.error_message,
        next_check_at = NULL, updated_at = CAST($5 AS timestamptz)
    FROM unnest(CAST($1 AS text[]), CAST($2 AS text[]), CAST($3 AS text[]), CAST($4 AS text[]))
         AS c(id, status, error_code, error_message)
    WHERE m.id = c.id AND m.status = 'submitted'
    RETURNING m.id, m.status, m.error_code, m.updated_at, m.created_at, ${notifyChanged("m.id")} AS notified
  ), event AS (
    INSERT INTO message_events (message_id, status, error_code, created_at, message_created_at)
    SELECT id, status, error_code, updated_at, created_at FROM moved
  )
  SELECT id FROM moved`;

const RESCHEDULE_SQL = `
  UPDATE messages SET next_check_at = CAST($2 AS timestamptz)
  WHERE id = ANY(CAST($1 AS text[])) AND status = 'submitted' AND next_check_at IS NOT NULL
  RETURNING id`;

const RECOVER_SQL = `
  WITH moved AS (
    UPDATE messages SET status = 'unknown', error_code = CAST($1 AS text), error_message = CAST($2 AS text),
                        updated_at = CAST($3 AS timestamptz)
    WHERE id IN (
      SELECT id FROM messages WHERE status = 'queued' AND created_at < CAST($4 AS timestamptz)
      ORDER BY created_at LIMIT CAST($5 AS integer)
      FOR UPDATE SKIP LOCKED
    )
    RETURNING ${RESOURCE_COLUMNS}
  ), event AS (
    INSERT INTO message_events (message_id, status, error_code, created_at, message_created_at)
    SELECT id, CAST('unknown' AS "MessageStatus"), error_code, updated_at, created_at FROM moved
  ), notified AS MATERIALIZED (
    SELECT ${notifyChanged("id")} FROM moved
  )
  SELECT * FROM moved WHERE (SELECT count(*) FROM notified) >= 0`;

const PURGE_TEXT_SQL = `
  WITH purged AS (
    UPDATE messages SET recipient_ciphertext = NULL, text_ciphertext = NULL, text_purged_at = CAST($1 AS timestamptz)
    WHERE id IN (
      SELECT id FROM messages
      WHERE text_purged_at IS NULL AND created_at < CAST($2 AS timestamptz)
        AND (status NOT IN ('queued', 'submitted') OR created_at < CAST($3 AS timestamptz))
      ORDER BY created_at
      LIMIT CAST($4 AS integer)
      FOR UPDATE SKIP LOCKED
    )
    RETURNING id
  )
  SELECT count(*)::int AS purged FROM purged`;

/**
 * A batch of unclaimed projects' messages created before $1, project by project in id order from $3:
 * each project's through its (project_id, created_at, id) index, so a batch reads the rows it takes
 * and no claimed project's message, however long their history (claimed projects keep theirs). The
 * purge passes the last batch's last project as $3, so one run visits each unclaimed project once.
 * (Taking the oldest messages first across every project joined and sorted every message older than
 * $1, claimed ones too, for each batch: bench/log/2026-11-29.md#the-unclaimed-purge-by-project-2026-11-29.)
 */
export const LOCK_UNCLAIMED_SQL = `
  SELECT m.id, m.created_at, p.id AS project_id FROM projects p
  CROSS JOIN LATERAL (
    SELECT m.id, m.created_at FROM messages m
    WHERE m.project_id = p.id AND m.created_at < CAST($1 AS timestamptz)
    ORDER BY m.created_at, m.id
    LIMIT CAST($2 AS integer)
  ) m
  WHERE p.claimed_at IS NULL AND p.id >= $3
  ORDER BY p.id
  LIMIT CAST($2 AS integer)
  FOR UPDATE OF m SKIP LOCKED
  FOR SHARE OF p`;

const DELETE_SQL = `
  WITH gone AS (DELETE FROM messages WHERE id = ANY(CAST($1 AS text[])) RETURNING id)
  SELECT count(*)::int AS deleted FROM gone`;

/**
 * `column` holds a blob whose key id is not $1 (a malformed blob counts too,
 * and then fails to decrypt). The key id sits in the blob's header: byte 1 is
 * its length, then the id in ASCII. CASE, not OR: SQL does not promise to
 * evaluate OR's operands in order, and get_byte on a too-short blob would raise.
 */
function notUnderKey(column: "recipient_ciphertext" | "text_ciphertext", param: string): string {
  return `(${column} IS NOT NULL AND CASE WHEN length(${column}) < 2 THEN true
    ELSE encode(substring(${column} from 3 for get_byte(${column}, 1)), 'escape') <> ${param} END)`;
}

const LOCK_FOR_ROTATION_SQL = `
  SELECT id, recipient_ciphertext, text_ciphertext FROM messages
  WHERE id > $1 AND (${notUnderKey("recipient_ciphertext", "$2")} OR ${notUnderKey("text_ciphertext", "$2")})
  ORDER BY id
  LIMIT CAST($3 AS integer)
  FOR UPDATE SKIP LOCKED`;

const COUNT_NOT_UNDER_KEY_SQL = `
  SELECT count(*)::int AS count FROM messages
  WHERE ${notUnderKey("recipient_ciphertext", "$1")} OR ${notUnderKey("text_ciphertext", "$1")}`;

const SET_CIPHERTEXTS_SQL = `
  UPDATE messages SET recipient_ciphertext = CAST($2 AS bytea), text_ciphertext = CAST($3 AS bytea) WHERE id = $1`;

const BACKLOG_SQL = `
  SELECT due.due, due.oldest_due_seconds,
         (SELECT count(*) FROM messages WHERE status = 'queued')::int AS queued,
         (SELECT count(*) FROM messages WHERE status = 'unknown' AND created_at >= CAST($2 AS timestamptz))::int AS unknown
  FROM (SELECT count(*)::int AS due,
               coalesce(extract(epoch FROM CAST($1 AS timestamptz) - min(next_check_at)), 0)::float8 AS oldest_due_seconds
        FROM messages WHERE next_check_at <= CAST($1 AS timestamptz) AND status = 'submitted') AS due`;

export function messageSweepStore(sql: Sql) {
  /** The next check of these messages, where they are still `submitted`: the count moved. */
  async function reschedule(ids: string[], nextCheckAt: Date): Promise<number> {
    if (ids.length === 0) return 0;
    return (await sql.query(RESCHEDULE_SQL, [ids, nextCheckAt])).length;
  }

  return {
    /**
     * Up to `batchSize` `submitted` messages due by `dueBy`, oldest due first,
     * locked (FOR UPDATE SKIP LOCKED) until the caller's transaction ends, so
     * no other round here or elsewhere takes them meanwhile. Run it in a
     * transaction; claimChecks keeps the ones asked after it commits.
     */
    async lockDue(options: { dueBy: Date; batchSize: number }): Promise<DueMessage[]> {
      const rows = await sql.query<DueRow>(LOCK_DUE_SQL, [options.dueBy, options.batchSize]);
      return rows.map(dueOf);
    },

    /**
     * Claims locked messages for a check made after the lock is gone: their
     * next check pushed to `nextCheckAt`, past the longest the check may take.
     */
    claimChecks: reschedule,

    /**
     * The next check of these messages, where they are still `submitted` (a
     * round's batch whose reports were not final: the claim held them longer).
     */
    rescheduleChecks: reschedule,

    /**
     * `submitted` → a final status, for a batch of messages in one statement.
     * Returns the ids that moved (a message that had already moved on is left
     * as it is: transitions are monotonic).
     */
    async settleMany(
      changes: Array<{
        messageId: string;
        status: Extract<MessageStatus, "delivered" | "undeliverable" | "failed" | "unknown">;
        error: MessageError | null;
      }>,
      now: Date,
    ): Promise<Set<string>> {
      if (changes.length === 0) return new Set();
      const rows = await sql.query<{ id: string }>(SETTLE_MANY_SQL, [
        changes.map((change) => change.messageId),
        changes.map((change) => change.status),
        changes.map((change) => change.error?.errorCode ?? null),
        changes.map((change) => change.error?.errorMessage ?? null),
        now,
      ]);
      return new Set(rows.map((row) => row.id));
    },

    /** Messages queued since before `cutoff` become `unknown` with `error` (a batch, SKIP LOCKED). */
    async recoverQueued(options: {
      cutoff: Date;
      error: MessageError;
      now: Date;
      batchSize: number;
    }): Promise<MessageState[]> {
      const rows = await sql.query<ResourceRow>(RECOVER_SQL, [
        options.error.errorCode,
        options.error.errorMessage,
        options.now,
        options.cutoff,
        options.batchSize,
      ]);
      return rows.map(fromRow);
    },

    /**
     * Forgets the text and full number of one batch of messages created
     * before `cutoff` (those not final yet only before `hardCutoff`);
     * `updated_at` stays. Returns how many.
     */
    async purgeText(options: {
      now: Date;
      cutoff: Date;
      hardCutoff: Date;
      batchSize: number;
    }): Promise<number> {
      const [row] = await sql.query<{ purged: number }>(PURGE_TEXT_SQL, [
        options.now,
        options.cutoff,
        options.hardCutoff,
        options.batchSize,
      ]);
      return Number(row?.purged ?? 0);
    },

    /**
     * Locks a batch of unclaimed projects' messages created before `cutoff`
     * (and share-locks their projects, so a claim in progress is waited for),
     * from the project `fromProjectId` on in id order (LOCK_UNCLAIMED_SQL).
     * Inside a transaction.
     */
    async lockUnclaimedBefore(
      cutoff: Date,
      batchSize: number,
      fromProjectId = "",
    ): Promise<Array<{ id: string; projectId: string; createdAt: Date }>> {
      const rows = await sql.query<{ id: string; project_id: string; created_at: Date }>(LOCK_UNCLAIMED_SQL, [
        cutoff,
        batchSize,
        fromProjectId,
      ]);
      return rows.map((row) => ({
        id: row.id,
        projectId: row.project_id,
        createdAt: new Date(row.created_at),
      }));
    },

    async delete(messageIds: string[]): Promise<number> {
      const [row] = await sql.query<{ deleted: number }>(DELETE_SQL, [messageIds]);
      return Number(row?.deleted ?? 0);
    },

    /** A batch (id order, after `afterId`) of messages holding a ciphertext under another key than `keyId`, locked. */
    async lockForRotation(options: { afterId: string; keyId: string; batchSize: number }) {
      const rows = await sql.query<{
        id: string;
        recipient_ciphertext: Uint8Array | null;
        text_ciphertext: Uint8Array | null;
      }>(LOCK_FOR_ROTATION_SQL, [options.afterId, options.keyId, options.batchSize]);
      return rows.map((row) => ({
        id: row.id,
        recipientCiphertext: row.recipient_ciphertext ? new Uint8Array(row.recipient_ciphertext) : null,
        textCiphertext: row.text_ciphertext ? new Uint8Array(row.text_ciphertext) : null,
      }));
    },

    async setCiphertexts(
      messageId: string,
      recipient: Uint8Array | null,
      text: Uint8Array | null,
    ): Promise<void> {
      await sql.query(SET_CIPHERTEXTS_SQL, [messageId, recipient, text]);
    },

    async countNotUnderKey(keyId: string): Promise<number> {
      const [row] = await sql.query<{ count: number }>(COUNT_NOT_UNDER_KEY_SQL, [keyId]);
      return Number(row?.count ?? 0);
    },

    /** Due for a status check by `now`, still queued, and unknown since `unknownSince` (each an indexed count). */
    async countBacklog(
      now: Date,
      unknownSince: Date,
    ): Promise<{ due: number; oldestDueSeconds: number; queued: number; unknown: number }> {
      const [row] = await sql.query<{
        due: number;
        oldest_due_seconds: number;
        queued: number;
        unknown: number;
      }>(BACKLOG_SQL, [now, unknownSince]);
      return {
        due: Number(row?.due ?? 0),
        oldestDueSeconds: Number(row?.oldest_due_seconds ?? 0),
        queued: Number(row?.queued ?? 0),
        unknown: Number(row?.unknown ?? 0),
      };
    },
  };
}

export type MessageSweepStore = ReturnType<typeof messageSweepStore>;
