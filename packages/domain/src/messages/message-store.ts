// The statements behind POST /v1/messages. Each step of a send is one SQL
// statement (a chain of data-modifying CTEs), so the hot path of a test send
// is three round trips: admit, write ahead, record the outcome. Live sends add
// the credit reservation inside one short transaction.
//
// The statements run through `Sql`: on the hot path the database's own pooled
// query function (named prepared statements, no Prisma overhead), inside a
// Prisma transaction its `$queryRawUnsafe`. Every statement works the same on
// PostgreSQL and on PGlite.
import { newId } from "@sms/crypto";
import type { PrismaClient } from "@sms/db";
import type { KeyMode } from "../auth/authenticate-api-key.ts";
import type { LimitState } from "../rate-limits/consume-limits.ts";
import { MINUTE_MS, startOfUtcDay } from "../time.ts";
import {
  fromResourceRow,
  MESSAGE_RESOURCE_COLUMNS,
  type MessageResource,
  type MessageResourceRow,
  type MessageRow,
  type MessageStatus,
} from "./message-resource.ts";

/** How long an Idempotency-Key's first answer is kept (spec 8). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** Runs one parameterised statement (`$1`, `$2`, …) and returns its rows. */
export type Sql = { query<Row>(sql: string, params: readonly unknown[]): Promise<Row[]> };

/** A Prisma client or interactive transaction as `Sql`. */
export function prismaSql(prisma: Pick<PrismaClient, "$queryRawUnsafe">): Sql {
  return {
    query: <Row>(sql: string, params: readonly unknown[]) => prisma.$queryRawUnsafe<Row[]>(sql, ...params),
  };
}

export type IdempotencyScope = { projectId: string; mode: KeyMode; key: string };

export type PriorRecord = { fingerprint: string; responseBody: MessageResource | null };

export type Admission =
  | { kind: "prior"; prior: PriorRecord }
  | { kind: "limited"; state: LimitState }
  | { kind: "admitted"; state: LimitState };

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

/**
 * Step 1, one statement: an unexpired idempotency record for this key wins
 * (nothing is counted for a replay); otherwise one request is counted against
 * the project's per-minute limit, atomically (the counter only moves while it
 * stays within the limit, so a burst never overshoots).
 *
 * The counter row is hot (every send of a project updates it), so this
 * statement commits asynchronously (`synchronous_commit = off` for its own
 * transaction only): the row lock is released without waiting for the WAL
 * flush. A crash of the database can lose the last few increments, which only
 * means a few more sends are allowed; nothing else is written here.
 */
export async function admitSend(
  db: Sql,
  options: { scope: IdempotencyScope; now: Date; bucket: string; limit: number },
): Promise<Admission> {
  const { scope, now, bucket, limit } = options;
  const start = new Date(Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS);
  const end = new Date(start.getTime() + MINUTE_MS);
  const rows = await db.query<{
    has_prior: boolean;
    fingerprint: string | null;
    response_body: unknown;
    used: number | null;
  }>(ADMIT_SQL, [scope.projectId, scope.mode, scope.key, now, bucket, start, end, limit]);
  const row = rows[0];
  if (row?.has_prior && row.fingerprint !== null) {
    return {
      kind: "prior",
      prior: { fingerprint: row.fingerprint, responseBody: parseBody(row.response_body) },
    };
  }
  if (row?.used === null || row?.used === undefined) {
    return { kind: "limited", state: { limit, remaining: 0, resetAt: end, window: "minute" } };
  }
  const used = Number(row.used);
  return {
    kind: "admitted",
    state: { limit, remaining: Math.max(0, limit - used), resetAt: end, window: "minute" },
  };
}

const FIND_RECORD_SQL = `
  SELECT fingerprint, response_body FROM idempotency_records
  WHERE project_id = $1 AND mode = CAST($2 AS "KeyMode") AND key = $3 AND expires_at > CAST($4 AS timestamptz)`;

/** The idempotency record of a key as it stands now (after losing a race for it). */
export async function findIdempotencyRecord(
  db: Sql,
  scope: IdempotencyScope,
  now: Date,
): Promise<PriorRecord | null> {
  const rows = await db.query<{ fingerprint: string; response_body: unknown }>(FIND_RECORD_SQL, [
    scope.projectId,
    scope.mode,
    scope.key,
    now,
  ]);
  const row = rows[0];
  return row ? { fingerprint: row.fingerprint, responseBody: parseBody(row.response_body) } : null;
}

function parseBody(value: unknown): MessageResource | null {
  if (value === null || value === undefined) return null;
  return (typeof value === "string" ? JSON.parse(value) : value) as MessageResource;
}

