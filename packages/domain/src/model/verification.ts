// The Verification resource (issue 22, docs/verifications.md): a one-time
// code the service draws, sends as an SMS through the message path, and
// checks. Its statuses, its limits, how its code is drawn and named for the
// keyed hash, and the resource a caller sees. The code itself never leaves
// this module's callers except inside the SMS.
import type { VerificationStatus, VerificationTemplate } from "@sms/contract";
import type { Locale } from "@sms/templates";
import type { KeyMode } from "./keys.ts";
import { formatTimestamp } from "./time.ts";

// The statuses, the templates and the code lengths are wire vocabulary (@sms/contract).
export {
  CHECK_OUTCOME_STATUSES,
  type CheckOutcomeStatus,
  VERIFICATION_CODE_LENGTH,
  VERIFICATION_MAX_ATTEMPTS,
  VERIFICATION_STATUSES,
  VERIFICATION_TEMPLATES,
  type VerificationStatus,
  type VerificationTemplate,
} from "@sms/contract";
export const DEFAULT_VERIFICATION_TEMPLATE = "verification_code" satisfies VerificationTemplate;

/** How long a verification stays pending unless VERIFICATION_LIFETIME_MINUTES says otherwise. */
export const DEFAULT_VERIFICATION_LIFETIME_MINUTES = 10;

export type VerificationResource = {
  id: string;
  object: "verification";
  to: string;
  status: VerificationStatus;
  template: VerificationTemplate;
  locale: Locale;
  attempts_remaining: number;
  expires_at: string;
  message_id: string;
  created_at: string;
  updated_at: string;
};

/** A verification's row as the store reads it (never its code hash). */
export type VerificationState = {
  id: string;
  projectId: string;
  mode: KeyMode;
  messageId: string;
  recipientMasked: string;
  template: VerificationTemplate;
  locale: Locale;
  status: VerificationStatus;
  attemptsRemaining: number;
  /** Wrong codes it accepted when its start was answered (its replays say so). */
  attemptsAtStart: number;
  expiresAt: Date;
  approvedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
};

/**
 * The status a caller sees at `now`: a pending verification whose lifetime
 * has passed is expired, whether or not a check has written that down yet.
 */
export function effectiveStatus(
  state: Pick<VerificationState, "status" | "expiresAt">,
  now: Date,
): VerificationStatus {
  if (state.status === "pending" && state.expiresAt.getTime() <= now.getTime()) return "expired";
  return state.status;
}

export function toVerificationResource(state: VerificationState, now: Date): VerificationResource {
  const status = effectiveStatus(state, now);
  // An expiry nobody has written down yet happened at expires_at.
  const updatedAt = status === "expired" && state.status === "pending" ? state.expiresAt : state.updatedAt;
  return {
    id: state.id,
    object: "verification",
    to: state.recipientMasked,
    status,
    template: state.template,
    locale: state.locale,
    attempts_remaining: state.attemptsRemaining,
    expires_at: formatTimestamp(state.expiresAt),
    message_id: state.messageId,
    created_at: formatTimestamp(state.createdAt),
    updated_at: formatTimestamp(updatedAt),
  };
}

/**
 * A new code of `length` decimal digits from the platform's CSPRNG
 * (crypto.getRandomValues), without modulo bias: bytes of 250 or more are
 * drawn again.
 */
export function drawCode(length: number): string {
  let code = "";
  const bytes = new Uint8Array(length * 2);
  while (code.length < length) {
    crypto.getRandomValues(bytes);
    for (const byte of bytes) {
      if (byte >= 250) continue;
      code += String(byte % 10);
      if (code.length === length) break;
    }
  }
  return code;
}

/** Test keys' code: zeros of the requested length, so integrators' own tests can finish a verification. */
export function testModeCode(length: number): string {
  return "0".repeat(length);
}

/**
 * What the keyring's HMAC names for a verification's code: the id is part of
 * it, so equal codes of two verifications never hash alike.
 */
export function codeHashInput(verificationId: string, code: string): string {
  return JSON.stringify(["verification_code", verificationId, code]);
}

/**
 * The identity of a start request for idempotency (the message path's
 * fingerprint input): five elements, so it can never equal a message's
 * (canonicalRequest: four), and a key used for a message and then for a
 * verification is a reuse (409).
 */
export function canonicalVerificationRequest(request: {
  to: string;
  template: string;
  locale: string;
  codeLength: number;
}): string {
  return JSON.stringify(["verification", request.to, request.template, request.locale, request.codeLength]);
}
