// The purge of unclaimed projects' messages (spec 4.1, 8): a message of a
// project nobody has claimed is deleted 30 days after it was sent, with its
// idempotency records. Claimed projects keep theirs.
//
// Batches are taken with FOR UPDATE SKIP LOCKED, so any number of instances
// can run the job at once without waiting for or double-counting each other.
// The project rows are share-locked in the same statement: a claim being
// confirmed at that moment holds its project row, so the purge either waits
// for it and then sees the project claimed, or has already deleted the batch
// before the claim began.
import type { PrismaClient } from "@sms/db";
import type { Clock } from "../ports.ts";
import { DAY_MS } from "../time.ts";

export const UNCLAIMED_MESSAGE_RETENTION_MS = 30 * DAY_MS;

export type PurgeUnclaimedCounts = { messages: number; idempotency_records: number };

export async function purgeUnclaimedMessages(options: {
  prisma: PrismaClient;
  clock: Clock;
  batchSize: number;
  /** Default: 30 days. */
  olderThanMs?: number;
}): Promise<PurgeUnclaimedCounts> {
  const { prisma } = options;
  const olderThanMs = options.olderThanMs ?? UNCLAIMED_MESSAGE_RETENTION_MS;
  const counts: PurgeUnclaimedCounts = { messages: 0, idempotency_records: 0 };
  for (;;) {
    const cutoff = new Date(options.clock.now().getTime() - olderThanMs);
    const batch = await prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<Array<{ id: string }>>`
        SELECT m.id FROM messages m JOIN projects p ON p.id = m.project_id
        WHERE p.claimed_at IS NULL AND m.created_at < ${cutoff}
        ORDER BY m.created_at
        LIMIT ${options.batchSize}
        FOR UPDATE OF m SKIP LOCKED
        FOR SHARE OF p`;
      if (rows.length === 0) return { selected: 0, messages: 0, idempotency: 0 };
      const ids = rows.map((row) => row.id);
      const idempotency = await tx.idempotencyRecord.deleteMany({ where: { messageId: { in: ids } } });
      const messages = await tx.message.deleteMany({ where: { id: { in: ids } } });
      return { selected: rows.length, messages: messages.count, idempotency: idempotency.count };
    });
    counts.messages += batch.messages;
    counts.idempotency_records += batch.idempotency;
    if (batch.selected < options.batchSize) return counts;
  }
}