export type QueuedMessage = {
  messageId: string;
  idempotencyId: string;
  scope: IdempotencyScope;
  fingerprint: string;
  expiresAt: Date;
  apiKeyId: string;
  recipientMasked: string;
  recipientCiphertext: Uint8Array;
  textCiphertext: Uint8Array;
  template: string;
  locale: string;
  sender: string;
  segments: number;
  encoding: string;
  provider: string;
  creditsReserved: number;
  now: Date;
};

const INSERT_QUEUED_SQL = `
  WITH idem AS (
    INSERT INTO idempotency_records (id, project_id, mode, key, fingerprint, message_id, response_body, expires_at, created_at)
    VALUES ($1, $2, CAST($3 AS "KeyMode"), $4, $5, $6, NULL, CAST($7 AS timestamptz), CAST($8 AS timestamptz))
    ON CONFLICT (project_id, mode, key) DO UPDATE
      SET id = EXCLUDED.id, fingerprint = EXCLUDED.fingerprint, message_id = EXCLUDED.message_id,
          response_body = NULL, expires_at = EXCLUDED.expires_at, created_at = EXCLUDED.created_at
      WHERE idempotency_records.expires_at <= EXCLUDED.created_at
    RETURNING id
  ), msg AS (
    INSERT INTO messages (id, project_id, api_key_id, mode, recipient_masked, recipient_ciphertext, text_ciphertext,
                          template, locale, sender, segments, encoding, status, provider, credits_reserved,
                          created_at, updated_at)
    SELECT CAST($6 AS text), CAST($2 AS text), CAST($9 AS text), CAST($3 AS "KeyMode"), CAST($10 AS text),
           CAST($11 AS bytea), CAST($12 AS bytea), CAST($13 AS text), CAST($14 AS text), CAST($15 AS text),
           CAST($16 AS integer), CAST($17 AS text), CAST('queued' AS "MessageStatus"), CAST($18 AS text),
           CAST($19 AS integer), CAST($8 AS timestamptz), CAST($8 AS timestamptz)
    FROM idem
    RETURNING id
  )
  SELECT count(*)::int AS written FROM msg`;

/**
 * Step 2, one statement: claims the key (a new record, or one whose 24 hours
 * are over) with the request still in flight (`response_body` NULL), and only
 * then writes the `queued` message. False when another request holds the key:
 * on PostgreSQL a concurrent insert of the same key waits for the other
 * transaction and then finds its row, so exactly one request wins.
 */
export async function insertQueuedMessage(db: Sql, m: QueuedMessage): Promise<boolean> {
  const rows = await db.query<{ written: number }>(INSERT_QUEUED_SQL, [
    m.idempotencyId,
    m.scope.projectId,
    m.scope.mode,
    m.scope.key,
    m.fingerprint,
    m.messageId,
    m.expiresAt,
    m.now,
    m.apiKeyId,
    m.recipientMasked,
    m.recipientCiphertext,
    m.textCiphertext,
    m.template,
    m.locale,
    m.sender,
    m.segments,
    m.encoding,
    m.provider,
    m.creditsReserved,
  ]);
  return Number(rows[0]?.written ?? 0) === 1;
}

export type Outcome = {
  status: Extract<MessageStatus, "submitted" | "failed" | "unknown">;
  errorCode: string | null;
  errorMessage: string | null;
  providerRef: string | null;
  /** When the first status check is due (submitted only). */
  nextCheckAt: Date | null;
};

const RECORD_OUTCOME_SQL = `
  WITH moved AS (
    UPDATE messages
    SET status = CAST($1 AS "MessageStatus"), error_code = CAST($2 AS text), error_message = CAST($3 AS text),
        provider_ref = CAST($4 AS text), submitted_at = CAST($5 AS timestamptz),
        next_check_at = CAST($6 AS timestamptz), updated_at = CAST($7 AS timestamptz)
    WHERE id = $8 AND status = 'queued'
    RETURNING id
  ), answered AS (
    UPDATE idempotency_records SET response_body = CAST($9 AS jsonb)
    WHERE id = $10 AND EXISTS (SELECT 1 FROM moved)
    RETURNING id
  )
  SELECT count(*)::int AS moved FROM moved`;

/**
 * Step 3, one statement: moves the message out of `queued` and stores the
 * answer on its idempotency record, together. False when the message is no
 * longer queued (the recovery sweep already made it `unknown`).
 */
