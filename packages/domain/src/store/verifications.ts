// verifications (issue 22): a one-time code's row. Written before its SMS is
// submitted (so there is no foreign key to messages: a test send writes its
// message after the simulator answered), checked under a row lock, cleared of
// its code hash with the message text, deleted with an unclaimed project's
// messages. Never returns the code hash except to the check that compares it.
import type { Sql } from "@sms/db";
import type { Locale } from "@sms/templates";
import type { KeyMode } from "../model/keys.ts";
import type { VerificationState, VerificationStatus, VerificationTemplate } from "../model/verification.ts";

export type NewVerification = {
  id: string;
  projectId: string;
  mode: KeyMode;
  messageId: string;
  recipientMasked: string;
  recipientFingerprint: string;
  template: VerificationTemplate;
  locale: string;
  /** The keyed hash of the code; null for a row recorded without one (it can never be approved). */
  codeHash: string | null;
  status: VerificationStatus;
  attemptsRemaining: number;
  expiresAt: Date;
  now: Date;
};

/** A row locked for a check: its state and the hash the check compares with. */
export type LockedVerification = VerificationState & { codeHash: string | null };

/** One UTC day of a project's verifications: started, approved, and the median seconds to approve. */
export type VerificationDay = { day: string; started: number; approved: number };

const COLUMNS = `id, project_id, mode, message_id, recipient_masked, template, locale, status,
  attempts_remaining, expires_at, approved_at, created_at, updated_at`;

type Row = {
  id: string;
  project_id: string;
  mode: KeyMode;
  message_id: string;
  recipient_masked: string;
  template: VerificationTemplate;
  locale: Locale;
  status: VerificationStatus;
  attempts_remaining: number;
  expires_at: Date;
  approved_at: Date | null;
  created_at: Date;
  updated_at: Date;
};

