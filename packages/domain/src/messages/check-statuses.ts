// The periodic status check (spec 3): every round, due `submitted` messages
// are claimed in batches with FOR UPDATE SKIP LOCKED (so any number of
// instances never check one message twice in a round), asked about, and moved
// on. Transitions are monotonic: only `submitted` rows move, and `delivered`
// and `undeliverable` never change again.
import type { Keyring } from "@sms/crypto";
import { messageError } from "../model/message.ts";
import type { Clock, Logger } from "../ports.ts";
import type { SmsProvider, StatusReport } from "../provider.ts";
import type { DueMessage, Store } from "../store/index.ts";

export type StatusCheckCounts = {
  checked: number;
  delivered: number;
  undeliverable: number;
  failed: number;
  expired: number;
  errors: number;
};

export type CheckStatusesDeps = {
  store: Pick<Store, "messages" | "transaction">;
  keyring: Keyring;
  clock: Clock;
  logger: Logger;
  providers: { test: SmsProvider; live: SmsProvider | null };
  config: {
    intervalMs: number;
    batchSize: number;
    /** A message still `submitted` this long after submission becomes `unknown`. */
    deadlineMs: number;
  };
};

export async function checkMessageStatuses(deps: CheckStatusesDeps): Promise<StatusCheckCounts> {
  const { clock, config } = deps;
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
    const claimed = await deps.store.messages.claimDue({
      dueBy: roundStart,
      nextCheckAt: new Date(now.getTime() + config.intervalMs),
      batchSize: config.batchSize,
    });
    if (claimed.length === 0) break;

    await Promise.all(
      claimed.map(async (message) => {
        counts.checked++;
        const report = await ask(deps, message);
        for (const count of await apply(deps, message, report)) counts[count]++;
      }),
    );
    if (claimed.length < config.batchSize) break;
  }
  return counts;
}

async function ask(deps: CheckStatusesDeps, message: DueMessage): Promise<StatusReport> {
  const provider = message.provider === "simulator" ? deps.providers.test : deps.providers.live;
  if (!provider || !message.providerRef || !message.submittedAt)
    return { kind: "error", reason: "no provider for this message" };
  try {
    const to = message.recipientCiphertext
      ? await deps.keyring.decrypt(message.recipientCiphertext, message.id)
      : "";
    return await provider.checkStatus({
      providerRef: message.providerRef,
      to,
      submittedAt: message.submittedAt,
    });
  } catch (error) {
    deps.logger.warn({ message_id: message.id, err: error }, "status check failed");
    return { kind: "error", reason: "status check failed" };
  }
}

/** Moves the message as the report says; returns the counts it adds to. */
async function apply(
  deps: CheckStatusesDeps,
  message: DueMessage,
  report: StatusReport,
): Promise<Array<keyof StatusCheckCounts>> {
  const now = deps.clock.now();
  const { messages } = deps.store;
  switch (report.kind) {
    case "delivered":
      return (await messages.settle({ messageId: message.id, status: "delivered", error: null, now }))
        ? ["delivered"]
        : [];
    case "undeliverable": {
      const error = messageError("invalid_recipient", "undeliverable");
      return (await messages.settle({ messageId: message.id, status: "undeliverable", error, now }))
        ? ["undeliverable"]
        : [];
    }
    case "failed": {
      // The provider says the SMS was not sent after all: like a rejection at
      // submission, the reserved credits go back (the error text says so).
      const failed = await deps.store.transaction(async (tx) => {
        const moved = await tx.messages.settle({
          messageId: message.id,
          status: "failed",
          error: messageError("provider_rejected"),
          now,
        });
        if (moved && message.creditsReserved > 0) {
          await tx.ledger.refund({
            projectId: message.projectId,
            messageId: message.id,
            amount: message.creditsReserved,
            note: "provider reported failure",
            now,
          });
        }
        return moved;
      });
      return failed ? ["failed"] : [];
    }
    case "error":
    case "pending": {
      const counted: Array<keyof StatusCheckCounts> = report.kind === "error" ? ["errors"] : [];
      const overdue =
        message.submittedAt !== null &&
        now.getTime() - message.submittedAt.getTime() >= deps.config.deadlineMs;
      const expired =
        overdue &&
        (await messages.settle({
          messageId: message.id,
          status: "unknown",
          error: messageError("provider_unavailable", "deadline"),
          now,
        }));
      return expired ? [...counted, "expired"] : counted;
    }
  }
}