export async function recordOutcome(
  db: Sql,
  options: {
    messageId: string;
    idempotencyId: string;
    outcome: Outcome;
    response: MessageResource;
    now: Date;
  },
): Promise<boolean> {
  const { outcome, now } = options;
  const rows = await db.query<{ moved: number }>(RECORD_OUTCOME_SQL, [
    outcome.status,
    outcome.errorCode,
    outcome.errorMessage,
    outcome.providerRef,
    outcome.status === "submitted" ? now : null,
    outcome.nextCheckAt,
    now,
    options.messageId,
    JSON.stringify(options.response),
    options.idempotencyId,
  ]);
  return Number(rows[0]?.moved ?? 0) > 0;
}

const RELEASE_SQL = `
  WITH gone AS (
    DELETE FROM messages WHERE id = $1 AND status = 'queued' RETURNING id
  ), released AS (
    DELETE FROM idempotency_records WHERE id = $2 AND EXISTS (SELECT 1 FROM gone) RETURNING id
  )
  SELECT count(*)::int AS released FROM gone`;

/**
 * The provider was not reached, so nothing was sent: the queued message and
 * its idempotency record go, and a retry with the same key is a fresh attempt.
 * False when the message is no longer queued (the recovery sweep got there
 * first; its answer stands).
 */
export async function releaseUnsentMessage(
  db: Sql,
  options: { messageId: string; idempotencyId: string },
): Promise<boolean> {
  const rows = await db.query<{ released: number }>(RELEASE_SQL, [options.messageId, options.idempotencyId]);
  return Number(rows[0]?.released ?? 0) > 0;
}

const READ_ROW_SQL = `SELECT ${MESSAGE_RESOURCE_COLUMNS} FROM messages WHERE id = $1`;

/** The stored state of a message, in the shape toMessageResource takes. */
export async function readMessageRow(db: Sql, messageId: string): Promise<MessageRow | null> {
  const [row] = await db.query<MessageResourceRow>(READ_ROW_SQL, [messageId]);
  return row ? fromResourceRow(row) : null;
}

const RESERVE_SQL = `
  WITH debited AS (
    UPDATE projects SET credit_balance = credit_balance - CAST($1 AS integer), updated_at = CAST($2 AS timestamptz)
    WHERE id = $3 AND credit_balance >= CAST($1 AS integer)
    RETURNING id
  ), entry AS (
    INSERT INTO credit_ledger (id, project_id, kind, amount, message_id, created_at)
    SELECT CAST($4 AS text), CAST($3 AS text), CAST('reservation' AS "CreditEntryKind"), -CAST($1 AS integer),
           CAST($5 AS text), CAST($2 AS timestamptz)
    FROM debited
    RETURNING id
  )
  SELECT count(*)::int AS reserved FROM entry`;

/** Reserves a live message's credits (one per segment). False when the balance is too small. */
export async function reserveCredits(
  db: Sql,
  options: { projectId: string; messageId: string; amount: number; now: Date },
): Promise<boolean> {
  const rows = await db.query<{ reserved: number }>(RESERVE_SQL, [
    options.amount,
    options.now,
    options.projectId,
    newId("cre"),
    options.messageId,
  ]);
  return Number(rows[0]?.reserved ?? 0) === 1;
}

const REFUND_SQL = `
  WITH entry AS (
    INSERT INTO credit_ledger (id, project_id, kind, amount, message_id, note, created_at)
    VALUES ($1, $2, CAST('refund' AS "CreditEntryKind"), CAST($3 AS integer), $4, $5, CAST($6 AS timestamptz))
    ON CONFLICT (message_id, kind) DO NOTHING
    RETURNING amount
  ), credited AS (
    UPDATE projects SET credit_balance = credit_balance + CAST($3 AS integer), updated_at = CAST($6 AS timestamptz)
    WHERE id = $2 AND EXISTS (SELECT 1 FROM entry)
    RETURNING id
  )
  SELECT count(*)::int AS refunded FROM credited`;

/** Gives a message's reservation back, at most once (unique per message and kind). */
export async function refund(
  db: Sql,
  projectId: string,
  messageId: string,
  amount: number,
  now: Date,
  note: string,
) {
  await db.query(REFUND_SQL, [newId("cre"), projectId, amount, messageId, note, now]);
}

const RELEASE_FREE_TIER_SQL = `
  UPDATE rate_limit_counters SET count = GREATEST(count - CAST($1 AS integer), 0)
  WHERE bucket = $2 AND window_start = CAST($3 AS timestamptz)
  RETURNING count`;

/** Gives free-tier segments back to the day they were taken from. */
export async function releaseFreeTierSegments(
  db: Sql,
  options: { bucket: string; segments: number; takenAt: Date },
) {
  await db.query(RELEASE_FREE_TIER_SQL, [options.segments, options.bucket, startOfUtcDay(options.takenAt)]);
}
