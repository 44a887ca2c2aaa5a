// idempotency_records: the answer a key gets again for 24 hours (spec 4.2).
// A live send's record is written together with its message
// (store/messages.ts: insertQueuedLive, recordOutcome, releaseUnsent); a test
// send claims its key here (claimCounted), and messages.insertAnswered writes
// the message and the answer together.
import type { Sql } from "@sms/db";
import type { IdempotencyScope } from "../model/idempotency.ts";
import type { MessageResource } from "../model/message.ts";
import { consumeStepSql } from "./limits.ts";
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
 * The key's claim, for a statement's WITH: `prior` is an unexpired record
 * already there; `idem` is the new in-flight record (no answer yet), written
 * only when there is none (an expired one is overwritten). Parameters: $1 the
 * record's id, $2 project, $3 mode, $4 key, $5 fingerprint, $6 message id,
 * $7 expiry, $8 now. A concurrent claim of the same key waits for the first
 * one's commit, then finds it (ON CONFLICT).
 */
export const CLAIM_KEY_CTES = `prior AS (
    SELECT fingerprint, response_body, expires_at, message_id FROM idempotency_records
    WHERE project_id = $2 AND mode = CAST($3 AS "KeyMode") AND key = $4 AND expires_at > CAST($8 AS timestamptz)
  ), idem AS (
    INSERT INTO idempotency_records (id, project_id, mode, key, fingerprint, message_id, response_body, expires_at, created_at)
    SELECT CAST($1 AS text), CAST($2 AS text), CAST($3 AS "KeyMode"), CAST($4 AS text), CAST($5 AS text),
           CAST($6 AS text), NULL, CAST($7 AS timestamptz), CAST($8 AS timestamptz)
    WHERE NOT EXISTS (SELECT 1 FROM prior)
    ON CONFLICT (project_id, mode, key) DO UPDATE
      SET id = EXCLUDED.id, fingerprint = EXCLUDED.fingerprint, message_id = EXCLUDED.message_id,
          response_body = NULL, expires_at = EXCLUDED.expires_at, created_at = EXCLUDED.created_at
      WHERE idempotency_records.expires_at <= EXCLUDED.created_at
    RETURNING id
  )`;

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

/**
 * A test send's first statement: claims the key and, only when it did, counts
 * the send against the project's minute ($9 bucket, $10 window start, $11
 * window end, $12 limit). Commits asynchronously: nothing was answered yet,
 * and the durable commit of the answer (messages.insertAnswered) flushes it.
 */
const CLAIM_COUNTED_SQL = `
  WITH ${CLAIM_KEY_CTES}, counted AS (${consumeStepSql(
    { bucket: "$9", start: "$10", cost: "1", end: "$11", limit: "$12" },
    "idem",
  )}
  )
  SELECT (SELECT count(*)::int FROM idem) AS claimed, (SELECT count FROM counted) AS used, ${PRIOR_COLUMNS},
    ${RELAXED_COMMIT}`;

/**
 * CLAIM_COUNTED_SQL for several test sends of one counter window at once
 * (claimCountedMany): every key claimed in one statement, and the counter row
 * moved once by how many were claimed. $1-$8 are arrays (record id, project,
 * mode, key, fingerprint, message id, expiry, now; enums as text[], which
 * PGlite serialises), $9-$12 the one counter. The keys are distinct (the
 * caller sees to it: one statement cannot claim a key twice). Over the limit,
 * no count moves and `used` is null for all of them.
 */
