// dashboard.messages.*: a project's message log and one message's timeline.
import { dashboard } from "@sms/contract";
import { DAY_MS } from "@sms/domain";
import { viewerProcedure } from "../../trpc/trpc.ts";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import { toLedgerEntry, toMessageDetail, toMessageEvent, toMessageRow } from "./records.ts";
import { orThrow } from "./support.ts";

const { ZGetMessageRequest, ZGetMessageResponse, ZListMessagesRequest, ZListMessagesResponse } = dashboard;

export const MESSAGES_PAGE_SIZE = 50;

const day = (text: string) => new Date(`${text}T00:00:00Z`);

export const listMessagesProcedure = viewerProcedure
  .input(ZListMessagesRequest)
  .output(ZListMessagesResponse)
  .query(async ({ ctx, input }) => {
    const page = orThrow(
      await ctx.deps.services.dashboard.messages.list({
        viewer: ctx.viewer,
        projectId: input.project_id,
        filter: {
          ...(input.status ? { status: input.status } : {}),
          ...(input.mode ? { mode: input.mode } : {}),
          ...(input.template ? { template: input.template } : {}),
          ...(input.from ? { from: day(input.from) } : {}),
          // "to" names the last day included.
          ...(input.to ? { to: new Date(day(input.to).getTime() + DAY_MS) } : {}),
        },
        after: decodeCursor(input.cursor),
        limit: MESSAGES_PAGE_SIZE,
      }),
    );
    ctx.state.projectId = input.project_id;
    return { messages: page.items.map(toMessageRow), next: encodeCursor(page.next) };
  });

export const getMessageProcedure = viewerProcedure
  .input(ZGetMessageRequest)
  .output(ZGetMessageResponse)
  .query(async ({ ctx, input }) => {
    const found = orThrow(
      await ctx.deps.services.dashboard.messages.get({
        viewer: ctx.viewer,
        projectId: input.project_id,
        messageId: input.message_id,
      }),
    );
    ctx.state.projectId = input.project_id;
    return {
      message: toMessageDetail(found.message),
      timeline: found.timeline.map(toMessageEvent),
      ledger: found.ledger.map(toLedgerEntry),
    };
  });