function fromRow(row: Row): VerificationState {
  return {
    id: row.id,
    projectId: row.project_id,
    mode: row.mode,
    messageId: row.message_id,
    recipientMasked: row.recipient_masked,
    template: row.template,
    locale: row.locale,
    status: row.status,
    attemptsRemaining: Number(row.attempts_remaining),
    expiresAt: new Date(row.expires_at),
    approvedAt: row.approved_at === null ? null : new Date(row.approved_at),
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

/** Parameters: $1 id … $14 now (see insert). An existing row for the message wins (ON CONFLICT). */
const INSERT_SQL = `
  INSERT INTO verifications (id, project_id, mode, message_id, recipient_masked, recipient_fingerprint,
    template, locale, code_hash, status, attempts_remaining, expires_at, created_at, updated_at)
  VALUES ($1, $2, CAST($3 AS "KeyMode"), $4, $5, $6, $7, $8, $9, CAST($10 AS "VerificationStatus"),
    CAST($11 AS integer), CAST($12 AS timestamptz), CAST($13 AS timestamptz), CAST($13 AS timestamptz))
  ON CONFLICT (message_id) DO NOTHING
  RETURNING id`;

const READ_SQL = `SELECT ${COLUMNS} FROM verifications WHERE id = $1 AND project_id = $2`;

const READ_BY_MESSAGE_SQL = `SELECT ${COLUMNS} FROM verifications WHERE message_id = $1 AND project_id = $2`;

const LOCK_SQL = `SELECT ${COLUMNS}, code_hash FROM verifications WHERE id = $1 AND project_id = $2 FOR UPDATE`;

/** A check's result: $2 status, $3 attempts left, $4 approved at, $5 now. */
const RECORD_CHECK_SQL = `
  UPDATE verifications
  SET status = CAST($2 AS "VerificationStatus"), attempts_remaining = CAST($3 AS integer),
      approved_at = CAST($4 AS timestamptz), updated_at = CAST($5 AS timestamptz)
  WHERE id = $1
  RETURNING ${COLUMNS}`;

/**
 * After a start was answered: a failed send marks it `send_failed` (its
 * first answer said so; updated_at stays), a pending one cancels the other
 * pending verifications of its project, mode and number ($3 fingerprint).
 */
const SETTLE_SQL = `
  WITH failed AS (
    UPDATE verifications SET status = 'send_failed'
    WHERE id = $1 AND CAST($5 AS boolean) AND status = 'pending'
    RETURNING id
  ), replaced AS (
    UPDATE verifications SET status = 'canceled', updated_at = CAST($4 AS timestamptz)
    WHERE project_id = $2 AND mode = CAST($6 AS "KeyMode") AND recipient_fingerprint = $3
      AND status = 'pending' AND id <> $1 AND NOT CAST($5 AS boolean)
      AND created_at <= CAST($4 AS timestamptz)
    RETURNING id
  )
  SELECT (SELECT count(*)::int FROM failed) AS failed, (SELECT count(*)::int FROM replaced) AS canceled`;

/** A start that sent nothing (503, refused): its row goes, unless its message exists after all. */
const DELETE_UNSENT_SQL = `
  DELETE FROM verifications v WHERE v.id = $1
    AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = v.message_id)`;

const DELETE_FOR_MESSAGES_SQL = `
  WITH gone AS (DELETE FROM verifications WHERE message_id = ANY(CAST($1 AS text[])) RETURNING id)
  SELECT count(*)::int AS deleted FROM gone`;

/**
 * Retention: the code hash of verifications created before $1 is cleared
 * (no later than their message's text), in batches of $2, found through the
 * partial index of the codes still held (migration
 * 20261229000000_verification_codes_index), not among every verification.
 */
export const PURGE_CODES_SQL = `
  WITH gone AS (
    UPDATE verifications SET code_hash = NULL
    WHERE id IN (
      SELECT id FROM verifications
      WHERE code_hash IS NOT NULL AND created_at < CAST($1 AS timestamptz)
      ORDER BY created_at
      LIMIT CAST($2 AS integer)
      FOR UPDATE SKIP LOCKED
    )
    RETURNING id
  )
  SELECT count(*)::int AS purged FROM gone`;

/**
 * A project's log, newest first, keyset-paged on (created_at, id); only
 * verifications whose SMS was written (a start that crashed before its
 * message leaves a row nobody was ever told about).
 */
const LIST_SQL = `
  SELECT ${COLUMNS} FROM verifications v
  WHERE v.project_id = $1
    AND (CAST($2 AS timestamptz) IS NULL OR (v.created_at, v.id) < (CAST($2 AS timestamptz), $3))
    AND EXISTS (SELECT 1 FROM messages m WHERE m.id = v.message_id)
  ORDER BY v.created_at DESC, v.id DESC
  LIMIT CAST($4 AS integer)`;

/** Per UTC day since $2: verifications started and approved. */
const DAYS_SQL = `
  SELECT to_char(date_trunc('day', v.created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day,
         count(*)::int AS started,
         count(*) FILTER (WHERE v.status = 'approved')::int AS approved
  FROM verifications v
  WHERE v.project_id = $1 AND v.created_at >= CAST($2 AS timestamptz)
    AND EXISTS (SELECT 1 FROM messages m WHERE m.id = v.message_id)
  GROUP BY 1 ORDER BY 1`;

/** The median seconds from start to approval of those approved since $2 (null: none). */
const MEDIAN_SQL = `
  SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM (approved_at - created_at)))
    AS median_seconds
  FROM verifications
  WHERE project_id = $1 AND created_at >= CAST($2 AS timestamptz) AND status = 'approved'`;

export function verificationStore(sql: Sql) {
  return {
    /** Writes a new verification; false when one exists for its message already. */
    async insert(row: NewVerification): Promise<boolean> {
      const rows = await sql.query<{ id: string }>(INSERT_SQL, [
        row.id,
        row.projectId,
        row.mode,
        row.messageId,
        row.recipientMasked,
        row.recipientFingerprint,
        row.template,
        row.locale,
        row.codeHash,
        row.status,
        row.attemptsRemaining,
        row.expiresAt,
        row.now,
      ]);
      return rows.length > 0;
    },

    /** One indexed lookup by id and project: another project's verification is absent. */
    async read(id: string, projectId: string): Promise<VerificationState | null> {
      const [row] = await sql.query<Row>(READ_SQL, [id, projectId]);
      return row ? fromRow(row) : null;
    },

    async readByMessage(messageId: string, projectId: string): Promise<VerificationState | null> {
      const [row] = await sql.query<Row>(READ_BY_MESSAGE_SQL, [messageId, projectId]);
      return row ? fromRow(row) : null;
    },

    /** Inside a transaction: the row, locked until it commits, with its code hash. */
    async lockForCheck(id: string, projectId: string): Promise<LockedVerification | null> {
      const [row] = await sql.query<Row & { code_hash: string | null }>(LOCK_SQL, [id, projectId]);
      return row ? { ...fromRow(row), codeHash: row.code_hash } : null;
    },

    async recordCheck(change: {
      id: string;
      status: VerificationStatus;
      attemptsRemaining: number;
      approvedAt: Date | null;
      now: Date;
    }): Promise<VerificationState> {
      const [row] = await sql.query<Row>(RECORD_CHECK_SQL, [
        change.id,
        change.status,
        change.attemptsRemaining,
        change.approvedAt,
        change.now,
      ]);
      if (!row) throw new Error("a locked verification vanished during its check");
      return fromRow(row);
    },

    /** After a start's answer: mark a failed send, or cancel the number's other pending verifications. */
    async settle(options: {
      id: string;
      projectId: string;
      mode: KeyMode;
      recipientFingerprint: string;
      sendFailed: boolean;
      now: Date;
    }): Promise<{ canceled: number }> {
      const [row] = await sql.query<{ failed: number; canceled: number }>(SETTLE_SQL, [
        options.id,
        options.projectId,
        options.recipientFingerprint,
        options.now,
        options.sendFailed,
        options.mode,
      ]);
      return { canceled: Number(row?.canceled ?? 0) };
    },

    async deleteUnsent(id: string): Promise<void> {
      await sql.query(DELETE_UNSENT_SQL, [id]);
    },

    async deleteForMessages(messageIds: string[]): Promise<number> {
      const [row] = await sql.query<{ deleted: number }>(DELETE_FOR_MESSAGES_SQL, [messageIds]);
      return Number(row?.deleted ?? 0);
    },

    async purgeCodes(cutoff: Date, batchSize: number): Promise<number> {
      const [row] = await sql.query<{ purged: number }>(PURGE_CODES_SQL, [cutoff, batchSize]);
      return Number(row?.purged ?? 0);
    },

    async list(
      projectId: string,
      options: { before: { createdAt: Date; id: string } | null; limit: number },
    ): Promise<VerificationState[]> {
      const rows = await sql.query<Row>(LIST_SQL, [
        projectId,
        options.before?.createdAt ?? null,
        options.before?.id ?? "",
        options.limit,
      ]);
      return rows.map(fromRow);
    },

    /** Started and approved per UTC day since `since`, and the median seconds to approve. */
    async conversion(
      projectId: string,
      since: Date,
    ): Promise<{ days: VerificationDay[]; medianSecondsToApprove: number | null }> {
      const days = await sql.query<VerificationDay>(DAYS_SQL, [projectId, since]);
      const [median] = await sql.query<{ median_seconds: number | string | null }>(MEDIAN_SQL, [
        projectId,
        since,
      ]);
      const value = median?.median_seconds;
      return {
        days: days.map((d) => ({ day: d.day, started: Number(d.started), approved: Number(d.approved) })),
        medianSecondsToApprove: value === null || value === undefined ? null : Number(value),
      };
    },
  };
}

export type VerificationStore = ReturnType<typeof verificationStore>;
