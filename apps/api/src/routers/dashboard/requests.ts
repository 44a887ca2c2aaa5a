// dashboard.requests.*, dashboard.search: the developer console's request log
// (a project's API requests, filtered and paged), one request, the requests
// behind one message, and the search box.
import { dashboard } from "@sms/contract";
import { DAY_MS, formatTimestamp, type RequestLogEntry } from "@sms/domain";
import type { z } from "zod";
import { viewerProcedure } from "../../trpc/trpc.ts";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import { orThrow } from "./support.ts";

const {
  ZGetRequestRequest,
  ZGetRequestResponse,
  ZListRequestsRequest,
  ZListRequestsResponse,
  ZMessageRequestsRequest,
  ZMessageRequestsResponse,
  ZRequestRow,
  ZSearchRequest,
  ZSearchResponse,
} = dashboard;

export const REQUESTS_PAGE_SIZE = 50;

const day = (text: string) => new Date(`${text}T00:00:00Z`);
const STATUS_CLASS = { "2xx": 2, "4xx": 4, "5xx": 5 } as const;

export function toRequestRow(entry: RequestLogEntry): z.infer<typeof ZRequestRow> {
  return {
    id: entry.id,
    method: entry.method,
    route: entry.route,
    status: entry.status,
    error_code: entry.errorCode,
    idempotency_key: entry.idempotencyKey,
    replayed: entry.replayed,
    duration_ms: entry.durationMs,
    mode: entry.mode,
    key_id: entry.keyId,
    key_prefix: entry.keyPrefix,
    key_name: entry.keyName,
    message_id: entry.messageId,
    verification_id: entry.verificationId,
    created_at: formatTimestamp(entry.createdAt),
  };
}

export const listRequestsProcedure = viewerProcedure
  .input(ZListRequestsRequest)
  .output(ZListRequestsResponse)
  .query(async ({ ctx, input }) => {
    const page = orThrow(
      await ctx.deps.services.dashboard.requests.list({
        viewer: ctx.viewer,
        projectId: input.project_id,
        filter: {
          ...(input.status_class ? { statusClass: STATUS_CLASS[input.status_class] } : {}),
          ...(input.error_code ? { errorCode: input.error_code } : {}),
          ...(input.route ? { route: input.route } : {}),
          ...(input.mode ? { mode: input.mode } : {}),
          ...(input.from ? { from: day(input.from) } : {}),
          ...(input.to ? { to: new Date(day(input.to).getTime() + DAY_MS) } : {}),
        },
        after: decodeCursor(input.cursor),
        limit: REQUESTS_PAGE_SIZE,
      }),
    );
    ctx.state.projectId = input.project_id;
    return { requests: page.items.map(toRequestRow), next: encodeCursor(page.next) };
  });

export const getRequestProcedure = viewerProcedure
  .input(ZGetRequestRequest)
  .output(ZGetRequestResponse)
  .query(async ({ ctx, input }) => {
    const found = orThrow(
      await ctx.deps.services.dashboard.requests.get({
        viewer: ctx.viewer,
        projectId: input.project_id,
        requestId: input.request_id,
      }),
    );
    ctx.state.projectId = input.project_id;
    return { request: toRequestRow(found.request) };
  });

export const messageRequestsProcedure = viewerProcedure
  .input(ZMessageRequestsRequest)
  .output(ZMessageRequestsResponse)
  .query(async ({ ctx, input }) => {
    const found = orThrow(
      await ctx.deps.services.dashboard.messages.requests({
        viewer: ctx.viewer,
        projectId: input.project_id,
        messageId: input.message_id,
      }),
    );
    ctx.state.projectId = input.project_id;
    return { requests: found.requests.map(toRequestRow) };
  });

export const searchProcedure = viewerProcedure
  .input(ZSearchRequest)
  .output(ZSearchResponse)
  .query(async ({ ctx, input }) => {
    const result = await ctx.deps.services.dashboard.search({
      viewer: ctx.viewer,
      projectId: input.project_id,
      query: input.query,
    });
    // An expected refusal, answered as a value: the page says why without writing the key back.
    if (!result.ok && result.code === "whole_key_given") return { kind: "whole_key_given" as const };
    const found = orThrow(result);
    ctx.state.projectId = input.project_id;
    if (found.kind === "idempotency_key")
      return { kind: found.kind, requests: found.requests.map(toRequestRow) };
    if (found.kind === "not_found") return { kind: found.kind };
    return { kind: found.kind, id: found.id };
  });
