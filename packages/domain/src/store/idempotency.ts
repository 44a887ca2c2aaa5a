// idempotency_records: the answer a key gets again for 24 hours (spec 4.2).
// A live send's record is written together with its message
// (store/messages.ts: insertQueuedLive, recordOutcome, releaseUnsent); a test
// send claims its key here (claimCounted), and messages.insertAnswered writes
// the message and the answer together.
import { params, type Sql, sql } from "@sms/db";
import type { IdempotencyScope } from "../model/idempotency.ts";
import type { MessageResource } from "../model/message.ts";
import {
  oneCounterClaim,
  oneCounterValues,
  type RecipientCount,
  type RecipientTally,
  recipientTallyCtes,
  TALLY_COLUMNS,
  TALLY_JOIN,
  type TallyColumns,
  talliesOf,
  tallyValues,
} from "./limits.ts";
import { RELAXED_COMMIT } from "./relaxed-commit.ts";
import { claimByCounterWindow } from "./window-groups.ts";

/**
 * A key's record: the request's fingerprint, its answer once there is one
 * (null: still in flight), when it expires, and the message it claimed.
 */
export type PriorRecord = {
  fingerprint: string;
  responseBody: MessageResource | null;
  expiresAt: Date;
  messageId: string;
};

/**
 * The key's claim, written once, for a statement's WITH, over the rows of its
 * CTE `input` (`n` numbering them, `idempotency_id`, `project_id`, `mode` as
 * text, `key`, `fingerprint`, `message_id`, `expires_at`, `created_at`, and
 * with `answered`, `response_body`): `prior` holds each row's unexpired record
 * already there (one probe of the key's unique index per row, a LATERAL with
 * LIMIT: as a plain join, a plan made while the table was small hashed all of
 * it on every batch, and the LIMIT keeps the probe in the plan a connection
 * keeps from an empty table too: send-store.contract's generic plans). `idem`
 * is the new record of every other row (an expired one is overwritten),
 * without an answer unless `answered`. A concurrent claim of the same key
 * waits for the first one's commit, then finds it (ON CONFLICT): not claimed.
 * The keys of one statement are distinct (one statement cannot claim a key
 * twice: window-groups.ts).
 */
export function keyClaimCtes(answer: "unanswered" | "answered") {
  const responseBody = sql.raw(answer === "answered" ? "i.response_body" : "NULL");
  return sql`prior AS (
    SELECT i.n, r.fingerprint, r.response_body, r.expires_at, r.message_id
    FROM input i CROSS JOIN LATERAL (
      SELECT r.fingerprint, r.response_body, r.expires_at, r.message_id FROM idempotency_records r
      WHERE r.project_id = i.project_id AND r.mode = CAST(i.mode AS "KeyMode") AND r.key = i.key
        AND r.expires_at > i.created_at
      LIMIT 1
    ) r
  ), idem AS (
    INSERT INTO idempotency_records (id, project_id, mode, key, fingerprint, message_id, response_body, expires_at, created_at)
    SELECT i.idempotency_id, i.project_id, CAST(i.mode AS "KeyMode"), i.key, i.fingerprint, i.message_id, ${responseBody},
           i.expires_at, i.created_at
    FROM input i WHERE NOT EXISTS (SELECT 1 FROM prior p WHERE p.n = i.n)
    ON CONFLICT (project_id, mode, key) DO UPDATE
      SET id = EXCLUDED.id, fingerprint = EXCLUDED.fingerprint, message_id = EXCLUDED.message_id,
          response_body = EXCLUDED.response_body, expires_at = EXCLUDED.expires_at, created_at = EXCLUDED.created_at
      WHERE idempotency_records.expires_at <= EXCLUDED.created_at
    RETURNING id
  )`;
}

/** A claim's named values, for one key (`input` of one row: oneClaimInput). */
export type ClaimValues = {
  idempotencyId: string;
  projectId: string;
  mode: string;
  key: string;
  fingerprint: string;
  messageId: string;
  expiresAt: Date;
  now: Date;
};
const k = params<ClaimValues>();

/** keyClaimCtes' `input` for one key (ClaimValues). */
export const ONE_CLAIM_INPUT = sql`input AS (
    SELECT 1 AS n, CAST(${k.idempotencyId} AS text) AS idempotency_id, CAST(${k.projectId} AS text) AS project_id,
           CAST(${k.mode} AS text) AS mode, CAST(${k.key} AS text) AS key, CAST(${k.fingerprint} AS text) AS fingerprint,
           CAST(${k.messageId} AS text) AS message_id, CAST(${k.expiresAt} AS timestamptz) AS expires_at,
           CAST(${k.now} AS timestamptz) AS created_at
  )`;

/**
 * The claimed keys' count (`claimed.n`), as the source of the counter's one
 * step (limits.ts oneCounterClaim): only what a statement claimed is counted,
 * all of it or none, and a statement that claimed nothing counts nothing.
 */
