// The store: the only place in the domain that speaks SQL. One file per
// table family, each a set of named statements over the `Sql` port; the use
// cases above see these methods and nothing of the database.
//
//   const store = createStore(db);
//   await store.messages.read(id);                     // one statement
//   await store.transaction(async (tx) => {            // several, atomically
//     await tx.ledger.reserve(…);
//     await tx.audit.write(…);
//   });
import { type Database, isDatabaseUnavailable, type Sql, type TransactionSql } from "@sms/db";
import type { MessageState } from "../model/message.ts";
import { accountStore } from "./accounts.ts";
import {
  type AnsweredSendStore,
  answeredSendStore,
  type ClaimAnswerOutcome,
  type ClaimedAnswer,
  claimAnsweredMany,
} from "./answered-sends.ts";
import { auditStore } from "./audit.ts";
import { type BatchOptions, batcher } from "./batch.ts";
import { claimStore } from "./claims.ts";
import { databaseTimeStore } from "./database-time.ts";
import { type ClaimOutcome, type CountedClaim, claimCountedMany, idempotencyStore } from "./idempotency.ts";
import { keyStore } from "./keys.ts";
import { ledgerStore } from "./ledger.ts";
import { limitStore } from "./limits.ts";
import { mcpSessionStore } from "./mcp-sessions.ts";
import { messageLogStore } from "./message-log.ts";
import { type MessageSweepStore, messageSweepStore } from "./message-sweeps.ts";
import {
  type AnsweredMessage,
  flushCommitted,
  insertAnsweredMany,
  type MessageSendStore,
  messageStore,
  readInProjectMany,
} from "./messages.ts";
import { partitionStore } from "./partitions.ts";
import { projectStore } from "./projects.ts";
import { type ReplicaReads, readYourWrites } from "./reads.ts";
import { requestLogStore } from "./request-log.ts";
import { senderRequestStore } from "./sender-requests.ts";
import { sessionStore } from "./sessions.ts";
import { verificationStore } from "./verifications.ts";

// The one thing of the database the use cases need to know: that it may not answer for a while.
export { isDatabaseUnavailable } from "@sms/db";
export type { AccountStore } from "./accounts.ts";
export type { AnsweredSendStore, ClaimAnswerOutcome, ClaimedAnswer } from "./answered-sends.ts";
export type { AuditEntry, AuditEntryInput, AuditStore } from "./audit.ts";
export { CHANGES_CHANNEL, type ResourceChanges, resourceChanges } from "./changes.ts";
export type { ClaimStore, ClaimTokenRecord, ClaimTokenView } from "./claims.ts";
export type { DatabaseTimeStore } from "./database-time.ts";
export type { IdempotencyStore, PriorRecord } from "./idempotency.ts";
export type { KeyLookup, KeyRecord, KeyStore } from "./keys.ts";
export type { Balance, LedgerEntry, LedgerStore } from "./ledger.ts";
export type { CounterWindow, LimitStore, RecipientCount, RecipientTally } from "./limits.ts";
export type { McpSessionStore } from "./mcp-sessions.ts";
export type {
  Cursor,
  MessageDetail,
  MessageEvent,
  MessageLogEntry,
  MessageLogFilter,
  MessageLogStore,
  UsageRow,
} from "./message-log.ts";
export type { DueMessage, MessageSweepStore } from "./message-sweeps.ts";
export type { MessageSendStore, Outcome, QueuedClaim, QueuedMessage } from "./messages.ts";
export type { MonthPartition, PartitionedTable, PartitionStore } from "./partitions.ts";
export type { AccountProjectRow, FoundProject, ProjectRecord, ProjectStore } from "./projects.ts";
export type { ReplicaReads } from "./reads.ts";
export type { RequestLogEntry, RequestLogFilter, RequestLogStore, RequestRecord } from "./request-log.ts";
export type { SenderRequestRecord, SenderRequestStatus, SenderRequestStore } from "./sender-requests.ts";
export type { SessionRecord, SessionStore } from "./sessions.ts";
export type {
  LockedVerification,
  NewVerification,
  VerificationDay,
  VerificationStore,
} from "./verifications.ts";

