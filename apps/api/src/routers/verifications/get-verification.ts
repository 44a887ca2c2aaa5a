import { getVerificationMeta, ZGetVerificationRequest, ZGetVerificationResponse } from "@sms/contract";
import { verificationRefusal } from "../../http/errors.ts";
import { apiKeyProcedure } from "../../trpc/trpc.ts";

/** GET /v1/verifications/{verification_id} (issue 22). */
export const getVerificationProcedure = apiKeyProcedure
  .meta(getVerificationMeta)
  .input(ZGetVerificationRequest)
  .output(ZGetVerificationResponse)
  .query(async ({ ctx, input }) => {
    const result = await ctx.deps.services.verifications.get({
      projectId: ctx.project.id,
      verificationId: input.verification_id,
    });
    if (!result.ok) throw verificationRefusal(result, ctx.deps.clock.now());
    ctx.state.verificationId = result.verification.id;
    return result.verification;
  });