export const CLAIMED_COUNT = sql`(SELECT count(*)::int AS n FROM idem HAVING count(*) > 0) AS claimed`;

/** What a claiming statement reports of `prior` (see priorOf). */
export const PRIOR_COLUMNS = `EXISTS (SELECT 1 FROM prior) AS has_prior,
    (SELECT fingerprint FROM prior) AS fingerprint,
    (SELECT response_body FROM prior) AS response_body,
    (SELECT expires_at FROM prior) AS expires_at,
    (SELECT message_id FROM prior) AS message_id`;

export type PriorColumns = {
  has_prior: boolean;
  fingerprint: string | null;
  response_body: unknown;
  expires_at: Date | null;
  message_id: string | null;
};

/**
 * The record a claim found; null when another request claimed the key at the
 * same moment (its record was not committed when the statement began: look
 * it up).
 */
export function priorOf(row: PriorColumns | undefined): PriorRecord | null {
  if (!row?.has_prior || row.fingerprint === null || row.expires_at === null || row.message_id === null)
    return null;
  const { fingerprint, response_body, expires_at, message_id } = row;
  return priorRecord({ fingerprint, response_body, expires_at, message_id });
}

/** claimCounted's arrays: one element per key, in the order of the claims (claimArrays). */
type ClaimArrays = {
  idempotencyIds: string[];
  projectIds: string[];
  modes: string[];
  keys: string[];
  fingerprints: string[];
  messageIds: string[];
  expiries: Date[];
  nows: Date[];
};
const a = params<ClaimArrays>();

/**
 * A test send's first statement, for one key or several of one counter window
 * (claimCountedMany): every key claimed (keyClaimCtes, over the arrays), and
 * the counter (bucket, windowStart, windowEnd, limit) moved once by how many
 * were claimed, within its limit. Over the limit, no count moves and `used` is
 * null for all of them. The claimed keys' recipients are tallied too
 * (limits.ts recipientTallyCtes), never refusing. Commits asynchronously:
 * nothing was answered yet, and the durable commit of the answer
 * (messages.insertAnswered) flushes it.
 */
export const CLAIM_COUNTED_MANY_SQL = sql`
  WITH input AS (
    SELECT * FROM unnest(
      CAST(${a.idempotencyIds} AS text[]), CAST(${a.projectIds} AS text[]), CAST(${a.modes} AS text[]),
      CAST(${a.keys} AS text[]), CAST(${a.fingerprints} AS text[]), CAST(${a.messageIds} AS text[]),
      CAST(${a.expiries} AS timestamptz[]), CAST(${a.nows} AS timestamptz[])
    ) WITH ORDINALITY AS i(idempotency_id, project_id, mode, key, fingerprint, message_id, expires_at, created_at, n)
  ), ${keyClaimCtes("unanswered")}, counted AS (${oneCounterClaim(sql`claimed.n`, CLAIMED_COUNT)}
  ), ${recipientTallyCtes(sql`EXISTS (SELECT 1 FROM counted)`)}
  SELECT EXISTS (SELECT 1 FROM idem WHERE idem.id = i.idempotency_id) AS claimed, (SELECT count FROM counted) AS used,
    p.n IS NOT NULL AS has_prior, p.fingerprint, p.response_body, p.expires_at, p.message_id,
    ${TALLY_COLUMNS}, ${sql.raw(RELAXED_COMMIT)}
  FROM input i LEFT JOIN prior p ON p.n = i.n ${TALLY_JOIN}
  ORDER BY i.n`;

/** Deletes the uncounted claims of a batch that went over the limit (each is then tried alone). */
const RELEASE_CLAIMS_SQL = `
  DELETE FROM idempotency_records WHERE id = ANY(CAST($1 AS text[])) AND response_body IS NULL`;

/** A test send's claim and the counter it is counted on (idempotency.claimCounted's arguments). */
export type CountedClaim = {
  claim: {
    idempotencyId: string;
    scope: IdempotencyScope;
    fingerprint: string;
    messageId: string;
    expiresAt: Date;
    now: Date;
  };
  /** The counter window, and the recipient's test counters to tally with it (limits.ts RecipientTally). */
  counter: { bucket: string; start: Date; end: Date; limit: number; tally?: RecipientTally };
};

/**
 * `claimed` false: the key was taken (`prior`, or null: look it up). `used` null: the window is full.
 * `recipient`: the recipient's counts with this send, where a tally was asked for and the send counted.
 */
export type ClaimOutcome =
  | { claimed: true; used: number | null; recipient?: RecipientCount }
  | { claimed: false; prior: PriorRecord | null };