function families(
  sql: Sql | TransactionSql,
  batched: {
    insertAnswered?: (send: AnsweredMessage) => Promise<boolean>;
    claimCounted?: (item: CountedClaim) => Promise<ClaimOutcome>;
    claimAnswered?: (send: ClaimedAnswer) => Promise<ClaimAnswerOutcome>;
    flushCommitted?: () => Promise<void>;
    readInProject?: (read: { messageId: string; projectId: string }) => Promise<MessageState | null>;
  } = {},
) {
  return {
    idempotency: idempotencyStore(sql, batched),
    // A message's own statements and the sweeps over many, under one name.
    messages: {
      ...messageStore(sql, batched),
      ...answeredSendStore(sql, batched),
      ...messageSweepStore(sql),
    },
    ledger: ledgerStore(sql),
    limits: limitStore(sql),
    projects: projectStore(sql),
    keys: keyStore(sql),
    claims: claimStore(sql),
    accounts: accountStore(sql),
    audit: auditStore(sql),
    messageLog: messageLogStore(sql),
    senderRequests: senderRequestStore(sql),
    sessions: sessionStore(sql),
    mcpSessions: mcpSessionStore(sql),
    requestLog: requestLogStore(sql),
    time: databaseTimeStore(sql),
    verifications: verificationStore(sql),
    partitions: partitionStore(sql),
  };
}

/** The messages family: messages.ts and message-sweeps.ts together. */
export type MessageStore = MessageSendStore & AnsweredSendStore & MessageSweepStore;

/** Every table family, bound to one connection or transaction. */
export type StoreTx = ReturnType<typeof families>;

export type Store = StoreTx & {
  /** Runs `work` in one transaction; it gets the same families, bound to that transaction. */
  transaction<T>(work: (tx: StoreTx) => Promise<T>): Promise<T>;
};

/**
 * Test sends' final writes (messages.insertAnswered) that arrive while others
 * are being written go to the database together: one statement and one
 * durable commit for up to 64 sends, at most 4 such statements at once.
 */
const ANSWERED_BATCHES: BatchOptions = { maxBatch: 64, maxInFlight: 4 };
/**
 * Test sends' claims with their answers (messages.claimAnswered) go as the
 * final writes do (ANSWERED_BATCHES): one durable statement for up to 64.
 *
 * Test sends' claims (idempotency.claimCounted) likewise: one statement per
 * project minute for up to 64 sends, so a busy project's counter row is locked
 * once per batch, not once per send (bench/log/2026-11-25.md#where-the-tail-comes-from).
 */
const CLAIM_BATCHES: BatchOptions = { maxBatch: 64, maxInFlight: 4 };
/**
 * Reads of a message by id and project (GET /v1/messages/{id}) that arrive while others are being read go to
 * the database together: one statement for up to 64, at most 4 at once. Each read alone was a statement, a
 * socket write that wakes PostgreSQL, a fifth of the service's thread at 256 connections
 * (bench/log/2026-11-29.md#reads-in-one-statement-2026-11-29).
 */
const READ_BATCHES: BatchOptions = { maxBatch: 64, maxInFlight: 4 };

export function createStore(
  db: Pick<Database, "query" | "transaction">,
  options: { answeredBatches?: BatchOptions; claimBatches?: BatchOptions; readBatches?: BatchOptions } = {},
): Store {
  const insertAnswered = batcher((sends: AnsweredMessage[]) => insertAnsweredMany(db, sends), {
    ...(options.answeredBatches ?? ANSWERED_BATCHES),
    // An outage fails the whole batch (each send retries it); anything else
    // may be one send's own (a project deleted meanwhile): each runs alone.
    retryAlone: (error) => !isDatabaseUnavailable(error),
  });
  const claimCounted = batcher((claims: CountedClaim[]) => claimCountedMany(db, claims), {
    ...(options.claimBatches ?? CLAIM_BATCHES),
    retryAlone: (error) => !isDatabaseUnavailable(error),
  });
  const claimAnswered = batcher((sends: ClaimedAnswer[]) => claimAnsweredMany(db, sends), {
    ...(options.answeredBatches ?? ANSWERED_BATCHES),
    retryAlone: (error) => !isDatabaseUnavailable(error),
  });
  const readInProject = batcher(
    (reads: Array<{ messageId: string; projectId: string }>) => readInProjectMany(db, reads),
    // A read writes nothing: a failed batch's reads each run alone, so one read's own error stays its own.
    { ...(options.readBatches ?? READ_BATCHES), retryAlone: (error) => !isDatabaseUnavailable(error) },
  );
  // One flush at a time; callers that arrive meanwhile share the next one,
  // which starts after their commits (a batch's flush covers them all).
  const flushBatch = batcher(
    async (callers: null[]) => {
      await flushCommitted(db);
      return callers;
    },
    { maxBatch: 1_024, maxInFlight: 1, retryAlone: () => false },
  );
  return {
    ...families(db, {
      insertAnswered,
      claimCounted,
      claimAnswered,
      flushCommitted: async () => void (await flushBatch(null)),
      readInProject,
    }),
    transaction: (work) => db.transaction((sql) => work(families(sql))),
  };
}

