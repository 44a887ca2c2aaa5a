// messages: a message's own statements, each one SQL statement (a chain of
// data-modifying CTEs) that works the same on PostgreSQL and PGlite: the
// send path's writes and the reads of one message or one project's count.
// A test send is one statement (answered-sends.ts: claimAnswered, through a
// batcher) when its simulator answered first; otherwise two: the key's claim
// and the minute's count (idempotency.ts: claimCounted), then insertAnswered
// here, which the top-level store runs through a batcher (batch.ts): test
// sends answered at the same moment are written by one statement and one
// durable commit. A live
// send writes ahead (insertQueuedLive, or writeAheadPaid) before uBill is contacted, then recordOutcome.
// insertQueuedLive, insertAnswered, recordOutcome and releaseUnsent also write the
// message's idempotency record, because the two must change together. The
// sweeps over many messages (status checks, recovery, retention, rotation)
// are in message-sweeps.ts.
//
// Every statement that sets messages.status also writes the message_events row
// of the new status in the same statement (insertQueuedLive, insertAnswered,
// recordOutcome here; settleMany, recoverQueued in message-sweeps.ts), so the
// dashboard's timeline is true without an extra round trip. A message enters
// each status at most once: the event's key is (message_id, status). The
// dashboard's reads are in message-log.ts.
import { type AnyStatement, isStatementRefusal, params, type Sql, sql, unnamedForFirst } from "@sms/db";
import type { IdempotencyScope } from "../model/idempotency.ts";
import type { MessageError, MessageResource, MessageState, MessageStatus } from "../model/message.ts";
import { notifyChanged } from "./changes.ts";
import {
  type ClaimValues,
  keyClaimCtes,
  ONE_CLAIM_INPUT,
  PRIOR_COLUMNS,
  type PriorColumns,
  type PriorRecord,
  priorOf,
} from "./idempotency.ts";
import { reservationCtes, reservationEntry } from "./ledger.ts";
import {
  type CounterValues,
  type CounterWindow,
  consumedOf,
  consumeManyValues,
  manyCounterClaim,
  oneCounterClaim,
  oneCounterValues,
} from "./limits.ts";
import { readerManyNearIdTime, readerNearIdTime, statementInMonth } from "./near-id-time.ts";
import { RELAXED_COMMIT } from "./relaxed-commit.ts";

/** The columns a Message resource is built from. */
export const RESOURCE_COLUMNS =
  "id, recipient_masked, status::text AS status, segments, error_code, error_message, created_at, updated_at";

export type ResourceRow = {
  id: string;
  recipient_masked: string;
  status: MessageStatus;
  segments: number | null;
  error_code: string | null;
  error_message: string | null;
  created_at: Date;
  updated_at: Date;
};