/**
 * Claims many test sends' keys (group commit, store/index.ts): one statement
 * per counter window for distinct keys, so a busy project's counter row is
 * locked once per batch instead of once per send. The outcome of each is what
 * claimCounted alone would have answered: a batch that would pass the limit
 * counts none of its claims, gives them back and tries each alone, so the
 * window is filled exactly to its limit. A key that appears again in the
 * batch is not sent to the database: it gets what a concurrent statement
 * would have seen, the first one's prior record, or, when the first one
 * claimed the key, "taken, look it up" (a prior of null).
 */
export async function claimCountedMany(sql: Sql, items: readonly CountedClaim[]): Promise<ClaimOutcome[]> {
  return claimByCounterWindow(
    items,
    { scopeOf: ({ claim }) => claim.scope, counterOf: ({ counter }) => counter },
    { group: (group) => claimGroup(sql, group), alone: (item) => claimCountedOne(sql, item) },
  );
}

/** The claims' values, column by column (CLAIM_COUNTED_MANY_SQL's arrays). */
function claimArrays(group: readonly CountedClaim[]): ClaimArrays {
  const arrays: ClaimArrays = {
    idempotencyIds: [],
    projectIds: [],
    modes: [],
    keys: [],
    fingerprints: [],
    messageIds: [],
    expiries: [],
    nows: [],
  };
  for (const { claim } of group) {
    arrays.idempotencyIds.push(claim.idempotencyId);
    arrays.projectIds.push(claim.scope.projectId);
    arrays.modes.push(claim.scope.mode);
    arrays.keys.push(claim.scope.key);
    arrays.fingerprints.push(claim.fingerprint);
    arrays.messageIds.push(claim.messageId);
    arrays.expiries.push(claim.expiresAt);
    arrays.nows.push(claim.now);
  }
  return arrays;
}

type ClaimRow = PriorColumns & TallyColumns & { claimed: boolean; used: number | null };

/** The claims of `group` (one counter window, distinct keys) in one statement, and the counter's `used`. */
async function claimRows(
  sql: Sql,
  group: readonly CountedClaim[],
): Promise<{ rows: ClaimRow[]; used: number | null; recipients: Array<RecipientCount | undefined> }> {
  const counter = (group[0] as CountedClaim).counter;
  const tallies = group.map((item) => item.counter.tally);
  const rows = await sql.query<ClaimRow>(
    CLAIM_COUNTED_MANY_SQL.text,
    CLAIM_COUNTED_MANY_SQL.bind({
      ...claimArrays(group),
      ...oneCounterValues(counter),
      ...tallyValues(tallies, counter),
    }),
  );
  const used = rows[0]?.used === null || rows[0]?.used === undefined ? null : Number(rows[0].used);
  return { rows, used, recipients: talliesOf(rows, tallies) };
}

/** A claimed outcome, with its recipient's counts when it has them. */
function claimedWith(used: number | null, recipient: RecipientCount | undefined): ClaimOutcome {
  return recipient ? { claimed: true, used, recipient } : { claimed: true, used };
}

/** One window's distinct claims in one statement; "over_limit" when they did not all fit (their claims given back). */
async function claimGroup(sql: Sql, group: CountedClaim[]): Promise<ClaimOutcome[] | "over_limit"> {
  const { rows, used, recipients } = await claimRows(sql, group);
  const claimed = rows.filter((row) => row.claimed).length;
  if (claimed > 0 && used === null) {
    const ids = group.filter((_, i) => rows[i]?.claimed).map(({ claim }) => claim.idempotencyId);
    await sql.query(RELEASE_CLAIMS_SQL, [ids]);
    return "over_limit";
  }
  // The counter moved by `claimed` to `used`: the claims took its last `claimed` values, in order.
  let rank = 0;
  return rows.map((row, i) => {
    if (!row.claimed) return { claimed: false, prior: priorOf(row) };
    rank++;
    return claimedWith((used as number) - claimed + rank, recipients[i]);
  });
}

/** One claim, one statement (CLAIM_COUNTED_MANY_SQL with one key); over the limit its claim stands. */
async function claimCountedOne(sql: Sql, item: CountedClaim): Promise<ClaimOutcome> {
  const { rows, used, recipients } = await claimRows(sql, [item]);
  const row = rows[0];
  if (!row?.claimed) return { claimed: false, prior: priorOf(row) };
  return claimedWith(used, recipients[0]);
}

/** Gives a claim without a message back (nothing was sent, or it was refused). */
const RELEASE_CLAIM_SQL = `
  WITH gone AS (
    DELETE FROM idempotency_records r
    WHERE r.id = $1 AND r.response_body IS NULL
      AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = r.message_id)
    RETURNING r.id
  )
  SELECT count(*)::int AS released, ${RELAXED_COMMIT} FROM gone`;

