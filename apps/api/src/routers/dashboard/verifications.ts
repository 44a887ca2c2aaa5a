// dashboard.verifications.*: a project's verifications log (masked number,
// status, attempts used, created and approved times, the message) and the
// overview's conversion: approved ÷ started per UTC day for 30 days, and the
// median time to approve.
import { dashboard } from "@sms/contract";
import { viewerProcedure } from "../../trpc/trpc.ts";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import { ts, tsOrNull } from "./records.ts";
import { orThrow } from "./support.ts";

const { ZConversionRequest, ZConversionResponse, ZListVerificationsRequest, ZListVerificationsResponse } =
  dashboard;

export const VERIFICATIONS_PAGE_SIZE = 50;

export const listVerificationsProcedure = viewerProcedure
  .input(ZListVerificationsRequest)
  .output(ZListVerificationsResponse)
  .query(async ({ ctx, input }) => {
    const page = orThrow(
      await ctx.deps.services.dashboard.verifications.list({
        viewer: ctx.viewer,
        projectId: input.project_id,
        after: decodeCursor(input.cursor),
        limit: VERIFICATIONS_PAGE_SIZE,
      }),
    );
    ctx.state.projectId = input.project_id;
    return {
      verifications: page.items.map((row) => ({
        id: row.id,
        mode: row.mode,
        to: row.recipientMasked,
        status: row.status,
        attempts_used: row.attemptsUsed,
        message_id: row.messageId,
        created_at: ts(row.createdAt),
        approved_at: tsOrNull(row.approvedAt),
      })),
      next: encodeCursor(page.next),
    };
  });

export const verificationConversionProcedure = viewerProcedure
  .input(ZConversionRequest)
  .output(ZConversionResponse)
  .query(async ({ ctx, input }) => {
    const found = orThrow(
      await ctx.deps.services.dashboard.verifications.conversion({
        viewer: ctx.viewer,
        projectId: input.project_id,
      }),
    );
    ctx.state.projectId = input.project_id;
    return {
      days: found.days,
      started: found.started,
      approved: found.approved,
      conversion_rate: found.started === 0 ? null : found.approved / found.started,
      median_seconds_to_approve: found.medianSecondsToApprove,
    };
  });
