// pages.*: what the browser's pages (@sms/web) need besides the dashboard's
// and the operator's procedures: a claim link's summary and the claim itself,
// the dashboard's sessions, and counting sign-in starts. Internal only (never
// served): the pages call them in-process, before anyone is signed in, so
// they are public procedures. Expected outcomes are values.
import {
  ZClaimRequest,
  ZClaimResponse,
  ZCountSignInResponse,
  ZDescribeClaimRequest,
  ZDescribeClaimResponse,
  ZEndAllSessionsResponse,
  ZEndSessionResponse,
  ZResumeSessionResponse,
  ZSessionTokenRequest,
  ZStartSessionRequest,
  ZStartSessionResponse,
} from "@sms/contract";
import { sha256Hex } from "@sms/crypto";
import type { ClaimRefusal } from "@sms/domain";
import { formatTimestamp } from "@sms/domain";
import { secondsUntil } from "../../contract/rate-limit-headers.ts";
import { rateLimitSubject } from "../../http/client-address.ts";
import { publicProcedure, router, viewerProcedure } from "../../trpc/trpc.ts";

function claimRefusal(refusal: ClaimRefusal) {
  return refusal.code === "claimed_by_you"
    ? { ok: false as const, code: refusal.code, project_id: refusal.projectId, account_id: refusal.accountId }
    : { ok: false as const, code: refusal.code };
}

const describeClaim = publicProcedure
  .input(ZDescribeClaimRequest)
  .output(ZDescribeClaimResponse)
  .query(async ({ ctx, input }) => {
    const described = await ctx.deps.services.claims.describe({
      tokenHash: await sha256Hex(input.token),
      now: ctx.deps.clock.now(),
      ...(input.identity ? { identity: input.identity } : {}),
    });
    if (!described.ok) return claimRefusal(described);
    const { summary } = described;
    return {
      ok: true as const,
      summary: {
        project_id: summary.projectId,
        project_created_at: formatTimestamp(summary.projectCreatedAt),
        messages_sent: summary.messagesSent,
        key_prefix: summary.keyPrefix,
        expires_at: formatTimestamp(summary.expiresAt),
      },
    };
  });

const claim = publicProcedure
  .input(ZClaimRequest)
  .output(ZClaimResponse)
  .mutation(async ({ ctx, input }) => {
    const result = await ctx.deps.services.claims.claim({
      tokenHash: await sha256Hex(input.token),
      identity: input.identity,
      now: ctx.deps.clock.now(),
    });
    if (!result.ok) return claimRefusal(result);
    return {
      ok: true as const,
      project_id: result.projectId,
      account_id: result.accountId,
      credits_granted: result.creditsGranted,
    };
  });

const sessions = router({
  start: publicProcedure
    .input(ZStartSessionRequest)
    .output(ZStartSessionResponse)
    .mutation(async ({ ctx, input }) => {
      const started = await ctx.deps.services.dashboard.sessions.start({ identity: input.identity });
      return { token: started.token, expires_at: formatTimestamp(started.expiresAt) };
    }),
  resume: publicProcedure
    .input(ZSessionTokenRequest)
    .output(ZResumeSessionResponse)
    .mutation(({ ctx, input }) => ctx.deps.services.dashboard.sessions.resume({ token: input.token })),
  end: publicProcedure
    .input(ZSessionTokenRequest)
    .output(ZEndSessionResponse)
    .mutation(async ({ ctx, input }) => ({
      ended: (await ctx.deps.services.dashboard.sessions.end({ token: input.token })).ended,
    })),
  /** "Sign out everywhere": every session of the signed-in identity and of its account. */
  endAll: viewerProcedure.output(ZEndAllSessionsResponse).mutation(async ({ ctx }) => {
    const { ended } = await ctx.deps.services.dashboard.sessions.endAll({ viewer: ctx.viewer });
    ctx.state.log.info({ ended }, "dashboard: signed out everywhere");
    return { ended };
  }),
});

/** One sign-in start from this request's network, under CLAIM_SIGN_INS_PER_MINUTE. */
const countSignIn = publicProcedure.output(ZCountSignInResponse).mutation(async ({ ctx }) => {
  const limit = await ctx.deps.services.claims.countSignIn(rateLimitSubject(ctx.state.clientAddress));
  if (limit.ok) return { ok: true as const };
  return { ok: false as const, retry_after_seconds: secondsUntil(limit.limit.resetAt, ctx.deps.clock.now()) };
});

export const pagesRouter = router({
  claims: router({ describe: describeClaim, claim }),
  sessions,
  signIns: router({ count: countSignIn }),
});
