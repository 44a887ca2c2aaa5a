// The periodic status check (spec 3): every round, due `submitted` messages
// are claimed in batches with FOR UPDATE SKIP LOCKED (so any number of
// instances never check one message twice in a round), asked about, and moved
// on. Transitions are monotonic: only `submitted` rows move, and `delivered`
// and `undeliverable` never change again.
import type { Keyring } from "@sms/crypto";
import type { PrismaClient } from "@sms/db";
import type { Clock, Logger } from "../ports.ts";
import type { SmsProvider, StatusReport } from "../provider.ts";
import { MESSAGE_ERROR_TEXT } from "./message-resource.ts";
import { prismaSql, refund } from "./message-store.ts";

type Claimed = {
  id: string;
  provider: string;
  provider_ref: string | null;
  recipient_ciphertext: Uint8Array | null;
  submitted_at: Date | null;
  project_id: string;
  credits_reserved: number;
};

export type StatusCheckCounts = {
  checked: number;
  delivered: number;
  undeliverable: number;
  failed: number;
  expired: number;
  errors: number;
};

export async function checkMessageStatuses(options: {
  prisma: PrismaClient;
  keyring: Keyring;
  clock: Clock;
  logger: Logger;
  providers: { test: SmsProvider; live: SmsProvider | null };
  intervalMs: number;
  batchSize: number;
  /** A message still `submitted` this long after submission becomes `unknown`. */
  deadlineMs: number;
}): Promise<StatusCheckCounts> {
  const { prisma, clock } = options;
  const counts: StatusCheckCounts = {
    checked: 0,
    delivered: 0,
    undeliverable: 0,
    failed: 0,
    expired: 0,
    errors: 0,
  };
  const roundStart = clock.now();

  for (;;) {
    const now = clock.now();
    // Claim: push next_check_at one interval ahead, so the rest of this round
    // (here or on another instance) skips these rows.
    const claimed = await prisma.$queryRaw<Claimed[]>`
      UPDATE messages SET next_check_at = ${new Date(now.getTime() + options.intervalMs)}
      WHERE id IN (
        SELECT id FROM messages
        WHERE status = 'submitted' AND next_check_at <= ${roundStart}
        ORDER BY next_check_at
        LIMIT ${options.batchSize}
        FOR UPDATE SKIP LOCKED
      )
      RETURNING id, provider, provider_ref, recipient_ciphertext, submitted_at, project_id, credits_reserved`;
    if (claimed.length === 0) break;

    await Promise.all(
      claimed.map(async (row) => {
        counts.checked++;
        const report = await ask(options, row);
        await apply(options, row, report, counts);
      }),
    );
    if (claimed.length < options.batchSize) break;
  }
  return counts;
}

async function ask(options: Parameters<typeof checkMessageStatuses>[0], row: Claimed): Promise<StatusReport> {
  const provider = row.provider === "simulator" ? options.providers.test : options.providers.live;
  if (!provider || !row.provider_ref || !row.submitted_at)
    return { kind: "error", reason: "no provider for this message" };
  try {
    const to = row.recipient_ciphertext
      ? await options.keyring.decrypt(new Uint8Array(row.recipient_ciphertext), row.id)
      : "";
    return await provider.checkStatus({ providerRef: row.provider_ref, to, submittedAt: row.submitted_at });
  } catch (error) {
    options.logger.warn({ message_id: row.id, err: error }, "status check failed");
    return { kind: "error", reason: "status check failed" };
  }
}

async function apply(
  options: Parameters<typeof checkMessageStatuses>[0],
  row: Claimed,
  report: StatusReport,
  counts: StatusCheckCounts,
): Promise<void> {
  const now = options.clock.now();
  const move = (
    status: "delivered" | "undeliverable" | "failed" | "unknown",
    errorCode: string | null,
    text: string | null,
  ) =>
    options.prisma.message.updateMany({
      where: { id: row.id, status: "submitted" },
      data: { status, errorCode, errorMessage: text, nextCheckAt: null, updatedAt: now },
    });

  switch (report.kind) {
    case "delivered":
      if ((await move("delivered", null, null)).count) counts.delivered++;
      return;
    case "undeliverable":
      if ((await move("undeliverable", "invalid_recipient", MESSAGE_ERROR_TEXT.undeliverable ?? null)).count)
        counts.undeliverable++;
      return;
    case "failed": {
      // The provider says the SMS was not sent after all: like a rejection at
      // submission, the reserved credits go back (the error text says so).
      const credits = Number(row.credits_reserved);
      const failed = await options.prisma.$transaction(async (tx) => {
        const moved = await tx.message.updateMany({
          where: { id: row.id, status: "submitted" },
          data: {
            status: "failed",
            errorCode: "provider_rejected",
            errorMessage: MESSAGE_ERROR_TEXT.provider_rejected ?? null,
            nextCheckAt: null,
            updatedAt: now,
          },
        });
        if (moved.count && credits > 0)
          await refund(prismaSql(tx), row.project_id, row.id, credits, now, "provider reported failure");
        return moved.count > 0;
      });
      if (failed) counts.failed++;
      return;
    }
    case "error":
      counts.errors++;
      break;
    case "pending":
      break;
  }
  if (row.submitted_at && now.getTime() - row.submitted_at.getTime() >= options.deadlineMs) {
    if ((await move("unknown", "provider_unavailable", MESSAGE_ERROR_TEXT.deadline ?? null)).count)
      counts.expired++;
  }
}