/** A key's unanswered claim (of message $4) that never got its message: its request is gone. */
const RELEASE_ABANDONED_SQL = `
  WITH gone AS (
    DELETE FROM idempotency_records r
    WHERE r.project_id = $1 AND r.mode = CAST($2 AS "KeyMode") AND r.key = $3 AND r.message_id = $4
      AND r.response_body IS NULL
      AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = r.message_id)
    RETURNING r.id
  )
  SELECT count(*)::int AS released FROM gone`;

const FIND_SQL = `
  SELECT fingerprint, response_body, expires_at, message_id FROM idempotency_records
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

/**
 * The records of the messages $1, each found by its expiry $2 (its message's creation plus
 * IDEMPOTENCY_TTL_MS) through the expires_at index: message_id has no index of its own (a send never
 * looks a record up by it), and by message_id alone this scanned the whole table for every batch. The
 * unclaimed purge deletes messages 30 days old, whose records expired 29 days before: one it does not find
 * here is the expiry purge's (purgeExpired) in any case.
 */
export const DELETE_FOR_MESSAGES_SQL = `
  WITH gone AS (
    DELETE FROM idempotency_records r
    USING unnest(CAST($1 AS text[]), CAST($2 AS timestamptz[])) AS m(message_id, expires_at)
    WHERE r.expires_at = m.expires_at AND r.message_id = m.message_id
    RETURNING r.id
  )
  SELECT count(*)::int AS deleted FROM gone`;

const COUNT_NOT_UNDER_KEY_SQL = `
  SELECT count(*)::int AS count FROM idempotency_records
  WHERE expires_at > CAST($1 AS timestamptz) AND split_part(fingerprint, ':', 1) <> $2`;

/** A record's row as the send sees it. */
export function priorRecord(row: {
  fingerprint: string;
  response_body: unknown;
  expires_at: Date;
  message_id: string;
}): PriorRecord {
  return {
    fingerprint: row.fingerprint,
    responseBody: parseBody(row.response_body),
    expiresAt: new Date(row.expires_at),
    messageId: row.message_id,
  };
}

export function parseBody(value: unknown): MessageResource | null {
  if (value === null || value === undefined) return null;
  return (typeof value === "string" ? JSON.parse(value) : value) as MessageResource;
}

export function idempotencyStore(
  sql: Sql,
  batched: { claimCounted?: (item: CountedClaim) => Promise<ClaimOutcome> } = {},
) {
  return {
    /** A key's unexpired record as it stands now (after losing a race for it, or while waiting for its answer). */
    async find(scope: IdempotencyScope, now: Date): Promise<PriorRecord | null> {
      const [row] = await sql.query<{
        fingerprint: string;
        response_body: unknown;
        expires_at: Date;
        message_id: string;
      }>(FIND_SQL, [scope.projectId, scope.mode, scope.key, now]);
      return row ? priorRecord(row) : null;
    },

    /**
     * Claims the key for a test send and counts it (CLAIM_COUNTED_MANY_SQL, one key).
     * `claimed` false: the key was taken (`prior`, or null: look it up).
     * `used` null: the minute is full; the claim stands until releaseClaim.
     */
    async claimCounted(
      claim: CountedClaim["claim"],
      counter: CountedClaim["counter"],
    ): Promise<ClaimOutcome> {
      return batched.claimCounted
        ? batched.claimCounted({ claim, counter })
        : claimCountedOne(sql, { claim, counter });
    },

    /** Deletes the claim `idempotencyId` if it has neither an answer nor a message; true when it did. */
    async releaseClaim(idempotencyId: string): Promise<boolean> {
      const [row] = await sql.query<{ released: number }>(RELEASE_CLAIM_SQL, [idempotencyId]);
      return Number(row?.released ?? 0) > 0;
    },

    /**
     * Deletes the key's claim of `messageId` if it has neither an answer nor
     * its message (the request that made it is gone: a duplicate waited for
     * it in vain); true when it did, and the key is free again. A newer claim
     * of the same key (another message id) is left alone.
     */
    async releaseAbandoned(scope: IdempotencyScope, messageId: string): Promise<boolean> {
      const [row] = await sql.query<{ released: number }>(RELEASE_ABANDONED_SQL, [
        scope.projectId,
        scope.mode,
        scope.key,
        messageId,
      ]);
      return Number(row?.released ?? 0) > 0;
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

    /**
     * Deletes the records of these messages, each given with the expiry its record has (its creation
     * plus IDEMPOTENCY_TTL_MS, as answerRecovered finds it): DELETE_FOR_MESSAGES_SQL.
     */
    async deleteForMessages(records: Array<{ messageId: string; expiresAt: Date }>): Promise<number> {
      const [row] = await sql.query<{ deleted: number }>(DELETE_FOR_MESSAGES_SQL, [
        records.map((record) => record.messageId),
        records.map((record) => record.expiresAt.toISOString()),
      ]);
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
