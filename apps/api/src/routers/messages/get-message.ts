import { ApiError, getMessage } from "@sms/domain";
import { apiKeyProcedure } from "../../trpc/trpc.ts";
import { getMessageMeta, ZGetMessageRequest, ZGetMessageResponse } from "./get-message.types.ts";

export const getMessageProcedure = apiKeyProcedure
  .meta(getMessageMeta)
  .input(ZGetMessageRequest)
  .output(ZGetMessageResponse)
  .query(async ({ ctx, input }) => {
    const message = await getMessage({
      prisma: ctx.deps.prisma,
      sql: ctx.deps.db,
      projectId: ctx.project.id,
      messageId: input.message_id,
    });
    if (!message) throw new ApiError("message_not_found", "No message with this id exists in this project.");
    return message;
  });
