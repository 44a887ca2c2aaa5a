// dashboard.projects.*: the signed-in account holder's projects.
import { dashboard } from "@sms/contract";
import { viewerProcedure } from "../../trpc/trpc.ts";
import { refused } from "../refusals.ts";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import { toCredits, toFreeTier, toProject, toSenderRequest, ts } from "./records.ts";
import { orThrow } from "./support.ts";

const {
  ZListProjectsRequest,
  ZListProjectsResponse,
  ZProjectOverviewResponse,
  ZProjectRequest,
  ZSetProjectNameRequest,
  ZSetProjectNameResponse,
  ZUsageRequest,
  ZUsageResponse,
} = dashboard;

export const PROJECTS_PAGE_SIZE = 25;

export const listProjectsProcedure = viewerProcedure
  .input(ZListProjectsRequest)
  .output(ZListProjectsResponse)
  .query(async ({ ctx, input }) => {
    const after = decodeCursor(input.cursor);
    const page = await ctx.deps.services.dashboard.projects.list({
      viewer: ctx.viewer,
      after: after && { claimedAt: after.createdAt, id: after.id },
      limit: PROJECTS_PAGE_SIZE,
    });
    return {
      projects: page.items.map((row) => ({
        ...toProject(row),
        messages_today: row.messagesToday,
        pending_sender: row.pendingSender,
      })),
      next: encodeCursor(page.next && { createdAt: page.next.claimedAt, id: page.next.id }),
    };
  });

export const projectOverviewProcedure = viewerProcedure
  .input(ZProjectRequest)
  .output(ZProjectOverviewResponse)
  .query(async ({ ctx, input }) => {
    const overview = orThrow(
      await ctx.deps.services.dashboard.projects.overview({
        viewer: ctx.viewer,
        projectId: input.project_id,
      }),
    );
    ctx.state.projectId = overview.project.id;
    const { credits, freeTier } = overview;
    return {
      project: toProject(overview.project),
      credits: toCredits(credits),
      free_tier: toFreeTier(freeTier),
      pending_sender_request: overview.pendingSenderRequest && toSenderRequest(overview.pendingSenderRequest),
      messages_today: overview.messagesToday,
    };
  });

export const projectUsageProcedure = viewerProcedure
  .input(ZUsageRequest)
  .output(ZUsageResponse)
  .query(async ({ ctx, input }) => {
    const usage = orThrow(
      await ctx.deps.services.dashboard.projects.usage({
        viewer: ctx.viewer,
        projectId: input.project_id,
        ...(input.mode ? { mode: input.mode } : {}),
      }),
    );
    return {
      days: usage.days.map((day) => ({
        day: ts(day.day).slice(0, 10),
        by_status: day.byStatus,
        messages: day.messages,
        segments: day.segments,
      })),
      totals: {
        messages: usage.totals.messages,
        segments: usage.totals.segments,
        by_status: usage.totals.byStatus,
      },
      delivery_rate: usage.deliveryRate,
      delivery_rate_by_mode: usage.deliveryRateByMode,
    };
  });

export const setProjectNameProcedure = viewerProcedure
  .input(ZSetProjectNameRequest)
  .output(ZSetProjectNameResponse)
  .mutation(async ({ ctx, input }) => {
    const result = await ctx.deps.services.dashboard.projects.setName({
      viewer: ctx.viewer,
      projectId: input.project_id,
      name: input.name,
    });
    if (!result.ok) return refused(result);
    ctx.state.projectId = result.project.id;
    return { ok: true as const, project: toProject(result.project) };
  });
