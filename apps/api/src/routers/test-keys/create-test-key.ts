import { ApiError, createTestKey, formatTimestamp, TEST_KEY_NEXT_STEPS } from "@sms/domain";
import { rateLimitSubject } from "../../http/client-address.ts";
import { rateLimitHeaders, retryHeaders } from "../../http/rate-limit-headers.ts";
import { respond } from "../../http/request-state.ts";
import { publicProcedure } from "../../trpc/trpc.ts";
import { createTestKeyMeta, ZCreateTestKeyRequest, ZCreateTestKeyResponse } from "./create-test-key.types.ts";

export const createTestKeyProcedure = publicProcedure
  .meta(createTestKeyMeta)
  .input(ZCreateTestKeyRequest)
  .output(ZCreateTestKeyResponse)
  .mutation(async ({ ctx }) => {
    const { deps, state } = ctx;
    const now = deps.clock.now();
    const result = await createTestKey({
      prisma: deps.prisma,
      now,
      publicBaseUrl: deps.env.PUBLIC_BASE_URL,
      callerSubject: rateLimitSubject(state.clientAddress),
      limits: {
        perMinute: deps.env.TEST_KEYS_PER_MINUTE,
        perDay: deps.env.TEST_KEYS_PER_DAY,
        perDayTotal: deps.env.TEST_KEYS_PER_DAY_TOTAL,
      },
    });
    if (!result.ok) {
      const headers = retryHeaders(result.state, now);
      if (result.refusal === "rate_limited") {
        throw new ApiError("rate_limited", "Too many test keys requested from this address this minute. Wait a minute and retry.", headers);
      }
      throw new ApiError(
        "daily_limit_reached",
        `The daily allowance of instant test keys is used up. Do not retry before ${formatTimestamp(result.state.resetAt)} (midnight UTC). Existing keys keep working.`,
        headers,
      );
    }
    state.projectId = result.projectId;
    respond(ctx, { status: 201, headers: rateLimitHeaders(result.rateLimit, now) });
    return {
      api_key: result.apiKey,
      project_id: result.projectId,
      mode: "test" as const,
      claim_url: result.claimUrl,
      expires_at: formatTimestamp(result.expiresAt),
      next_steps: TEST_KEY_NEXT_STEPS,
    };
  });
