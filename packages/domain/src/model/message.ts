// The Message resource (spec 2.1, 2.2, 3): its statuses, its error codes and
// the only wording a message carries (stored with it, so a replay returns it
// byte for byte).
import {
  MESSAGE_ERROR_TEXT,
  type MessageErrorCode,
  type MessageErrorReason,
  type MessageStatus,
} from "@sms/contract";
import { formatTimestamp } from "./time.ts";

// The statuses and error codes are wire vocabulary (@sms/contract).
export {
  FINAL_STATUSES,
  MESSAGE_ERROR_CODES,
  MESSAGE_STATUSES,
  type MessageErrorCode,
  type MessageErrorReason,
  type MessageStatus,
} from "@sms/contract";

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
