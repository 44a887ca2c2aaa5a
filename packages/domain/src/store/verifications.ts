// verifications (issue 22): a one-time code's row. Written before its SMS is
// submitted (so there is no foreign key to messages: a test send writes its
// message after the simulator answered), `unconfirmed` until its start saw the
// message written (the recovery sweep deletes one a crash left without its
// message), checked under a row lock, cleared of its code hash with the message
// text, deleted with an unclaimed project's messages. Never returns the code
// hash except to the check that compares it, nor the code's ciphertext except
// to the start that re-sends the same code (issue 53).
import { params, type Sql, sql } from "@sms/db";
import type { Locale } from "@sms/templates";
import type { KeyMode } from "../model/keys.ts";
import type { VerificationState, VerificationStatus, VerificationTemplate } from "../model/verification.ts";
import { notifyChanged } from "./changes.ts";

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
  /** The code under the message keyring (the id as associated data), for a second start's re-send; null: none. */
  codeCiphertext: Uint8Array | null;
  status: VerificationStatus;
  attemptsRemaining: number;
  expiresAt: Date;
  /** Written before its SMS: true until the start has seen its message (the recovery sweep's mark). */
  unconfirmed: boolean;
  now: Date;
};

/** A pending verification a second start may carry on: its code (encrypted) and what is left of it. */
export type ResendableVerification = {
  id: string;
  codeCiphertext: Uint8Array;
  attemptsRemaining: number;
  expiresAt: Date;
};

/** A row locked for a check: its state and the hash the check compares with. */
export type LockedVerification = VerificationState & { codeHash: string | null };

/** One UTC day of a project's verifications: started, approved, and the median seconds to approve. */
export type VerificationDay = { day: string; started: number; approved: number };

const COLUMNS = `id, project_id, mode, message_id, recipient_masked, template, locale, status,
  attempts_remaining, attempts_at_start, expires_at, approved_at, created_at, updated_at`;

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
  attempts_at_start: number;
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
    attemptsAtStart: Number(row.attempts_at_start),
    expiresAt: new Date(row.expires_at),
    approvedAt: row.approved_at === null ? null : new Date(row.approved_at),
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

/** A new verification's named values (see insert). */
type InsertValues = {
  id: string;
  projectId: string;
  mode: string;
  messageId: string;
  recipientMasked: string;
  recipientFingerprint: string;
  template: string;
  locale: string;
  codeHash: string | null;
  status: string;
  attemptsRemaining: number;
  expiresAt: Date;
  now: Date;
  codeCiphertext: Uint8Array | null;
  unconfirmed: boolean;
};
const v = params<InsertValues>();

/**
 * A new verification (InsertValues); attempts_at_start is attempts_remaining. An existing row for the
 * message wins (ON CONFLICT).
 */
const INSERT_SQL = sql`
  INSERT INTO verifications (id, project_id, mode, message_id, recipient_masked, recipient_fingerprint,
    template, locale, code_hash, status, attempts_remaining, attempts_at_start, expires_at, created_at, updated_at,
    code_ciphertext, unconfirmed)
  VALUES (${v.id}, ${v.projectId}, CAST(${v.mode} AS "KeyMode"), ${v.messageId}, ${v.recipientMasked}, ${v.recipientFingerprint}, ${v.template}, ${v.locale}, ${v.codeHash}, CAST(${v.status} AS "VerificationStatus"),
    CAST(${v.attemptsRemaining} AS integer), CAST(${v.attemptsRemaining} AS integer), CAST(${v.expiresAt} AS timestamptz), CAST(${v.now} AS timestamptz),
    CAST(${v.now} AS timestamptz), CAST(${v.codeCiphertext} AS bytea), CAST(${v.unconfirmed} AS boolean))
  ON CONFLICT (message_id) DO NOTHING
  RETURNING id`;

/**
 * The newest pending verification of a project, mode, number ($3 fingerprint) and template, still within
 * its lifetime at $5, whose code is held: a second start sends that code again (issue 53).
 */
const RESENDABLE_SQL = `
  SELECT id, code_ciphertext, attempts_remaining, expires_at FROM verifications
  WHERE project_id = $1 AND mode = CAST($2 AS "KeyMode") AND recipient_fingerprint = $3 AND status = 'pending'
    AND template = $4 AND expires_at > CAST($5 AS timestamptz) AND code_ciphertext IS NOT NULL
    AND attempts_remaining > 0
  ORDER BY created_at DESC, id DESC
  LIMIT 1`;

/** The verification a start carried on, locked until the start's settle commits (serialised with its checks). */
const LOCK_CARRIED_SQL = `
  SELECT status, attempts_remaining FROM verifications WHERE id = $1 FOR UPDATE`;

const READ_SQL = `SELECT ${COLUMNS} FROM verifications WHERE id = $1 AND project_id = $2`;

const READ_BY_MESSAGE_SQL = `SELECT ${COLUMNS} FROM verifications WHERE message_id = $1 AND project_id = $2`;

const LOCK_SQL = `SELECT ${COLUMNS}, code_hash FROM verifications WHERE id = $1 AND project_id = $2 FOR UPDATE`;

