import { ApiError, sendMessage } from "@sms/domain";
import { rateLimitHeaders, retryHeaders } from "../../http/rate-limit-headers.ts";
import { respond } from "../../http/request-state.ts";
import { apiKeyProcedure, middleware } from "../../trpc/trpc.ts";
import { sendMessageMeta, ZSendMessageRequest, ZSendMessageResponse } from "./send-message.types.ts";

export const MAX_IDEMPOTENCY_KEY_LENGTH = 200;

/** Spec 4.2: the Idempotency-Key header, checked after authentication and before the body. */
const requireIdempotencyKey = middleware(({ ctx, next }) => {
  const key = ctx.state.request.headers.get("idempotency-key");
  if (key === null || key === "") {
    throw new ApiError(
      "idempotency_key_required",
      "Send an 'Idempotency-Key' header (1–200 characters, unique per logical send).",
    );
  }
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new ApiError("invalid_request", "The 'Idempotency-Key' header must be at most 200 characters.");
  }
  return next({ ctx: { idempotencyKey: key } });
});

export const sendMessageProcedure = apiKeyProcedure
  .use(requireIdempotencyKey)
  .meta(sendMessageMeta)
  .input(ZSendMessageRequest)
  .output(ZSendMessageResponse)
  .mutation(async ({ ctx, input }) => {
    const { deps, state } = ctx;
    const result = await sendMessage({
      deps: {
        prisma: deps.prisma,
        sql: deps.db,
        keyring: deps.keyring,
        clock: deps.clock,
        logger: state.log,
        providers: deps.providers,
        config: {
          messagesPerMinute: deps.env.MESSAGES_PER_MINUTE,
          freeTierDailySegments: deps.env.FREE_TIER_DAILY_SEGMENTS,
          defaultSender: deps.env.SMS_DEFAULT_SENDER,
          simulatorDelayMs: deps.env.SIMULATOR_DELIVERY_DELAY_MS,
        },
      },
      project: ctx.project,
      mode: ctx.mode,
      keyId: ctx.keyId,
      idempotencyKey: ctx.idempotencyKey,
      request: input,
    });
    const now = deps.clock.now();
    switch (result.kind) {
      case "created":
        respond(ctx, { status: 201, headers: rateLimitHeaders(result.rateLimit, now) });
        return result.message;
      case "replayed":
        respond(ctx, { status: 200, headers: { "Idempotent-Replayed": "true" } });
        return result.message;
      case "refused":
        throw new ApiError(result.code, result.message, result.limit ? retryHeaders(result.limit, now) : {});
    }
  });
