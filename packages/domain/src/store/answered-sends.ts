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
import { isStatementRefusal, type Sql, sql } from "@sms/db";
import type { MessageResource } from "../model/message.ts";
import type { PriorColumns, PriorRecord } from "./idempotency.ts";
import { CLAIMED_COUNT, keyClaimCtes, priorOf } from "./idempotency.ts";
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
import {
  ANSWERED_CLAIM_INPUT,
  answeredColumns,
  answeredMessageCtes,
  type Outcome,
  type QueuedMessage,
} from "./messages.ts";
import { claimByCounterWindow } from "./window-groups.ts";

/**
 * Test sends of one counter window, each claimed, counted and written
 * together or not at all: the answered sends' arrays (messages.ts
 * answeredInputCtes, answeredColumns) with their keys, fingerprints and
 * expiries, and the counter (limits.ts oneCounterClaim: bucket, windowStart,
 * windowEnd, limit).
 *
 * `prior`: an unexpired record for the key (nothing is written for it: a
 * replay, a 409 or a wait). Every other key is claimed with its answer
 * already on it (keyClaimCtes, answered); a key that a concurrent
 * statement claimed meanwhile (committed after this statement's snapshot)
 * waits for that commit and is then found by ON CONFLICT: not claimed, and
 * not counted. Only the keys claimed are counted, all of them or none, and
 * only their messages are written, with both timeline events. Over the limit
 * the statement refuses (sms_refuse, SQLSTATE SR001) and nothing of it is
 * kept. Durable: the answer leaves after the commit.
 */
export const CLAIM_ANSWERED_SQL = sql`
  WITH ${ANSWERED_CLAIM_INPUT}, ${keyClaimCtes("answered")}, counted AS (${oneCounterClaim(
    sql`claimed.n`,
    CLAIMED_COUNT,
  )}
  ), ${answeredMessageCtes("idem")}, ${recipientTallyCtes(sql`EXISTS (SELECT 1 FROM counted)`)}
  SELECT EXISTS (SELECT 1 FROM idem WHERE idem.id = i.idempotency_id) AS claimed,
    (SELECT count FROM counted) AS used,
    p.n IS NOT NULL AS has_prior, p.fingerprint, p.response_body, p.expires_at, p.message_id, ${TALLY_COLUMNS},
    CASE WHEN EXISTS (SELECT 1 FROM idem) AND NOT EXISTS (SELECT 1 FROM counted)
         THEN sms_refuse('over the minute''s limit') END AS refused
  FROM input i LEFT JOIN prior p ON p.n = i.n ${TALLY_JOIN}
  ORDER BY i.n`;

/** One test send, answered by the simulator, with the counter window it is counted on. */
export type ClaimedAnswer = {
  message: QueuedMessage;
  outcome: Outcome;
  response: MessageResource;
  /** When the simulator answered (the message's updated_at). */
  now: Date;
  /** The counter window, and the recipient's test counters to tally with it (limits.ts RecipientTally). */
  counter: { bucket: string; start: Date; end: Date; limit: number; tally?: RecipientTally };
};

/**
 * `claimed`: the key claimed, the send counted (`used`: the window's count
 * with it) and its message written, answered. `prior`: the key has a record
 * (null: claimed at the same moment, look it up); nothing written or counted.
 * `used` null: over the limit, nothing written.
 */
export type ClaimAnswerOutcome =
  | { claimed: true; used: number; recipient?: RecipientCount }
  | { claimed: false; used: null }
  | { claimed: false; prior: PriorRecord | null };

type Row = PriorColumns & TallyColumns & { claimed: boolean; used: number | null };

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
  let rows: Row[];
  const counter = (group[0] as ClaimedAnswer).counter;
  const tallies = group.map((send) => send.counter.tally);
  try {
    rows = await sql.query<Row>(
      CLAIM_ANSWERED_SQL.text,
      CLAIM_ANSWERED_SQL.bind({
        ...answeredColumns(group),
        keys: group.map(({ message }) => message.scope.key),
        fingerprints: group.map(({ message }) => message.fingerprint),
        expiries: group.map(({ message }) => message.expiresAt),
        ...oneCounterValues(counter),
        ...tallyValues(tallies, counter),
      }),
    );
  } catch (error) {
    // Over the limit: the statement refused, and nothing of it was kept.
    if (!isStatementRefusal(error)) throw error;
    return "over_limit";
  }
  const claimed = rows.filter((row) => row.claimed).length;
  const used = Number(rows[0]?.used ?? 0);
  // The counter moved by `claimed` to `used`: the claims took its values in order.
  const recipients = talliesOf(rows, tallies);
  let rank = 0;
  return rows.map((row, i) => {
    if (!row.claimed) return { claimed: false, prior: priorOf(row) };
    rank++;
    const recipient = recipients[i];
    return recipient
      ? { claimed: true, used: used - claimed + rank, recipient }
      : { claimed: true, used: used - claimed + rank };
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