/** A check's result: $2 status, $3 attempts left, $4 approved at, $5 now; the code's ciphertext goes once not pending. */
const RECORD_CHECK_SQL = `
  UPDATE verifications
  SET status = CAST($2 AS "VerificationStatus"), attempts_remaining = CAST($3 AS integer),
      approved_at = CAST($4 AS timestamptz), updated_at = CAST($5 AS timestamptz),
      code_ciphertext = CASE WHEN CAST($2 AS "VerificationStatus") = 'pending' THEN code_ciphertext END
  WHERE id = $1
  RETURNING ${COLUMNS}, ${notifyChanged("id")} AS notified`;

/**
 * After a start's SMS was handed over: the row is confirmed (its message exists). A failed send marks it
 * `send_failed` (its first answer said so; updated_at stays) and drops its code; a pending one cancels
 * the other pending verifications of its project, mode and number (`recipientFingerprint`).
 *
 * A start that carried on an earlier verification's code (`carried`; issue 53) keeps the fewest wrong codes
 * left of it (`carriedAttemptsLeft`, read under the row lock of LOCK_CARRIED_SQL, so a check made on it meanwhile counts)
 * and of the verifications of its template it cancels now (they shared the code): a resend never gives
 * the code more attempts. When the earlier one was approved or ran out of attempts meanwhile (`spent`), the
 * code is spent: this verification is canceled too (a new start draws a new code).
 */
/** settle's named values (`carried`: it carried on an earlier verification's code). */
type SettleValues = {
  id: string;
  projectId: string;
  recipientFingerprint: string;
  now: Date;
  sendFailed: boolean;
  mode: string;
  carried: boolean;
  carriedAttemptsLeft: number | null;
  spent: boolean;
  template: string;
};
const settle = params<SettleValues>();
const SETTLE_SQL = sql`
  WITH replaced AS (
    UPDATE verifications SET status = 'canceled', updated_at = CAST(${settle.now} AS timestamptz), code_ciphertext = NULL
    WHERE project_id = ${settle.projectId} AND mode = CAST(${settle.mode} AS "KeyMode") AND recipient_fingerprint = ${settle.recipientFingerprint}
      AND status = 'pending' AND id <> ${settle.id} AND NOT CAST(${settle.sendFailed} AS boolean)
      AND created_at <= CAST(${settle.now} AS timestamptz)
    RETURNING id, template, attempts_remaining, ${sql.raw(notifyChanged("id"))} AS notified
  ), left_of_code AS (
    SELECT LEAST(CAST(${settle.carriedAttemptsLeft} AS integer), (SELECT min(attempts_remaining) FROM replaced WHERE template = ${settle.template})) AS n
  ), own AS (
    UPDATE verifications v SET
      unconfirmed = false,
      status = CASE
        WHEN CAST(${settle.sendFailed} AS boolean) AND v.status = 'pending' THEN CAST('send_failed' AS "VerificationStatus")
        WHEN NOT CAST(${settle.sendFailed} AS boolean) AND CAST(${settle.carried} AS boolean) AND CAST(${settle.spent} AS boolean) AND v.status = 'pending'
          THEN CAST('canceled' AS "VerificationStatus")
        ELSE v.status END,
      code_ciphertext = CASE
        WHEN CAST(${settle.sendFailed} AS boolean) OR (CAST(${settle.carried} AS boolean) AND CAST(${settle.spent} AS boolean)) THEN NULL
        ELSE v.code_ciphertext END,
      attempts_remaining = CASE WHEN NOT CAST(${settle.sendFailed} AS boolean) AND CAST(${settle.carried} AS boolean)
        THEN LEAST(v.attempts_remaining, (SELECT n FROM left_of_code)) ELSE v.attempts_remaining END,
      attempts_at_start = CASE WHEN NOT CAST(${settle.sendFailed} AS boolean) AND CAST(${settle.carried} AS boolean)
        THEN LEAST(v.attempts_remaining, (SELECT n FROM left_of_code)) ELSE v.attempts_at_start END
    WHERE v.id = ${settle.id}
    RETURNING v.attempts_at_start, v.status, ${sql.raw(notifyChanged("v.id"))} AS notified
  )
  SELECT (SELECT count(*)::int FROM replaced) AS canceled,
         (SELECT attempts_at_start FROM own) AS attempts_at_start,
         (SELECT status FROM own) AS status`;

/**
 * The recovery sweep's part (issue 53, G3): rows still unconfirmed, created before $1, a batch of $2
 * (the partial index of unconfirmed rows: those alone). A row without its message was left by a start
 * killed between its row and its message (nothing was answered, and no code was sent with it): it is
 * deleted. One with its message is confirmed (its start was killed after the message was written).
 */