export const CLAIM_COUNTED_MANY_SQL = `
  WITH input AS (
    SELECT * FROM unnest(
      CAST($1 AS text[]), CAST($2 AS text[]), CAST($3 AS text[]), CAST($4 AS text[]),
      CAST($5 AS text[]), CAST($6 AS text[]), CAST($7 AS timestamptz[]), CAST($8 AS timestamptz[])
    ) WITH ORDINALITY AS i(id, project_id, mode, key, fingerprint, message_id, expires_at, now, ord)
  ), prior AS (
    -- One probe of the key's unique index per claim, whatever the table's statistics: as a plain join, a
    -- plan made while the table was small hashed all of it on every batch. LIMIT keeps the subquery a
    -- per-row probe, in the plan a connection keeps from an empty table too (send-store.contract's generic plans).
    SELECT i.ord, r.fingerprint, r.response_body, r.expires_at, r.message_id
    FROM input i CROSS JOIN LATERAL (
      SELECT r.fingerprint, r.response_body, r.expires_at, r.message_id FROM idempotency_records r
      WHERE r.project_id = i.project_id AND r.mode = CAST(i.mode AS "KeyMode") AND r.key = i.key
        AND r.expires_at > i.now
      LIMIT 1
    ) r
  ), idem AS (
    INSERT INTO idempotency_records (id, project_id, mode, key, fingerprint, message_id, response_body, expires_at, created_at)
    SELECT i.id, i.project_id, CAST(i.mode AS "KeyMode"), i.key, i.fingerprint, i.message_id, NULL, i.expires_at, i.now
    FROM input i WHERE NOT EXISTS (SELECT 1 FROM prior p WHERE p.ord = i.ord)
    ON CONFLICT (project_id, mode, key) DO UPDATE
      SET id = EXCLUDED.id, fingerprint = EXCLUDED.fingerprint, message_id = EXCLUDED.message_id,
          response_body = NULL, expires_at = EXCLUDED.expires_at, created_at = EXCLUDED.created_at
      WHERE idempotency_records.expires_at <= EXCLUDED.created_at
    RETURNING id
  ), counted AS (
    INSERT INTO rate_limit_counters (bucket, window_start, count, expires_at)
    SELECT CAST($9 AS text), CAST($10 AS timestamptz), c.n, CAST($11 AS timestamptz)
    FROM (SELECT count(*)::int AS n FROM idem) c
    WHERE c.n > 0 AND c.n <= CAST($12 AS integer)
    ON CONFLICT (bucket, window_start)
    DO UPDATE SET count = rate_limit_counters.count + EXCLUDED.count
    WHERE rate_limit_counters.count + EXCLUDED.count <= CAST($12 AS integer)
    RETURNING count
  )
  SELECT EXISTS (SELECT 1 FROM idem WHERE idem.id = i.id) AS claimed, (SELECT count FROM counted) AS used,
    p.ord IS NOT NULL AS has_prior, p.fingerprint, p.response_body, p.expires_at, p.message_id,
    ${RELAXED_COMMIT}
  FROM input i LEFT JOIN prior p ON p.ord = i.ord
  ORDER BY i.ord`;

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
  counter: { bucket: string; start: Date; end: Date; limit: number };
};

/** `claimed` false: the key was taken (`prior`, or null: look it up). `used` null: the window is full. */
export type ClaimOutcome =
  | { claimed: true; used: number | null }
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

/** A claim's values in the order of both claiming statements' first eight parameters. */
function claimValues(claim: CountedClaim["claim"]): unknown[] {
  const { idempotencyId, scope, fingerprint, messageId, expiresAt, now } = claim;
  return [idempotencyId, scope.projectId, scope.mode, scope.key, fingerprint, messageId, expiresAt, now];
}

/** A counter window's values in the order of both claiming statements' last four parameters. */
function counterValues(counter: CountedClaim["counter"]): unknown[] {
  return [counter.bucket, counter.start, counter.end, counter.limit];
}

/** One window's distinct claims in one statement; "over_limit" when they did not all fit (their claims given back). */
async function claimGroup(sql: Sql, group: CountedClaim[]): Promise<ClaimOutcome[] | "over_limit"> {
  const columns: unknown[][] = Array.from({ length: 8 }, () => []);
  for (const { claim } of group) {
    for (const [i, value] of claimValues(claim).entries()) columns[i]?.push(value);
  }
  const counter = (group[0] as CountedClaim).counter;
  const rows = await sql.query<PriorColumns & { claimed: boolean; used: number | null }>(
    CLAIM_COUNTED_MANY_SQL,
    [...columns, ...counterValues(counter)],
  );
  const claimed = rows.filter((row) => row.claimed).length;
  const used = rows[0]?.used === null || rows[0]?.used === undefined ? null : Number(rows[0].used);
  if (claimed > 0 && used === null) {
    const ids = group.filter((_, i) => rows[i]?.claimed).map(({ claim }) => claim.idempotencyId);
    await sql.query(RELEASE_CLAIMS_SQL, [ids]);
    return "over_limit";
  }
  // The counter moved by `claimed` to `used`: the claims took its last `claimed` values, in order.
  let rank = 0;
  return rows.map((row) => {
    if (!row.claimed) return { claimed: false, prior: priorOf(row) };
    rank++;
    return { claimed: true, used: (used as number) - claimed + rank };
  });
}

/** One claim, one statement (CLAIM_COUNTED_SQL). */
async function claimCountedOne(sql: Sql, { claim, counter }: CountedClaim): Promise<ClaimOutcome> {
  const [row] = await sql.query<PriorColumns & { claimed: number; used: number | null }>(CLAIM_COUNTED_SQL, [
    ...claimValues(claim),
    ...counterValues(counter),
  ]);
  if (Number(row?.claimed ?? 0) !== 1) return { claimed: false, prior: priorOf(row) };
  return { claimed: true, used: row?.used === null || row?.used === undefined ? null : Number(row.used) };
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
     * Claims the key for a test send and counts it (CLAIM_COUNTED_SQL).
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
