// A test send in one statement (messages.claimAnswered): the simulator
// answers before anything is written (it is pure: no I/O, no state), so the
// key's claim, the minute's count, the message as the simulator left it, its
// timeline and the key's answer are one durable statement instead of two (the
// claim, committed asynchronously, then the answer). The top-level store runs
// it through a batcher (store/index.ts): test sends of one project minute that
// arrive together are one statement and one durable commit. A send whose
// simulator answer is "not reached", and a verification's (whose row is
// written between the claim and the simulator), keep the two statements
// (idempotency.claimCounted, messages.insertAnswered).
import { isStatementRefusal, type Sql } from "@sms/db";
import type { MessageResource } from "../model/message.ts";
import type { PriorColumns, PriorRecord } from "./idempotency.ts";
import { priorOf } from "./idempotency.ts";
import {
  answeredColumns,
  answeredInputCtes,
  answeredMessageCtes,
  type Outcome,
  type QueuedMessage,
} from "./messages.ts";
import { claimByCounterWindow } from "./window-groups.ts";

/**
 * Test sends of one counter window, each claimed, counted and written
 * together or not at all. Arrays $1–$23 as messages.ts's INSERT_ANSWERED_SQL
 * takes them (answeredInputCtes, answeredColumns), $24–$26 the keys,
 * fingerprints and expiries, $27–$30 the counter (bucket, window start, end,
 * limit).
 *
 * `prior`: an unexpired record for the key (nothing is written for it: a
 * replay, a 409 or a wait). Every other key is claimed with its answer
 * already on it (an expired record is overwritten); a key that a concurrent
 * statement claimed meanwhile (committed after this statement's snapshot)
 * waits for that commit and is then found by ON CONFLICT: not claimed, and
 * not counted. Only the keys claimed are counted, all of them or none, and
 * only their messages are written, with both timeline events. Over the limit
 * the statement refuses (sms_refuse, SQLSTATE SR001) and nothing of it is
 * kept. Durable: the answer leaves after the commit.
 */
export const CLAIM_ANSWERED_SQL = `
  WITH ${answeredInputCtes([
    { param: 24, type: "text[]", column: "key" },
    { param: 25, type: "text[]", column: "fingerprint" },
    { param: 26, type: "timestamptz[]", column: "expires_at" },
  ])}, prior AS (
    -- One probe of the key's unique index per send (a LATERAL with LIMIT, as in idempotency.ts's batch claim).
    SELECT i.n, r.fingerprint, r.response_body, r.expires_at, r.message_id
    FROM input i CROSS JOIN LATERAL (
      SELECT r.fingerprint, r.response_body, r.expires_at, r.message_id FROM idempotency_records r
      WHERE r.project_id = i.project_id AND r.mode = CAST(i.mode AS "KeyMode") AND r.key = i.key
        AND r.expires_at > i.created_at
      LIMIT 1
    ) r
  ), idem AS (
    INSERT INTO idempotency_records (id, project_id, mode, key, fingerprint, message_id, response_body, expires_at, created_at)
    SELECT i.idempotency_id, i.project_id, CAST(i.mode AS "KeyMode"), i.key, i.fingerprint, i.id, i.response_body,
           i.expires_at, i.created_at
    FROM input i
    WHERE NOT EXISTS (SELECT 1 FROM prior p WHERE p.n = i.n)
    ON CONFLICT (project_id, mode, key) DO UPDATE
      SET id = EXCLUDED.id, fingerprint = EXCLUDED.fingerprint, message_id = EXCLUDED.message_id,
          response_body = EXCLUDED.response_body, expires_at = EXCLUDED.expires_at, created_at = EXCLUDED.created_at
      WHERE idempotency_records.expires_at <= EXCLUDED.created_at
    RETURNING id
  ), counted AS (
    INSERT INTO rate_limit_counters (bucket, window_start, count, expires_at)
    SELECT CAST($27 AS text), CAST($28 AS timestamptz), c.n, CAST($29 AS timestamptz)
    FROM (SELECT count(*)::int AS n FROM idem) c
    WHERE c.n > 0 AND c.n <= CAST($30 AS integer)
    ON CONFLICT (bucket, window_start)
    DO UPDATE SET count = rate_limit_counters.count + EXCLUDED.count
    WHERE rate_limit_counters.count + EXCLUDED.count <= CAST($30 AS integer)
    RETURNING count
  ), ${answeredMessageCtes("idem")}
  SELECT EXISTS (SELECT 1 FROM idem WHERE idem.id = i.idempotency_id) AS claimed,
    (SELECT count FROM counted) AS used,
    p.n IS NOT NULL AS has_prior, p.fingerprint, p.response_body, p.expires_at, p.message_id,
    CASE WHEN EXISTS (SELECT 1 FROM idem) AND NOT EXISTS (SELECT 1 FROM counted)
         THEN sms_refuse('over the minute''s limit') END AS refused
  FROM input i LEFT JOIN prior p ON p.n = i.n
  ORDER BY i.n`;

