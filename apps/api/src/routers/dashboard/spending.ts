// dashboard.projects.spending / setSpending: the daily credit cap and the
// low-balance warning of a project (docs/dashboard.md#spending).
import { dashboard } from "@sms/contract";
import type { ProjectRecord, Spending } from "@sms/domain";
import type { z } from "zod";
import { viewerProcedure } from "../../trpc/trpc.ts";
import { refused } from "../refusals.ts";
import { orThrow } from "./support.ts";

const {
  ZOnboardingResponse,
  ZSetSpendingRequest,
  ZSetSpendingResponse,
  ZSpending,
  ZSpendingRequest,
  ZSpendingResponse,
} = dashboard;

export function toSpending(project: ProjectRecord, spending: Spending): z.infer<typeof ZSpending> {
  return {
    project_name: project.name,
    credit_balance: project.creditBalance,
    daily_credit_cap: spending.dailyCreditCap,
    used_today: spending.usedToday,
    low_balance_threshold: spending.lowBalanceThreshold,
    low_balance: spending.lowBalance,
    daily_rate: spending.dailyRate,
    days_left: spending.daysLeft,
  };
}

export const spendingProcedure = viewerProcedure
  .input(ZSpendingRequest)
  .output(ZSpendingResponse)
  .query(async ({ ctx, input }) => {
    const found = orThrow(
      await ctx.deps.services.dashboard.spending.get({ viewer: ctx.viewer, projectId: input.project_id }),
    );
    ctx.state.projectId = input.project_id;
    return toSpending(found.project, found.spending);
  });

export const onboardingProcedure = viewerProcedure
  .input(ZSpendingRequest)
  .output(ZOnboardingResponse)
  .query(async ({ ctx, input }) => {
    const found = orThrow(
      await ctx.deps.services.dashboard.onboarding({ viewer: ctx.viewer, projectId: input.project_id }),
    );
    return {
      done: found.done,
      test_sent: found.testSent,
      delivered: found.delivered,
      live_key: found.liveKey,
      live_sent: found.liveSent,
    };
  });

export const setSpendingProcedure = viewerProcedure
  .input(ZSetSpendingRequest)
  .output(ZSetSpendingResponse)
  .mutation(async ({ ctx, input }) => {
    const result = await ctx.deps.services.dashboard.spending.set({
      viewer: ctx.viewer,
      projectId: input.project_id,
      dailyCreditCap: input.daily_credit_cap,
      lowBalanceThreshold: input.low_balance_threshold,
    });
    if (!result.ok) return refused(result);
    ctx.state.projectId = input.project_id;
    return { ok: true as const, spending: toSpending(result.project, result.spending) };
  });
