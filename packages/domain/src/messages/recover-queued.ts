// The recovery sweep: a message still `queued` long after it was written was
// left behind by a crash between the write-ahead commit and recording the
// provider's answer. It may or may not have been sent, so it becomes
// `unknown` (never re-sent blindly; credits stay charged), and its idempotency
// record gets that answer so a retry with the same key replays it.
//
// Safe with any number of instances: rows are claimed with FOR UPDATE SKIP
// LOCKED, and a send still in flight that records its outcome later finds the
// message no longer queued and reports the stored `unknown`. Keep the age
// (QUEUED_RECOVERY_SECONDS) well above the provider's submit timeout.
import { Prisma, type PrismaClient } from "@sms/db";
import type { Clock } from "../ports.ts";
import {
  fromResourceRow,
  MESSAGE_RESOURCE_COLUMNS,
  type MessageResourceRow,
  messageError,
  toMessageResource,
} from "./message-resource.ts";
import { IDEMPOTENCY_TTL_MS } from "./message-store.ts";

export async function recoverQueuedMessages(options: {
  prisma: PrismaClient;
  clock: Clock;
  /** How long a message may stay queued before it is considered abandoned. */
  olderThanMs: number;
  batchSize: number;
}): Promise<{ recovered: number }> {
  const { prisma } = options;
  const error = messageError("provider_unavailable");
  let recovered = 0;
  for (;;) {
    const now = options.clock.now();
    const cutoff = new Date(now.getTime() - options.olderThanMs);
    const batch = await prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<MessageResourceRow[]>`
        UPDATE messages SET status = 'unknown', error_code = ${error.errorCode}, error_message = ${error.errorMessage},
                            updated_at = ${now}
        WHERE id IN (
          SELECT id FROM messages WHERE status = 'queued' AND created_at < ${cutoff}
          ORDER BY created_at LIMIT ${options.batchSize}
          FOR UPDATE SKIP LOCKED
        )
        RETURNING ${Prisma.raw(MESSAGE_RESOURCE_COLUMNS)}`;
      for (const row of rows) {
        const resource = toMessageResource(fromResourceRow(row));
        // The record was written with the message, expiring exactly 24 hours
        // after the message's created_at: that finds it through the expires_at
        // index (message_id has none).
        const expiresAt = new Date(new Date(row.created_at).getTime() + IDEMPOTENCY_TTL_MS);
        await tx.$executeRaw`
          UPDATE idempotency_records SET response_body = CAST(${JSON.stringify(resource)} AS jsonb)
          WHERE expires_at = ${expiresAt} AND message_id = ${row.id} AND response_body IS NULL`;
      }
      return rows.length;
    });
    recovered += batch;
    if (batch < options.batchSize) return { recovered };
  }
}
