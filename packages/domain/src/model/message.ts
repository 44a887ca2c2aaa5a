// The Message resource (spec 2.1, 2.2, 3): its statuses, its error codes and
// the only wording a message carries (stored with it, so a replay returns it
// byte for byte).
import { formatTimestamp } from "./time.ts";

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

export type MessageResource = {
  id: string;
  object: "message";
  to: string;
  status: MessageStatus;
  segments: number | null;
  error: { code: MessageErrorCode; message: string } | null;
  created_at: string;
  updated_at: string;
};

/** Our own wording for each error a message can carry; never a provider's text. */
const MESSAGE_ERROR_TEXT = {
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

export type MessageError = { errorCode: MessageErrorCode; errorMessage: string };

/** The stored error of a message: `reason` picks the wording, the code is what callers branch on. */
export function messageError(code: MessageErrorCode, reason: MessageErrorReason = code): MessageError {
  return { errorCode: code, errorMessage: MESSAGE_ERROR_TEXT[reason] };
}

/** A message's state as the store reads it: what the resource is built from. */
export type MessageState = {
  id: string;
  recipientMasked: string;
  status: MessageStatus;
  segments: number | null;
  errorCode: string | null;
  errorMessage: string | null;
  createdAt: Date;
  updatedAt: Date;
};

export function toMessageResource(state: MessageState): MessageResource {
  return {
    id: state.id,
    object: "message",
    to: state.recipientMasked,
    status: state.status,
    segments: state.segments,
    error: state.errorCode
      ? { code: state.errorCode as MessageErrorCode, message: state.errorMessage ?? "" }
      : null,
    created_at: formatTimestamp(state.createdAt),
    updated_at: formatTimestamp(state.updatedAt),
  };
}
