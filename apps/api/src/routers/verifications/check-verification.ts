import { checkVerificationMeta, ZCheckVerificationRequest, ZCheckVerificationResponse } from "@sms/contract";
import { rateLimitSubject } from "../../http/client-address.ts";
import { verificationRefusal } from "../../http/errors.ts";
import { apiKeyProcedure } from "../../trpc/trpc.ts";

/** POST /v1/verifications/{verification_id}/check (issue 22). */
export const checkVerificationProcedure = apiKeyProcedure
  .meta(checkVerificationMeta)
  .input(ZCheckVerificationRequest)
  .output(ZCheckVerificationResponse)
  .mutation(async ({ ctx, input }) => {
    const result = await ctx.deps.services.verifications.check({
      projectId: ctx.project.id,
      verificationId: input.verification_id,
      code: input.code,
      address: rateLimitSubject(ctx.state.clientAddress),
    });
    // The request log links the verification the request checked (also when the check is refused).
    if (result.ok || result.code !== "verification_not_found")
      ctx.state.verificationId = input.verification_id;
    if (!result.ok) {
      if (result.code === "verification_not_pending" && result.expiredNow)
        ctx.deps.metrics.verification(ctx.mode, "expired");
      throw verificationRefusal(result, ctx.deps.clock.now());
    }
    if (result.transition === "approved" || result.transition === "max_attempts_reached")
      ctx.deps.metrics.verification(ctx.mode, result.transition);
    return result.verification;
  });
