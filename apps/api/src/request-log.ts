// What the request log records of one answered API request (docs/dashboard.md#request-log):
// only requests a project's key authenticated; the route template, never the
// path; the status and error code; the Idempotency-Key header as sent (cut to
// 255 characters); whether the answer was a replay; the message or
// verification it produced. Never a body, a number, a code or the key.
import type { RequestRecord } from "@sms/domain";
import type { FinishedRequest } from "./http/gateway.ts";
import { headerText } from "./http/header-text.ts";
import type { RequestState } from "./trpc/request-state.ts";

export const MAX_RECORDED_IDEMPOTENCY_KEY = 255;

export function requestRecord(
  state: RequestState,
  finished: FinishedRequest,
  response: Response,
  now: Date,
): RequestRecord | null {
  if (!state.projectId || !state.apiKey) return null;
  const idempotencyKey = headerText(state.request.headers.get("idempotency-key"));
  return {
    id: state.requestId,
    projectId: state.projectId,
    keyId: state.apiKey.id,
    mode: state.apiKey.mode,
    method: finished.method,
    route: finished.route,
    status: finished.status,
    errorCode: finished.code ?? null,
    idempotencyKey: idempotencyKey ? idempotencyKey.slice(0, MAX_RECORDED_IDEMPOTENCY_KEY) : null,
    replayed: response.headers.get("idempotent-replayed") === "true",
    durationMs: Math.max(0, Math.round(finished.seconds * 1000)),
    messageId: state.messageId ?? null,
    verificationId: state.verificationId ?? null,
    createdAt: new Date(now.getTime() - Math.round(finished.seconds * 1000)),
  };
}
