// The words the wire is built from: the key modes, the message and
// verification statuses, the message error codes and their wording, the
// recipient pattern and the days a log filter names. The domain implements
// them (@sms/domain re-exports each); the schemas of this package and the
// pages read them from here. A leaf: imports nothing of ours but the templates.

export const KEY_MODES = ["test", "live"] as const;
export type KeyMode = (typeof KEY_MODES)[number];

export const MESSAGE_STATUSES = [
  "queued",
  "submitted",
  "delivered",
  "undeliverable",
  "failed",
  "unknown",
] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/** Statuses a message never leaves. */
export const FINAL_STATUSES: readonly MessageStatus[] = ["delivered", "undeliverable", "failed", "unknown"];

/** Codes that may appear in a message's `error` field (spec 2.2). */
export const MESSAGE_ERROR_CODES = [
  "provider_rejected",
  "sender_not_allowed",
  "invalid_message",
  "invalid_recipient",
  "internal_error",
  "provider_unavailable",
] as const;
export type MessageErrorCode = (typeof MESSAGE_ERROR_CODES)[number];

/** Our own wording for each error a message can carry (its `error.message`); never a provider's text. */
export const MESSAGE_ERROR_TEXT = {
  provider_rejected:
    "The provider rejected the message; it was not sent. Any credits reserved for it were refunded.",
  sender_not_allowed: "The provider refused the sender name for this project; the message was not sent.",
  invalid_message: "The provider refused the message content; the message was not sent.",
  invalid_recipient: "The recipient number could not be reached; the SMS was not delivered.",
  internal_error: "The service failed while handling this message.",
  provider_unavailable:
    "The provider gave no definitive answer, so the SMS may or may not have been sent. Do not retry automatically.",
  undeliverable: "The carrier reported that the SMS could not be delivered to this recipient.",
  deadline: "No final delivery result arrived in time, so the outcome is unknown.",
} as const;

/** Why a message carries its error: the code, plus the situation when one code has several. */
export type MessageErrorReason = keyof typeof MESSAGE_ERROR_TEXT;

/** Exactly "+9955" and eight ASCII digits; never trimmed or normalised (spec 4.2). */
export const RECIPIENT_PATTERN = /^\+9955[0-9]{8}$/;

export const VERIFICATION_STATUSES = [
  "pending",
  "approved",
  "expired",
  "canceled",
  "max_attempts_reached",
  "send_failed",
] as const;
export type VerificationStatus = (typeof VERIFICATION_STATUSES)[number];

/**
 * The statuses a check answers `200` with: what the check changed of a
 * pending verification (the right code, a wrong one, the last wrong one).
 * Every other status is refused as not pending.
 */
export const CHECK_OUTCOME_STATUSES = [
  "approved",
  "pending",
  "max_attempts_reached",
] as const satisfies readonly VerificationStatus[];
export type CheckOutcomeStatus = (typeof CHECK_OUTCOME_STATUSES)[number];

/** The templates a verification may be sent with (all three of the catalogue take a `code`). */
export const VERIFICATION_TEMPLATES = ["verification_code", "login_code", "password_reset_code"] as const;
export type VerificationTemplate = (typeof VERIFICATION_TEMPLATES)[number];

/** Wrong codes a verification accepts; the last one ends it as `max_attempts_reached`. */
export const VERIFICATION_MAX_ATTEMPTS = 5;

/** Code lengths a caller may ask for, and the default. */
export const VERIFICATION_CODE_LENGTH = { min: 4, max: 8, default: 6 } as const;

/**
 * The days a log can be filtered by, inclusive: a filter "to" a day reads up to the next midnight, and the day
 * after 9999-12-30 is the last one a timestamp (and a four-digit year) can name.
 */
export const FILTER_DAYS = { first: "1970-01-01", last: "9999-12-30" } as const;

/** A real calendar day, YYYY-MM-DD, within FILTER_DAYS. */
export function isFilterDay(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || value < FILTER_DAYS.first || value > FILTER_DAYS.last)
    return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}