/**
 * `store` with its pure reads that a replica may serve running on
 * `reads.replica`: a message or verification by id (the API's GETs), and the
 * dashboard's lists, charts and exports (the message and request logs, the
 * credit ledger, verifications). Everything else is `store`'s own, on the
 * primary: writes, transactions, idempotent replays, limits and spending, keys,
 * and which projects an account owns. A by-id read the replica does not find
 * is retried on the primary while the id is recent (reads.ts); so is a
 * message's timeline, ledger and request list, which the message page shows
 * beside it. Give it only to use cases that read.
 */
export function withReplicaReads(store: Store, reads: ReplicaReads): Store {
  const replica = families(reads.replica);
  const byId = readYourWrites(reads);
  return {
    ...store,
    messages: {
      ...store.messages,
      readInProject: (id, projectId) =>
        byId(
          id,
          () => replica.messages.readInProject(id, projectId),
          () => store.messages.readInProject(id, projectId),
        ),
    },
    verifications: {
      ...store.verifications,
      read: (id, projectId) =>
        byId(
          id,
          () => replica.verifications.read(id, projectId),
          () => store.verifications.read(id, projectId),
        ),
      list: replica.verifications.list,
      conversion: replica.verifications.conversion,
    },
    messageLog: {
      ...store.messageLog,
      list: replica.messageLog.list,
      usageByDay: replica.messageLog.usageByDay,
      detail: (projectId, id) =>
        byId(
          id,
          () => replica.messageLog.detail(projectId, id),
          () => store.messageLog.detail(projectId, id),
        ),
      events: (id) =>
        byId(
          id,
          () => replica.messageLog.events(id),
          () => store.messageLog.events(id),
        ),
    },
    ledger: {
      ...store.ledger,
      // A project claimed a moment ago has its balance row on the primary only.
      balance: (projectId) =>
        byId(
          projectId,
          () => replica.ledger.balance(projectId),
          () => store.ledger.balance(projectId),
        ),
      listPage: replica.ledger.listPage,
      forMessage: (projectId, id) =>
        byId(
          id,
          () => replica.ledger.forMessage(projectId, id),
          () => store.ledger.forMessage(projectId, id),
        ),
    },
    requestLog: {
      ...store.requestLog,
      list: replica.requestLog.list,
      byIdempotencyKey: replica.requestLog.byIdempotencyKey,
      find: (projectId, id) =>
        byId(
          id,
          () => replica.requestLog.find(projectId, id),
          () => store.requestLog.find(projectId, id),
        ),
      forMessage: (projectId, id) =>
        byId(
          id,
          () => replica.requestLog.forMessage(projectId, id),
          () => store.requestLog.forMessage(projectId, id),
        ),
    },
  };
}

class Rollback<R> extends Error {
  constructor(readonly value: R) {
    super("transaction rolled back");
  }
}

/**
 * store.transaction(), but `work` may end it early with `rollback(value)`:
 * everything it wrote is undone and `value` is returned. For refusals found
 * halfway through a transaction (a limit, a balance), which are values, not
 * errors.
 */
export async function transactionOrRollback<T, R, Tx = StoreTx>(
  store: { transaction<U>(work: (tx: Tx) => Promise<U>): Promise<U> },
  work: (tx: Tx, rollback: (value: R) => never) => Promise<T>,
): Promise<T | R> {
  try {
    return await store.transaction((tx) =>
      work(tx, (value: R) => {
        throw new Rollback(value);
      }),
    );
  } catch (error) {
    if (error instanceof Rollback) return error.value as R;
    throw error;
  }
}
