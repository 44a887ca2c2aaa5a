// The error a procedure or the edge throws to be answered in the envelope,
// and the waits the API asks for. The codes and their statuses are the
// contract's (@sms/contract, errors.ts).
import { type ApiErrorCode, ERROR_STATUS } from "@sms/contract";

/** An error the caller is meant to see: thrown by procedures and the gateway only. */
export class ApiError extends Error {
  readonly code: ApiErrorCode;
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(code: ApiErrorCode, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.headers = headers;
  }
}

/** Seconds a caller is asked to wait while the database does not answer (Retry-After). */
export const DATABASE_RETRY_AFTER_SECONDS = 5;
/** 503 provider_unavailable: nothing was sent; a retry with the same key is safe after this many seconds. */
export const PROVIDER_RETRY_AFTER_SECONDS = 5;
