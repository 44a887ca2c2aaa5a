// dashboard.sender.*: the project's sender name, its requests, and a new request.
import { dashboard } from "@sms/contract";
import { viewerProcedure } from "../../trpc/trpc.ts";
import { refused } from "../refusals.ts";
import { toProject, toSenderRequest } from "./records.ts";
import { orThrow } from "./support.ts";

const { ZRequestSenderRequest, ZRequestSenderResponse, ZSenderRequestRequest, ZSenderResponse } = dashboard;

/** How many of a project's requests its sender page shows (newest first). */
export const SENDER_REQUESTS_SHOWN = 20;

export const senderProcedure = viewerProcedure
  .input(ZSenderRequestRequest)
  .output(ZSenderResponse)
  .query(async ({ ctx, input }) => {
    const result = orThrow(
      await ctx.deps.services.dashboard.sender.get({
        viewer: ctx.viewer,
        projectId: input.project_id,
        limit: SENDER_REQUESTS_SHOWN,
      }),
    );
    ctx.state.projectId = input.project_id;
    return { project: toProject(result.project), requests: result.requests.map(toSenderRequest) };
  });

export const requestSenderProcedure = viewerProcedure
  .input(ZRequestSenderRequest)
  .output(ZRequestSenderResponse)
  .mutation(async ({ ctx, input }) => {
    const result = await ctx.deps.services.dashboard.sender.request({
      viewer: ctx.viewer,
      projectId: input.project_id,
      name: input.name,
      purpose: input.purpose,
    });
    if (!result.ok) return refused(result);
    ctx.state.projectId = input.project_id;
    return { ok: true as const, request: toSenderRequest(result.request) };
  });
