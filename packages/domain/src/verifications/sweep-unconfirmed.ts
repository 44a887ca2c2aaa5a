// The recovery sweep's verifications (issue 53, G3): a start writes its row
// before its SMS (so no code reaches a phone without it) and, for a test key,
// its message only after the simulator answered; a process killed between the
// two left a row pointing at no message. Nobody was answered about it, and no
// code was sent with it (the duplicate that takes the key over writes a new
// row for its own message), yet it counted as a started verification and its
// dashboard link led nowhere.
//
// Every row is written `unconfirmed` and confirmed by its start once the
// message exists. A row still unconfirmed after the recovery age
// (QUEUED_RECOVERY_SECONDS, as for the messages left queued) is deleted when
// it has no message, and confirmed when it has one (its start was killed after
// the message was written: the message's own recovery decides its status).
// Only the unconfirmed rows are read (a partial index), in batches taken FOR
// UPDATE SKIP LOCKED, so any number of instances may sweep at once.
import type { Clock } from "../ports.ts";
import type { VerificationStore } from "../store/index.ts";

export async function sweepUnconfirmedVerifications(deps: {
  store: { verifications: Pick<VerificationStore, "sweepUnconfirmed"> };
  clock: Clock;
  config: {
    /** How long a row may stay unconfirmed before its start is taken for dead. */
    olderThanMs: number;
    batchSize: number;
  };
}): Promise<{ unsentVerificationsDeleted: number }> {
  const { batchSize, olderThanMs } = deps.config;
  let deleted = 0;
  for (;;) {
    const cutoff = new Date(deps.clock.now().getTime() - olderThanMs);
    const batch = await deps.store.verifications.sweepUnconfirmed(cutoff, batchSize);
    deleted += batch.deleted;
    if (batch.deleted + batch.confirmed < batchSize) return { unsentVerificationsDeleted: deleted };
  }
}
