import {
  idempotencyKeyProblem,
  sendMessageMeta,
  ZSendMessageRequest,
  ZSendMessageResponse,
} from "@sms/contract";
import { ApiError } from "../../contract/api-error.ts";
import { liveRecipientHeaders, rateLimitHeaders } from "../../contract/rate-limit-headers.ts";
import { REFUSAL_MESSAGES } from "../../contract/wording.ts";
import { sendRefusal } from "../../http/errors.ts";
import { headerText } from "../../http/header-text.ts";
import { deferredLog, respond } from "../../trpc/request-state.ts";
import { apiKeyProcedureWith, type Context } from "../../trpc/trpc.ts";

/**
 * Spec 4.2: the Idempotency-Key header, checked after authentication and
 * before the body. Its length is counted in characters, so it is decoded from
 * the bytes it arrived as first.
 */
export function requireIdempotencyKey(ctx: Context): { idempotencyKey: string } {
  const key = headerText(ctx.state.request.headers.get("idempotency-key"));
  const problem = idempotencyKeyProblem(key);
  if (problem === "missing")
    throw new ApiError("idempotency_key_required", REFUSAL_MESSAGES.idempotency_key_required);
  if (problem === "too_long")
    throw new ApiError("invalid_request", REFUSAL_MESSAGES.idempotency_key_too_long);
  return { idempotencyKey: key ?? "" };
}

export const sendMessageProcedure = apiKeyProcedureWith(requireIdempotencyKey)
  .meta(sendMessageMeta)
  .input(ZSendMessageRequest)
  .output(ZSendMessageResponse)
  .mutation(async ({ ctx, input }) => {
    const { deps, state } = ctx;
    const result = await deps.services.messages.send({
      project: ctx.project,
      mode: ctx.mode,
      keyId: ctx.keyId,
      idempotencyKey: ctx.idempotencyKey,
      request: input,
      logger: deferredLog(state),
    });
    const now = deps.clock.now();
    deps.metrics.send(
      ctx.mode,
      result.ok ? (result.replayed ? "replayed" : result.message.status) : result.code,
    );
    if (!result.ok) throw sendRefusal(result, now);
    state.messageId = result.message.id;
    if (result.replayed) respond(ctx, { status: 200, headers: { "Idempotent-Replayed": "true" } });
    else
      respond(ctx, {
        status: 201,
        headers: { ...rateLimitHeaders(result.rateLimit, now), ...liveRecipientHeaders(result.recipient) },
      });
    return result.message;
  });