const SWEEP_UNCONFIRMED_SQL = `
  WITH due AS (
    SELECT v.id, EXISTS (SELECT 1 FROM messages m WHERE m.id = v.message_id) AS has_message
    FROM verifications v
    WHERE v.unconfirmed = true AND v.created_at < CAST($1 AS timestamptz)
    ORDER BY v.created_at
    LIMIT CAST($2 AS integer)
    FOR UPDATE OF v SKIP LOCKED
  ), gone AS (
    DELETE FROM verifications WHERE id IN (SELECT id FROM due WHERE NOT has_message) RETURNING id
  ), kept AS (
    UPDATE verifications SET unconfirmed = false WHERE id IN (SELECT id FROM due WHERE has_message) RETURNING id
  )
  SELECT (SELECT count(*)::int FROM gone) AS deleted, (SELECT count(*)::int FROM kept) AS confirmed`;

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
    UPDATE verifications SET code_hash = NULL, code_ciphertext = NULL
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

/** The median seconds from start to approval of those approved since $2 (null: none), with their SMS too. */
const MEDIAN_SQL = `
  SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM (v.approved_at - v.created_at)))
    AS median_seconds
  FROM verifications v
  WHERE v.project_id = $1 AND v.created_at >= CAST($2 AS timestamptz) AND v.status = 'approved'
    AND EXISTS (SELECT 1 FROM messages m WHERE m.id = v.message_id)`;

export function verificationStore(sql: Sql) {
  return {
    /** Writes a new verification; false when one exists for its message already. */
    async insert(row: NewVerification): Promise<boolean> {
      const rows = await sql.query<{ id: string }>(
        INSERT_SQL.text,
        INSERT_SQL.bind({
          id: row.id,
          projectId: row.projectId,
          mode: row.mode,
          messageId: row.messageId,
          recipientMasked: row.recipientMasked,
          recipientFingerprint: row.recipientFingerprint,
          template: row.template,
          locale: row.locale,
          codeHash: row.codeHash,
          status: row.status,
          attemptsRemaining: row.attemptsRemaining,
          expiresAt: row.expiresAt,
          now: row.now,
          codeCiphertext: row.codeCiphertext,
          unconfirmed: row.unconfirmed,
        }),
      );
      return rows.length > 0;
    },

    /** The pending verification a second start to the same number and template carries on (RESENDABLE_SQL). */
    async findResendable(options: {
      projectId: string;
      mode: KeyMode;
      recipientFingerprint: string;
      template: VerificationTemplate;
      now: Date;
    }): Promise<ResendableVerification | null> {
      const [row] = await sql.query<{
        id: string;
        code_ciphertext: Uint8Array;
        attempts_remaining: number;
        expires_at: Date;
      }>(RESENDABLE_SQL, [
        options.projectId,
        options.mode,
        options.recipientFingerprint,
        options.template,
        options.now,
      ]);
      if (!row) return null;
      return {
        id: row.id,
        codeCiphertext: new Uint8Array(row.code_ciphertext),
        attemptsRemaining: Number(row.attempts_remaining),
        expiresAt: new Date(row.expires_at),
      };
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

    /**
     * After a start's SMS: confirm the row, mark a failed send, or cancel the number's other pending
     * verifications; a start that carried on `carriedFrom`'s code keeps its fewest attempts (SETTLE_SQL).
     * Run it in a transaction when `carriedFrom` is given: that row stays locked until it commits.
     */
    async settle(options: {
      id: string;
      projectId: string;
      mode: KeyMode;
      recipientFingerprint: string;
      template: VerificationTemplate;
      sendFailed: boolean;
      carriedFrom: string | null;
      now: Date;
    }): Promise<{ canceled: number; attemptsAtStart: number | null; status: VerificationStatus | null }> {
      const [carried] = options.carriedFrom
        ? await sql.query<{ status: VerificationStatus; attempts_remaining: number }>(LOCK_CARRIED_SQL, [
            options.carriedFrom,
          ])
        : [];
      const spent =
        carried !== undefined && (carried.status === "approved" || carried.status === "max_attempts_reached");
      const [row] = await sql.query<{
        canceled: number;
        attempts_at_start: number | null;
        status: VerificationStatus | null;
      }>(
        SETTLE_SQL.text,
        SETTLE_SQL.bind({
          id: options.id,
          projectId: options.projectId,
          recipientFingerprint: options.recipientFingerprint,
          now: options.now,
          sendFailed: options.sendFailed,
          mode: options.mode,
          carried: options.carriedFrom !== null,
          carriedAttemptsLeft: carried ? Number(carried.attempts_remaining) : null,
          spent,
          template: options.template,
        }),
      );
      return {
        canceled: Number(row?.canceled ?? 0),
        attemptsAtStart:
          row?.attempts_at_start === null || row?.attempts_at_start === undefined
            ? null
            : Number(row.attempts_at_start),
        status: row?.status ?? null,
      };
    },

    /** The recovery sweep's batch of unconfirmed rows (SWEEP_UNCONFIRMED_SQL). */
    async sweepUnconfirmed(cutoff: Date, batchSize: number): Promise<{ deleted: number; confirmed: number }> {
      const [row] = await sql.query<{ deleted: number; confirmed: number }>(SWEEP_UNCONFIRMED_SQL, [
        cutoff,
        batchSize,
      ]);
      return { deleted: Number(row?.deleted ?? 0), confirmed: Number(row?.confirmed ?? 0) };
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
