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
import type { Database, Sql } from "@sms/db";
import { accountStore } from "./accounts.ts";
import { auditStore } from "./audit.ts";
import { claimStore } from "./claims.ts";
import { idempotencyStore } from "./idempotency.ts";
import { keyStore } from "./keys.ts";
import { ledgerStore } from "./ledger.ts";
import { limitStore } from "./limits.ts";
import { messageLogStore } from "./message-log.ts";
import { messageStore } from "./messages.ts";
import { projectStore } from "./projects.ts";
import { senderRequestStore } from "./sender-requests.ts";
import { sessionStore } from "./sessions.ts";

export type { IdempotencyStore, PriorRecord } from "./idempotency.ts";
export type { DueMessage, MessageStore, Outcome, QueuedClaim, QueuedMessage } from "./messages.ts";
// The one thing of the database the use cases need to know: that it may not answer for a while.
export { isDatabaseUnavailable } from "@sms/db";
export type { Balance, LedgerEntry, LedgerStore } from "./ledger.ts";
export type { CounterWindow, LimitStore } from "./limits.ts";
export type { ProjectRecord, ProjectStore } from "./projects.ts";
export type { KeyLookup, KeyRecord, KeyStore } from "./keys.ts";
export type { ClaimStore, ClaimTokenRecord, ClaimTokenView } from "./claims.ts";
export type { AccountStore } from "./accounts.ts";
export type { AuditEntry, AuditEntryInput, AuditStore } from "./audit.ts";
export type {
  Cursor,
  MessageDetail,
  MessageEvent,
  MessageLogEntry,
  MessageLogFilter,
  MessageLogStore,
  UsageRow,
} from "./message-log.ts";
export type { AccountProjectRow, FoundProject } from "./projects.ts";
export type { SenderRequestRecord, SenderRequestStatus, SenderRequestStore } from "./sender-requests.ts";
export type { SessionRecord, SessionStore } from "./sessions.ts";

function families(sql: Sql) {
  return {
    idempotency: idempotencyStore(sql),
    messages: messageStore(sql),
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
  };
}

/** Every table family, bound to one connection or transaction. */
export type StoreTx = ReturnType<typeof families>;

export type Store = StoreTx & {
  /** Runs `work` in one transaction; it gets the same families, bound to that transaction. */
  transaction<T>(work: (tx: StoreTx) => Promise<T>): Promise<T>;
};

export function createStore(db: Pick<Database, "query" | "transaction">): Store {
  return {
    ...families(db),
    transaction: (work) => db.transaction((sql) => work(families(sql))),
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
