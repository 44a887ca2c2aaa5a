import { startVerificationMeta, ZStartVerificationRequest, ZStartVerificationResponse } from "@sms/contract";
import { liveRecipientHeaders, rateLimitHeaders } from "../../contract/rate-limit-headers.ts";
import { startVerificationRefusal } from "../../http/errors.ts";
import { deferredLog, respond } from "../../trpc/request-state.ts";
import { apiKeyProcedureWith } from "../../trpc/trpc.ts";
import { requireIdempotencyKey } from "../messages/send-message.ts";

/** POST /v1/verifications (issue 22): the headers of POST /v1/messages, the code drawn and sent by the service. */
export const startVerificationProcedure = apiKeyProcedureWith(requireIdempotencyKey)
  .meta(startVerificationMeta)
  .input(ZStartVerificationRequest)
  .output(ZStartVerificationResponse)
  .mutation(async ({ ctx, input }) => {
    const { deps, state } = ctx;
    const result = await deps.services.verifications.start({
      project: ctx.project,
      mode: ctx.mode,
      keyId: ctx.keyId,
      idempotencyKey: ctx.idempotencyKey,
      request: {
        to: input.to,
        template: input.template,
        locale: input.locale,
        codeLength: input.code_length,
      },
      logger: deferredLog(state),
    });
    const now = deps.clock.now();
    if (!result.ok) throw startVerificationRefusal(result, now);
    state.verificationId = result.verification.id;
    if (result.replayed) {
      respond(ctx, { status: 200, headers: { "Idempotent-Replayed": "true" } });
      return result.verification;
    }
    const failed = result.verification.status === "send_failed";
    deps.metrics.verification(ctx.mode, failed ? "failed" : "started");
    deps.metrics.verification(ctx.mode, "canceled", result.replaced);
    respond(ctx, {
      status: 201,
      headers: { ...rateLimitHeaders(result.rateLimit, now), ...liveRecipientHeaders(result.recipient) },
    });
    return result.verification;
  });
