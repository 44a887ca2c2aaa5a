import {
  createTestKeyMeta,
  TEST_KEY_NEXT_STEPS,
  ZCreateTestKeyRequest,
  ZCreateTestKeyResponse,
} from "@sms/contract";
import { formatTimestamp } from "@sms/domain";
import { rateLimitHeaders } from "../../contract/rate-limit-headers.ts";
import { rateLimitSubject } from "../../http/client-address.ts";
import { testKeyRefusal } from "../../http/errors.ts";
import { respond } from "../../trpc/request-state.ts";
import { publicProcedure } from "../../trpc/trpc.ts";

export const createTestKeyProcedure = publicProcedure
  .meta(createTestKeyMeta)
  .input(ZCreateTestKeyRequest)
  .output(ZCreateTestKeyResponse)
  .mutation(async ({ ctx }) => {
    const { deps, state } = ctx;
    const result = await deps.services.testKeys.create({
      callerSubject: rateLimitSubject(state.clientAddress),
    });
    const now = deps.clock.now();
    if (!result.ok) throw testKeyRefusal(result, now);
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