/** One test send, answered by the simulator, with the counter window it is counted on. */
export type ClaimedAnswer = {
  message: QueuedMessage;
  outcome: Outcome;
  response: MessageResource;
  /** When the simulator answered (the message's updated_at). */
  now: Date;
  counter: { bucket: string; start: Date; end: Date; limit: number };
};

/**
 * `claimed`: the key claimed, the send counted (`used`: the window's count
 * with it) and its message written, answered. `prior`: the key has a record
 * (null: claimed at the same moment, look it up); nothing written or counted.
 * `used` null: over the limit, nothing written.
 */
export type ClaimAnswerOutcome =
  | { claimed: true; used: number }
  | { claimed: false; used: null }
  | { claimed: false; prior: PriorRecord | null };

type Row = PriorColumns & { claimed: boolean; used: number | null };

/**
 * Claims, counts and writes test sends (one statement per counter window).
 * The outcome of each is what it would have got alone: a window's sends that
 * do not all fit are each tried alone, so the window is filled exactly to its
 * limit. A key that appears again in the batch is not sent: it gets the first
 * one's prior record, or "taken, look it up" when the first one claimed it.
 */
export async function claimAnsweredMany(
  sql: Sql,
  sends: readonly ClaimedAnswer[],
): Promise<ClaimAnswerOutcome[]> {
  return claimByCounterWindow(
    sends,
    { scopeOf: ({ message }) => message.scope, counterOf: ({ counter }) => counter },
    {
      group: (group) => claimGroup(sql, group),
      alone: async (send) => {
        const outcomes = await claimGroup(sql, [send]);
        return outcomes === "over_limit"
          ? { claimed: false, used: null }
          : (outcomes[0] as ClaimAnswerOutcome);
      },
    },
  );
}

/** One window's distinct sends in one statement; "over_limit" when the keys it claimed did not all fit (nothing kept). */
async function claimGroup(sql: Sql, group: ClaimedAnswer[]): Promise<ClaimAnswerOutcome[] | "over_limit"> {
  const columns = answeredColumns(group);
  const answers = JSON.stringify(group.map((send) => send.response));
  const { bucket, start, end, limit } = (group[0] as ClaimedAnswer).counter;
  let rows: Row[];
  try {
    rows = await sql.query<Row>(CLAIM_ANSWERED_SQL, [
      ...columns.slice(0, 21),
      answers,
      columns[21],
      group.map(({ message }) => message.scope.key),
      group.map(({ message }) => message.fingerprint),
      group.map(({ message }) => message.expiresAt),
      bucket,
      start,
      end,
      limit,
    ]);
  } catch (error) {
    // Over the limit: the statement refused, and nothing of it was kept.
    if (!isStatementRefusal(error)) throw error;
    return "over_limit";
  }
  const claimed = rows.filter((row) => row.claimed).length;
  const used = Number(rows[0]?.used ?? 0);
  // The counter moved by `claimed` to `used`: the claims took its values in order.
  let rank = 0;
  return rows.map((row) => {
    if (!row.claimed) return { claimed: false, prior: priorOf(row) };
    rank++;
    return { claimed: true, used: used - claimed + rank };
  });
}

/** Part of the messages family (store/index.ts). */
export function answeredSendStore(
  sql: Sql,
  options: {
    /** claimAnswered through a batcher (the top-level store's; a transaction's writes its own). */
    claimAnswered?: (send: ClaimedAnswer) => Promise<ClaimAnswerOutcome>;
  } = {},
) {
  return {
    /**
     * A test send whose simulator answer is known, in one durable statement
     * (CLAIM_ANSWERED_SQL): the key's claim, the minute's count, the message
     * with its timeline and the key's answer, or nothing.
     */
    async claimAnswered(send: ClaimedAnswer): Promise<ClaimAnswerOutcome> {
      if (options.claimAnswered) return options.claimAnswered(send);
      const [outcome] = await claimAnsweredMany(sql, [send]);
      return outcome as ClaimAnswerOutcome;
    },
  };
}

export type AnsweredSendStore = ReturnType<typeof answeredSendStore>;
