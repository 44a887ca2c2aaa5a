// The fake provider behind every test key: pure, clock injected, no I/O and no
// state, so it behaves the same across restarts and several API instances.

import type {
  Clock,
  SmsProvider,
  StatusQuery,
  StatusReport,
  SubmitOutcome,
  SubmitRequest,
} from "@sms/domain";
import { RECIPIENT_PATTERN } from "@sms/domain/model";
import { decodeReference, encodeReference } from "./reference.ts";

/** Test recipients with a scripted outcome (spec 4.2); any other valid number is delivered. */
export const SIMULATOR_NUMBERS = {
  /** Definitively rejected: `failed`, `provider_rejected`. */
  rejected: "+995500000001",
  /** Provider not reached: the API answers 503, retry is safe. */
  unreachable: "+995500000002",
  /** No definitive answer: `unknown`, never retried. */
  indeterminate: "+995500000003",
  /** Accepted, later reported as not delivered. */
  undeliverable: "+995500000004",
} as const;

export const DEFAULT_DELIVERY_DELAY_MS = 5000;

export type SimulatorProviderOptions = {
  clock: Clock;
  /** How long after submission the status check starts reporting the final outcome. */
  deliveryDelayMs?: number;
};

export function createSimulatorProvider(options: SimulatorProviderOptions): SmsProvider {
  const { clock } = options;
  const deliveryDelayMs = options.deliveryDelayMs ?? DEFAULT_DELIVERY_DELAY_MS;
  if (!Number.isFinite(deliveryDelayMs) || deliveryDelayMs < 0) {
    throw new RangeError("deliveryDelayMs must be a finite, non-negative number of milliseconds");
  }

  async function submit(request: SubmitRequest): Promise<SubmitOutcome> {
    switch (request.to) {
      case SIMULATOR_NUMBERS.rejected:
        return {
          kind: "rejected",
          code: "provider_rejected",
          reason: "The simulated provider rejected this reserved test recipient.",
        };
      case SIMULATOR_NUMBERS.unreachable:
        return {
          kind: "unreachable",
          reason: "The simulated provider could not be reached; nothing was sent.",
        };
      case SIMULATOR_NUMBERS.indeterminate:
        return {
          kind: "indeterminate",
          reason:
            "The simulated provider gave no definitive answer; the message may or may not have been sent.",
        };
    }
    if (!RECIPIENT_PATTERN.test(request.to)) {
      return {
        kind: "rejected",
        code: "invalid_recipient",
        reason: "The recipient is not a Georgian mobile number.",
      };
    }
    const planned = request.to === SIMULATOR_NUMBERS.undeliverable ? "undeliverable" : "delivered";
    const providerRef = encodeReference({
      messageId: request.messageId,
      submittedAtMs: clock.now().getTime(),
      planned,
    });
    return { kind: "accepted", providerRef };
  }

  async function checkStatus(query: StatusQuery): Promise<StatusReport> {
    const planned = decodeReference(query.providerRef);
    if (planned === null) {
      return { kind: "error", reason: "The simulator does not recognise this provider reference." };
    }
    const submittedAtMs = query.submittedAt.getTime();
    if (Number.isNaN(submittedAtMs)) {
      return { kind: "error", reason: "The submission time is not a valid date." };
    }
    if (clock.now().getTime() - submittedAtMs < deliveryDelayMs) return { kind: "pending" };
    if (planned === "undeliverable") {
      return { kind: "undeliverable", reason: "The simulated handset could not be reached." };
    }
    return { kind: "delivered" };
  }

  return { name: "simulator", pure: true, submit, checkStatus };
}
