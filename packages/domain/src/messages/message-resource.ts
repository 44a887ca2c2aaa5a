// The Message resource (spec 2.1) and what may be said about a message.
import type { MessageErrorCode } from "../errors.ts";
import { formatTimestamp } from "../time.ts";

export type MessageStatus = "queued" | "submitted" | "delivered" | "undeliverable" | "failed" | "unknown";

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

export const RECIPIENT_PATTERN = /^\+9955[0-9]{8}$/;

/** "+995512345678" → "+9955••••••78": the only form of a number that leaves the service. */
export function maskRecipient(to: string): string {
  return `+9955${"\u2022".repeat(6)}${to.slice(-2)}`;
}

/** Our own wording for each error a message can carry; never a provider's text. */
export const MESSAGE_ERROR_TEXT: Record<string, string> = {
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
};

export type MessageRow = {
  id: string;
  recipientMasked: string;
  status: MessageStatus;
  segments: number | null;
  errorCode: string | null;
  errorMessage: string | null;
  createdAt: Date;
  updatedAt: Date;
};

/** The columns a Message resource is built from, as the raw SQL statements select or return them. */
export const MESSAGE_RESOURCE_COLUMNS =
  "id, recipient_masked, status::text AS status, segments, error_code, error_message, created_at, updated_at";

/** A row of MESSAGE_RESOURCE_COLUMNS as a driver returns it. */
export type MessageResourceRow = {
  id: string;
  recipient_masked: string;
  status: MessageStatus;
  segments: number | null;
  error_code: string | null;
  error_message: string | null;
  created_at: Date;
  updated_at: Date;
};

export function fromResourceRow(row: MessageResourceRow): MessageRow {
  return {
    id: row.id,
    recipientMasked: row.recipient_masked,
    status: row.status,
    segments: row.segments === null ? null : Number(row.segments),
    errorCode: row.error_code,
    errorMessage: row.error_message,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

export function toMessageResource(row: MessageRow): MessageResource {
  return {
    id: row.id,
    object: "message",
    to: row.recipientMasked,
    status: row.status,
    segments: row.segments,
    error: row.errorCode
      ? { code: row.errorCode as MessageErrorCode, message: row.errorMessage ?? "" }
      : null,
    created_at: formatTimestamp(row.createdAt),
    updated_at: formatTimestamp(row.updatedAt),
  };
}

export function messageError(
  code: MessageErrorCode,
  textKey: string = code,
): { errorCode: string; errorMessage: string } {
  return {
    errorCode: code,
    errorMessage: MESSAGE_ERROR_TEXT[textKey] ?? MESSAGE_ERROR_TEXT.internal_error ?? "",
  };
}