export function fromRow(row: ResourceRow): MessageState {
  return {
    id: row.id,
    recipientMasked: row.recipient_masked,
    status: row.status,
    segments: row.segments === null ? null : Number(row.segments),
    errorCode: row.error_code,
    errorMessage: row.error_message,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

/** Everything the write-ahead step stores about a new message. */
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

/** The named values of a queued message's statements: its key's claim, then what it says and how it goes. */
export type QueuedValues = ClaimValues &
  Pick<
    QueuedMessage,
    | "apiKeyId"
    | "recipientMasked"
    | "recipientCiphertext"
    | "textCiphertext"
    | "template"
    | "locale"
    | "sender"
    | "segments"
    | "encoding"
    | "provider"
    | "creditsReserved"
  >;
const q = params<QueuedValues>();
const counters = params<CounterValues>();

/**
 * The key's claim (keyClaimCtes over one key) and the queued message with its timeline's first event:
 * written only when the key is claimed.
 */
const QUEUED_CTES = sql`${ONE_CLAIM_INPUT}, ${keyClaimCtes("unanswered")}, msg AS (
    INSERT INTO messages (id, project_id, api_key_id, mode, recipient_masked, recipient_ciphertext, text_ciphertext,
                          template, locale, sender, segments, encoding, status, provider, credits_reserved,
                          created_at, updated_at)
    SELECT CAST(${q.messageId} AS text), CAST(${q.projectId} AS text), CAST(${q.apiKeyId} AS text),
           CAST(${q.mode} AS "KeyMode"), CAST(${q.recipientMasked} AS text),
           CAST(${q.recipientCiphertext} AS bytea), CAST(${q.textCiphertext} AS bytea), CAST(${q.template} AS text),
           CAST(${q.locale} AS text), CAST(${q.sender} AS text), CAST(${q.segments} AS integer),
           CAST(${q.encoding} AS text), CAST('queued' AS "MessageStatus"), CAST(${q.provider} AS text),
           CAST(${q.creditsReserved} AS integer), CAST(${q.now} AS timestamptz), CAST(${q.now} AS timestamptz)
    FROM idem
    RETURNING id, created_at
  ), event AS (
    INSERT INTO message_events (message_id, status, error_code, created_at, message_created_at)
    SELECT id, CAST('queued' AS "MessageStatus"), NULL, created_at, created_at FROM msg
  )`;

/**
 * A live write-ahead's first CTEs: QUEUED_CTES, the project's paid flag (`paid`), and the recipient's windows
 * (limits.ts manyCounterClaim's arrays), counted only when `when` holds.
 */
const queuedLiveCtes = <W extends AnyStatement>(when: W) => sql`${QUEUED_CTES}, paid AS (
    SELECT has_paid_credits AS paid FROM projects WHERE id = ${q.projectId}
  ), recipient AS (${manyCounterClaim(when)}
  )`;

/**
 * A live send's first write-ahead statement: the key's claim and the queued
 * message (QUEUED_CTES), the recipient's counters once the key is claimed,
 * and whether the project has paid credits: one round trip where it took
 * three. Its transaction commits without waiting for the disk (relaxed); the
 * send makes it durable before uBill is contacted (flushCommitted). Refused or
 * not, the caller decides: a refusal rolls the whole transaction back.
 */
const INSERT_QUEUED_LIVE_SQL = sql`
  WITH ${queuedLiveCtes(sql`EXISTS (SELECT 1 FROM msg)`)}
  SELECT (SELECT count(*)::int FROM msg) AS written, ${sql.raw(PRIOR_COLUMNS)},
    (SELECT json_agg(json_build_object('bucket', bucket, 'count', count)) FROM recipient) AS recipient,
    (SELECT paid FROM paid) AS paid, ${sql.raw(RELAXED_COMMIT)}`;

/**
 * A paid project's whole live write-ahead as one statement, committed on its
 * own without waiting for the disk: INSERT_QUEUED_LIVE_SQL's key, queued
 * message and recipient windows, then the project's minute (the one counter:
 * bucket, windowStart, windowEnd, limit) and the reservation of
 * creditsReserved (ledger.ts, `amount`), each step only once the one before it
 * moved, in the lock order of the transaction it replaces (write-ahead.ts).
 * Anything short of a written, counted and reserved message raises
 * sms_refuse, which rolls the statement back: the caller then runs the
 * transaction, which tells which rule refused (or handles a project without
 * paid credits). A key found taken writes nothing and is not refused.
 */
const WRITE_AHEAD_PAID_SQL = sql`
  WITH ${queuedLiveCtes(sql`EXISTS (SELECT 1 FROM msg) AND (SELECT paid FROM paid)`)}, counted AS (${oneCounterClaim(
    1,
    sql`(SELECT 1 WHERE EXISTS (SELECT 1 FROM msg) AND (SELECT paid FROM paid)
                   AND (SELECT count(*) FROM recipient) = cardinality(CAST(${counters.buckets} AS text[]))) AS go`,
  )}
  ), ${reservationCtes("counted")}
  SELECT o.*, CASE WHEN o.written = 1 AND (o.used IS NULL OR o.reserved = 0)
                   THEN sms_refuse('the live write-ahead did not count and reserve') END AS refused
  FROM (SELECT (SELECT count(*)::int FROM msg) AS written, ${sql.raw(PRIOR_COLUMNS)},
               (SELECT count FROM counted) AS used, (SELECT count(*)::int FROM entry) AS reserved,
               ${sql.raw(RELAXED_COMMIT)}) AS o`;

/**
 * What writeAheadPaid did: found the key taken (nothing written), wrote,
 * counted and reserved (`used`: the minute's new count), or refused (nothing
 * written: the transaction decides).
 */
export type PaidWriteAhead =
  | { written: false; prior: PriorRecord | null }
  | { written: true; used: number }
  | { refused: true };

/**
 * A transaction of its own that commits durably (taking a transaction id
 * gives it a commit record): that record comes after every commit before it
 * in the write-ahead log, and PostgreSQL writes the log in order, so when it
 * is on disk those are too. A live send's write-ahead commits without waiting
 * for the disk (its project's rows are free one disk flush sooner) and is
 * made durable this way before uBill hears of the message.
 */
const FLUSH_SQL = "SELECT pg_current_xact_id()::text AS xid";

/** Makes every transaction committed before the call durable (FLUSH_SQL). */
export async function flushCommitted(sql: Sql): Promise<void> {
  await sql.query(FLUSH_SQL);
}

/** A window counted by the live write-ahead, with its limit. */
type LimitedWindow = CounterWindow & { limit: number };

/**
 * What the live write-ahead's first statement did: found the key taken, or
 * wrote the message, with the recipient's new counts (null: that window
 * refused, the others moved) and whether the project has paid credits.
 */
export type QueuedLiveClaim =
  | { written: false; prior: PriorRecord | null }
  | {
      written: true;
      recipient: Array<number | null>;
      paid: boolean;
    };

/**
 * What the write-ahead statement did: wrote the queued message and claimed
 * the key, or found the key taken. `prior` is the record that was already
 * there; null when another request claimed the key at the same moment (its
 * record was not committed yet when this statement began: look it up).
 */
export type QueuedClaim = { written: true } | { written: false; prior: PriorRecord | null };

/** How a send left `queued`. */
export type Outcome = {
  status: Extract<MessageStatus, "submitted" | "failed" | "unknown">;
  error: MessageError | null;
  providerRef: string | null;
  /** When the first status check is due (submitted only). */
  nextCheckAt: Date | null;
};

/** The named values of recordOutcome's and releaseUnsent's statements. */
type OutcomeValues = {
  status: string;
  errorCode: string | null;
  errorMessage: string | null;
  providerRef: string | null;
  submittedAt: Date | null;
  nextCheckAt: Date | null;
  updatedAt: Date;
  messageId: string;
  createdAt: Date;
  responseBody: string;
  idempotencyId: string;
};
const o = params<OutcomeValues>();

/**
 * One queued message by its key, (id, created_at), with created_at's month as constants (`bound`): PostgreSQL
 * plans the statement over that month's partition alone and keeps the plan, and finds the row by its primary
 * key. `status::text` keeps the status out of the index choice: compared as the enum, a generic plan made
 * while the table was small or unanalysed walked `(status, created_at)` through every queued message, and every
 * dead index entry of one, for each live send's record
 * (bench/log/2026-11-27.md#a-live-sends-record-by-its-key-2026-11-27).
 */
const queuedMessage = (bound: string) =>
  sql`id = ${o.messageId} AND created_at = CAST(${o.createdAt} AS timestamptz) AND ${sql.raw(bound)} AND status::text = 'queued'`;

/**
 * recordOutcome's statement for a message created in `createdAt`'s month. Its transaction commits without
 * waiting for the disk: the send makes it durable (flushCommitted, shared by the sends waiting at the same
 * moment) after giving back its live slot, before it answers.
 */
export const recordOutcomeSql = statementInMonth(
  (bound) => sql`
  WITH moved AS (
    UPDATE messages
    SET status = CAST(${o.status} AS "MessageStatus"), error_code = CAST(${o.errorCode} AS text),
        error_message = CAST(${o.errorMessage} AS text), provider_ref = CAST(${o.providerRef} AS text),
        submitted_at = CAST(${o.submittedAt} AS timestamptz), next_check_at = CAST(${o.nextCheckAt} AS timestamptz),
        updated_at = CAST(${o.updatedAt} AS timestamptz)
    WHERE ${queuedMessage(bound)}
    RETURNING id, status, error_code, updated_at, created_at, ${sql.raw(notifyChanged("id"))} AS notified
  ), answered AS (
    UPDATE idempotency_records SET response_body = CAST(${o.responseBody} AS jsonb)
    WHERE id = ${o.idempotencyId} AND EXISTS (SELECT 1 FROM moved)
    RETURNING id
  ), event AS (
    INSERT INTO message_events (message_id, status, error_code, created_at, message_created_at)
    SELECT id, status, error_code, updated_at, created_at FROM moved
  )
  SELECT count(*)::int AS moved, ${sql.raw(RELAXED_COMMIT)} FROM moved`,
);

/**
 * INSERT_ANSWERED_SQL runs unnamed (planned with its parameters) for its first
 * executions in this process, then prepared, and a connection keeps the
 * generic plan it makes. That plan finds the records by `id = ANY(...)`: on
 * idempotency_records of up to 400 rows (19 pages) a seq scan, from 800 rows
 * (37 pages) the primary key (send-store.contract, "the test sends' batch
 * statements' plans"). Every execution answers at least one claim, whose
 * record stays 24 hours: after 5 000 executions the table holds at least
 * 5 000 rows. Planned on every execution, the statement cost a sixth of
 * PostgreSQL's CPU per test send (bench/log/2026-11-27.md#planned-once-per-connection-2026-11-27).
 */
export const ANSWERED_UNNAMED_EXECUTIONS = 5_000;

/** Answered test sends' values, column by column (answeredColumns), and their answers as one JSON array. */
export type AnsweredArrays = {
  messageIds: string[];
  projectIds: string[];
  apiKeyIds: string[];
  modes: string[];
  recipientsMasked: string[];
  recipientCiphertexts: Uint8Array[];
  textCiphertexts: Uint8Array[];
  templates: string[];
  locales: string[];
  senders: string[];
  segmentCounts: number[];
  encodings: string[];
  providers: string[];
  createdAts: Date[];
  statuses: string[];
  errorCodes: Array<string | null>;
  errorMessages: Array<string | null>;
  providerRefs: Array<string | null>;
  submittedAts: Array<Date | null>;
  nextCheckAts: Array<Date | null>;
  updatedAts: Date[];
  idempotencyIds: string[];
  /** The answers as one JSON array, paired with the rows by position. */
  answers: string;
};
/** What a claiming statement adds: each send's key, fingerprint and its record's expiry. */
export type AnsweredClaimArrays = { keys: string[]; fingerprints: string[]; expiries: Date[] };
const b = params<AnsweredArrays & AnsweredClaimArrays>();

/**
 * Answered test sends as a statement's `batch` and `input` (one row per send, numbered `n`, with its answer
 * `response_body`): AnsweredArrays, and with "claiming", AnsweredClaimArrays as the columns `key`,
 * `fingerprint` and `expires_at` (keyClaimCtes' input).
 */
function answeredInputCtes<E extends AnyStatement>(claim: { arrays: E; unnested: string; columns: string }) {
  return sql`batch AS MATERIALIZED (
    -- The arrays as one row's columns, not constants: the planner sizes the batch alike with and without its
    -- parameters, so a connection keeps the generic plan instead of planning every execution again.
    SELECT CAST(${b.messageIds} AS text[]) message_ids, CAST(${b.projectIds} AS text[]) project_ids,
      CAST(${b.apiKeyIds} AS text[]) api_key_ids, CAST(${b.modes} AS text[]) modes,
      CAST(${b.recipientsMasked} AS text[]) recipients_masked, CAST(${b.recipientCiphertexts} AS bytea[]) recipient_ciphertexts,
      CAST(${b.textCiphertexts} AS bytea[]) text_ciphertexts, CAST(${b.templates} AS text[]) templates,
      CAST(${b.locales} AS text[]) locales, CAST(${b.senders} AS text[]) senders,
      CAST(${b.segmentCounts} AS integer[]) segment_counts, CAST(${b.encodings} AS text[]) encodings,
      CAST(${b.providers} AS text[]) providers, CAST(${b.createdAts} AS timestamptz[]) created_ats,
      CAST(${b.statuses} AS text[]) statuses, CAST(${b.errorCodes} AS text[]) error_codes,
      CAST(${b.errorMessages} AS text[]) error_messages, CAST(${b.providerRefs} AS text[]) provider_refs,
      CAST(${b.submittedAts} AS timestamptz[]) submitted_ats, CAST(${b.nextCheckAts} AS timestamptz[]) next_check_ats,
      CAST(${b.updatedAts} AS timestamptz[]) updated_ats, CAST(${b.answers} AS jsonb) answers,
      CAST(${b.idempotencyIds} AS text[]) idempotency_ids${claim.arrays}
  ), input AS (
    SELECT i.*, a.response_body
    FROM batch
    CROSS JOIN LATERAL unnest(message_ids, project_ids, api_key_ids, modes, recipients_masked, recipient_ciphertexts,
                              text_ciphertexts, templates, locales, senders, segment_counts, encodings, providers,
                              created_ats, statuses, error_codes, error_messages, provider_refs, submitted_ats,
                              next_check_ats, updated_ats, idempotency_ids${sql.raw(claim.unnested)})
      WITH ORDINALITY AS i(message_id, project_id, api_key_id, mode, recipient_masked, recipient_ciphertext,
           text_ciphertext, template, locale, sender, segments, encoding, provider, created_at, status, error_code,
           error_message, provider_ref, submitted_at, next_check_at, updated_at,
           idempotency_id${sql.raw(claim.columns)}, n)
    JOIN LATERAL jsonb_array_elements(answers) WITH ORDINALITY AS a(response_body, n) ON a.n = i.n
  )`;
}

/** answeredInputCtes for the answers alone (INSERT_ANSWERED_SQL). */
const ANSWERED_INPUT = answeredInputCtes({ arrays: sql``, unnested: "", columns: "" });

/** answeredInputCtes with the keys' claims (answered-sends.ts CLAIM_ANSWERED_SQL: keyClaimCtes' input). */
export const ANSWERED_CLAIM_INPUT = answeredInputCtes({
  arrays: sql`, CAST(${b.keys} AS text[]) keys, CAST(${b.fingerprints} AS text[]) fingerprints,
      CAST(${b.expiries} AS timestamptz[]) expiries`,
  unnested: ", keys, fingerprints, expiries",
  columns: ", key, fingerprint, expires_at",
});

/** The messages of `input`'s rows whose record id the CTE `records` returned, each with both timeline events. */
export function answeredMessageCtes(records: "answered" | "idem") {
  return sql`msg AS (
    INSERT INTO messages (id, project_id, api_key_id, mode, recipient_masked, recipient_ciphertext, text_ciphertext,
                          template, locale, sender, segments, encoding, status, provider, credits_reserved,
                          error_code, error_message, provider_ref, submitted_at, next_check_at,
                          created_at, updated_at)
    SELECT i.message_id, i.project_id, i.api_key_id, CAST(i.mode AS "KeyMode"), i.recipient_masked,
           i.recipient_ciphertext, i.text_ciphertext, i.template, i.locale, i.sender, i.segments, i.encoding,
           CAST(i.status AS "MessageStatus"), i.provider, 0,
           i.error_code, i.error_message, i.provider_ref, i.submitted_at, i.next_check_at, i.created_at, i.updated_at
    FROM input i JOIN ${sql.raw(records)} a ON a.id = i.idempotency_id
    RETURNING id, status, error_code, created_at, updated_at
  ), event AS (
    INSERT INTO message_events (message_id, status, error_code, created_at, message_created_at)
    SELECT id, CAST('queued' AS "MessageStatus"), NULL, created_at, created_at FROM msg
    UNION ALL
    SELECT id, status, error_code, updated_at, created_at FROM msg
  )`;
}

/**
 * Test sends' messages, written once and answered: each row's idempotency
 * record gets its answer (if it still waits for one), and only then is its
 * message written, with both timeline events. One statement for any number
 * of sends (the batcher's group commit); the ids written come back. The
 * enums travel as text[] and are cast per row: PGlite cannot serialise an
 * array of an enum type it does not know. The answers travel as one JSON
 * array (`answers`), paired with the rows by position: as a jsonb[] each answer's
 * quotes were escaped into the array literal, by pg, for every send.
 */
export const INSERT_ANSWERED_SQL = sql`
  WITH ${ANSWERED_INPUT}, answered AS (
    -- No join in the UPDATE: its rows come from the primary key's probes for the records' ids. Joined with the
    -- input, a plan made while the table was small scanned all of idempotency_records on every batch. Even without
    -- the join, a generic plan scans a table of a few hundred rows: see ANSWERED_UNNAMED_EXECUTIONS.
    UPDATE idempotency_records r
    SET response_body = (SELECT i.response_body FROM input i WHERE i.idempotency_id = r.id LIMIT 1)
    WHERE r.id = ANY(CAST((SELECT idempotency_ids FROM batch) AS text[])) AND r.response_body IS NULL
    RETURNING r.id
  ), ${answeredMessageCtes("answered")}
  SELECT id FROM msg`;
unnamedForFirst(INSERT_ANSWERED_SQL.text, ANSWERED_UNNAMED_EXECUTIONS);

/** A queued message's named values (QueuedValues). */
export const queuedValues = (m: QueuedMessage): QueuedValues => ({
  idempotencyId: m.idempotencyId,
  projectId: m.scope.projectId,
  mode: m.scope.mode,
  key: m.scope.key,
  fingerprint: m.fingerprint,
  messageId: m.messageId,
  expiresAt: m.expiresAt,
  now: m.now,
  apiKeyId: m.apiKeyId,
  recipientMasked: m.recipientMasked,
  recipientCiphertext: m.recipientCiphertext,
  textCiphertext: m.textCiphertext,
  template: m.template,
  locale: m.locale,
  sender: m.sender,
  segments: m.segments,
  encoding: m.encoding,
  provider: m.provider,
  creditsReserved: m.creditsReserved,
});

/** How the send ended (OutcomeValues' status … updatedAt). */
const outcomeValues = (outcome: Outcome, now: Date) => ({
  status: outcome.status,
  errorCode: outcome.error?.errorCode ?? null,
  errorMessage: outcome.error?.errorMessage ?? null,
  providerRef: outcome.providerRef,
  submittedAt: outcome.status === "submitted" ? now : null,
  nextCheckAt: outcome.nextCheckAt,
  updatedAt: now,
});

/** One test send's message, as insertAnswered writes it. */
export type AnsweredMessage = {
  message: QueuedMessage;
  outcome: Outcome;
  response: MessageResource;
  now: Date;
};

/** Answered sends' values column by column (this runs for every test send): AnsweredArrays. */
export function answeredColumns(sends: ReadonlyArray<AnsweredMessage>): AnsweredArrays {
  const n = sends.length;
  const column = <T>() => new Array<T>(n);
  const c: Omit<AnsweredArrays, "answers"> = {
    messageIds: column(),
    projectIds: column(),
    apiKeyIds: column(),
    modes: column(),
    recipientsMasked: column(),
    recipientCiphertexts: column(),
    textCiphertexts: column(),
    templates: column(),
    locales: column(),
    senders: column(),
    segmentCounts: column(),
    encodings: column(),
    providers: column(),
    createdAts: column(),
    statuses: column(),
    errorCodes: column(),
    errorMessages: column(),
    providerRefs: column(),
    submittedAts: column(),
    nextCheckAts: column(),
    updatedAts: column(),
    idempotencyIds: column(),
  };
  for (let r = 0; r < n; r++) {
    const { message: m, outcome, now } = sends[r] as AnsweredMessage;
    const ended = outcomeValues(outcome, now);
    c.messageIds[r] = m.messageId;
    c.projectIds[r] = m.scope.projectId;
    c.apiKeyIds[r] = m.apiKeyId;
    c.modes[r] = m.scope.mode;
    c.recipientsMasked[r] = m.recipientMasked;
    c.recipientCiphertexts[r] = m.recipientCiphertext;
    c.textCiphertexts[r] = m.textCiphertext;
    c.templates[r] = m.template;
    c.locales[r] = m.locale;
    c.senders[r] = m.sender;
    c.segmentCounts[r] = m.segments;
    c.encodings[r] = m.encoding;
    c.providers[r] = m.provider;
    c.createdAts[r] = m.now;
    c.statuses[r] = ended.status;
    c.errorCodes[r] = ended.errorCode;
    c.errorMessages[r] = ended.errorMessage;
    c.providerRefs[r] = ended.providerRef;
    c.submittedAts[r] = ended.submittedAt;
    c.nextCheckAts[r] = ended.nextCheckAt;
    c.updatedAts[r] = ended.updatedAt;
    c.idempotencyIds[r] = m.idempotencyId;
  }
  return { ...c, answers: JSON.stringify(sends.map((send) => send.response)) };
}

/** Writes test sends' messages (one statement); true for each one written. */
export async function insertAnsweredMany(sql: Sql, sends: readonly AnsweredMessage[]): Promise<boolean[]> {
  const rows = await sql.query<{ id: string }>(
    INSERT_ANSWERED_SQL.text,
    INSERT_ANSWERED_SQL.bind(answeredColumns(sends)),
  );
  const written = new Set(rows.map((row) => row.id));
  return sends.map((send) => written.has(send.message.messageId));
}

/** releaseUnsent's statement for a message created in `createdAt`'s month. */
export const releaseSql = statementInMonth(
  (bound) => sql`
  WITH gone AS (
    DELETE FROM messages WHERE ${queuedMessage(bound)} RETURNING id
  ), released AS (
    DELETE FROM idempotency_records WHERE id = ${o.idempotencyId} AND EXISTS (SELECT 1 FROM gone) RETURNING id
  )
  SELECT count(*)::int AS released FROM gone`,
);

const READ_SQL = `SELECT ${RESOURCE_COLUMNS} FROM messages WHERE id = $1`;
/**
 * `project_id || ''` keeps the planner on each month's primary key (id first): `messages` is partitioned by
 * month and its key is (id, created_at), so on a month without statistics yet (a new month, a fresh
 * database) the planner would otherwise walk the project's whole month through (project_id, created_at,
 * id): 3 ms instead of 0.05 ms per read
 * (bench/log/2026-11-25.md#issue-26s-targets-after-the-changes-2026-11-25-1804-and-1811-utc).
 */
export const PROJECT_MATCHES = "project_id || '' = $2";
const READ_IN_PROJECT_SQL = `SELECT ${RESOURCE_COLUMNS} FROM messages WHERE id = $1 AND ${PROJECT_MATCHES}`;

/** The two reads by id, first in the months of the id's time (near-id-time.ts). */
const readNear = readerNearIdTime(READ_SQL);
const readInProjectNear = readerNearIdTime(READ_IN_PROJECT_SQL);

/** Many reads by id at once, each row with its project (readInProjectMany). */
const READ_MANY_SQL = `SELECT ${RESOURCE_COLUMNS}, project_id FROM messages WHERE id = ANY(CAST($1 AS text[]))`;
const readManyNear = readerManyNearIdTime(READ_MANY_SQL);

/**
 * Reads by id and project that arrived together (the top-level store's batcher): one statement for them all,
 * in the months of their ids' times, instead of one each; each answer is its own project's row or null, as
 * readInProject's. An id the bounded statement did not find is read alone over every month (the second read
 * of readInProjectNear), so a row far from its id's time is still found.
 */
export async function readInProjectMany(
  sql: Sql,
  reads: ReadonlyArray<{ messageId: string; projectId: string }>,
): Promise<Array<MessageState | null>> {
  const { rows, bounded } = await readManyNear<ResourceRow & { project_id: string }>(
    sql,
    reads.map((read) => read.messageId),
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  return Promise.all(
    reads.map(async ({ messageId, projectId }) => {
      const row = byId.get(messageId);
      if (row) return row.project_id === projectId ? fromRow(row) : null;
      // Missed in the months of its id's time: over every month, as readInProjectNear's second read.
      if (!bounded.has(messageId)) return null;
      const [alone] = await sql.query<ResourceRow>(READ_IN_PROJECT_SQL, [messageId, projectId]);
      return alone ? fromRow(alone) : null;
    }),
  );
}

const COUNT_IN_PROJECT_SQL = `SELECT count(*)::int AS count FROM messages WHERE project_id = $1`;

const COUNT_BY_MODE_STATUS_SQL = `
  SELECT mode::text AS mode, status::text AS status,
         count(*) FILTER (WHERE created_at >= CAST($3 AS timestamptz))::int AS recent,
         count(*)::int AS total
  FROM messages WHERE project_id = $1 AND created_at >= CAST($2 AS timestamptz)
  GROUP BY mode, status ORDER BY mode, status`;

export function messageStore(
  sql: Sql,
  options: {
    /** insertAnswered through a batcher (the top-level store's; a transaction's writes its own). */
    insertAnswered?: (send: AnsweredMessage) => Promise<boolean>;
    /** flushCommitted through a batcher: callers waiting at once share one flush. */
    flushCommitted?: () => Promise<void>;
    /** readInProject through a batcher: reads arriving together share one statement (readInProjectMany). */
    readInProject?: (read: { messageId: string; projectId: string }) => Promise<MessageState | null>;
  } = {},
) {
  return {
    /**
     * A live send's first write-ahead statement (INSERT_QUEUED_LIVE_SQL):
     * the key's claim and the queued message, then the recipient's windows
     * (once the key is claimed), and the project's paid flag. Commits
     * asynchronously with its transaction (flushCommitted makes it durable).
     * Inside a transaction only: the caller rolls it back on any refusal.
     */
    async insertQueuedLive(
      m: QueuedMessage,
      counters: { recipient: Array<LimitedWindow & { cost: number }> },
    ): Promise<QueuedLiveClaim> {
      const rows = await sql.query<
        PriorColumns & {
          written: number;
          recipient: Array<{ bucket: string; count: number }> | null;
          paid: boolean | null;
        }
      >(
        INSERT_QUEUED_LIVE_SQL.text,
        INSERT_QUEUED_LIVE_SQL.bind({ ...queuedValues(m), ...consumeManyValues(counters.recipient) }),
      );
      const row = rows[0];
      if (Number(row?.written ?? 0) !== 1) return { written: false, prior: priorOf(row) };
      const recipient = consumedOf(counters.recipient, row?.recipient ?? []);
      return { written: true, recipient, paid: row?.paid === true };
    },

    /**
     * A paid project's live write-ahead in one statement (WRITE_AHEAD_PAID_SQL), outside any
     * transaction: the key, the queued message, the recipient's windows, the project's minute and
     * the reservation, committed without waiting for the disk (flushCommitted makes it durable), or
     * nothing at all (`refused`: any window full, credits short, or no paid credits).
     */
    async writeAheadPaid(
      m: QueuedMessage,
      counters: { recipient: Array<LimitedWindow & { cost: number }>; minute: LimitedWindow },
    ): Promise<PaidWriteAhead> {
      const { minute } = counters;
      const { entryId, day } = reservationEntry(m.now);
      let rows: Array<PriorColumns & { written: number; used: number | null }>;
      try {
        rows = await sql.query(
          WRITE_AHEAD_PAID_SQL.text,
          WRITE_AHEAD_PAID_SQL.bind({
            ...queuedValues(m),
            ...consumeManyValues(counters.recipient),
            ...oneCounterValues(minute),
            amount: m.creditsReserved,
            entryId,
            day,
          }),
        );
      } catch (error) {
        if (isStatementRefusal(error)) return { refused: true };
        throw error;
      }
      const row = rows[0];
      if (Number(row?.written ?? 0) !== 1) return { written: false, prior: priorOf(row) };
      return { written: true, used: Number(row?.used) };
    },

    /** Every transaction committed before this call is on disk when it returns (FLUSH_SQL). */
    async flushCommitted(): Promise<void> {
      await (options.flushCommitted ? options.flushCommitted() : flushCommitted(sql));
    },

    /**
     * Moves the message out of `queued` and stores the answer on its
     * idempotency record, together. False when the message is no longer
     * queued (the recovery sweep already made it `unknown`).
     */
    async recordOutcome(record: {
      messageId: string;
      /** The message's created_at (its queued.now): with the id, its key. */
      createdAt: Date;
      idempotencyId: string;
      outcome: Outcome;
      response: MessageResource;
      now: Date;
    }): Promise<boolean> {
      const { outcome, now } = record;
      const statement = recordOutcomeSql(record.createdAt);
      const rows = await sql.query<{ moved: number }>(
        statement.text,
        statement.bind({
          ...outcomeValues(outcome, now),
          messageId: record.messageId,
          createdAt: record.createdAt,
          responseBody: JSON.stringify(record.response),
          idempotencyId: record.idempotencyId,
        }),
      );
      return Number(rows[0]?.moved ?? 0) > 0;
    },

    /**
     * A test send's second and last statement, durable: the message as the
     * simulator left it (its `queued` and its new status in the timeline),
     * and the answer on the key's claim, together. Written only while the
     * claim is unanswered and still there; 0 rows: a duplicate that waited in
     * vain gave the claim up (idempotency.releaseAbandoned).
     */
    async insertAnswered(
      m: QueuedMessage,
      record: { outcome: Outcome; response: MessageResource; now: Date },
    ): Promise<boolean> {
      const send = { message: m, ...record };
      if (options.insertAnswered) return options.insertAnswered(send);
      const [written] = await insertAnsweredMany(sql, [send]);
      return written === true;
    },

    /**
     * The provider was not reached: the queued message and its idempotency
     * record go, so a retry with the same key is a fresh attempt. False when
     * the message is no longer queued (the recovery sweep's answer stands).
     */
    async releaseUnsent(ids: {
      messageId: string;
      createdAt: Date;
      idempotencyId: string;
    }): Promise<boolean> {
      const statement = releaseSql(ids.createdAt);
      const rows = await sql.query<{ released: number }>(statement.text, statement.bind(ids));
      return Number(rows[0]?.released ?? 0) > 0;
    },

    async read(messageId: string): Promise<MessageState | null> {
      const [row] = await readNear<ResourceRow>(sql, messageId, [messageId]);
      return row ? fromRow(row) : null;
    },

    /**
     * One indexed lookup by id and project, in the month of the id's time (near-id-time.ts):
     * another project's message is absent.
     */
    async readInProject(messageId: string, projectId: string): Promise<MessageState | null> {
      if (options.readInProject) return options.readInProject({ messageId, projectId });
      const [row] = await readInProjectNear<ResourceRow>(sql, messageId, [messageId, projectId]);
      return row ? fromRow(row) : null;
    },

    async countInProject(projectId: string): Promise<number> {
      const [row] = await sql.query<{ count: number }>(COUNT_IN_PROJECT_SQL, [projectId]);
      return Number(row?.count ?? 0);
    },

    /** Per mode and status: messages created since `since`, and of those since `recentSince`. */
    async countByModeAndStatus(projectId: string, since: Date, recentSince: Date) {
      const rows = await sql.query<{
        mode: "test" | "live";
        status: MessageStatus;
        recent: number;
        total: number;
      }>(COUNT_BY_MODE_STATUS_SQL, [projectId, since, recentSince]);
      return rows.map((row) => ({
        mode: row.mode,
        status: row.status,
        recent: Number(row.recent),
        total: Number(row.total),
      }));
    },
  };
}

/** A message's own statements: its send and its reads (the sweeps over many are in message-sweeps.ts). */
export type MessageSendStore = ReturnType<typeof messageStore>;
