import { getMessageMeta, ZGetMessageRequest, ZGetMessageResponse } from "@sms/contract";
import { ApiError } from "../../contract/api-error.ts";
import { REFUSAL_MESSAGES } from "../../contract/wording.ts";
import { apiKeyProcedure } from "../../trpc/trpc.ts";

export const getMessageProcedure = apiKeyProcedure
  .meta(getMessageMeta)
  .input(ZGetMessageRequest)
  .output(ZGetMessageResponse)
  .query(async ({ ctx, input }) => {
    const result = await ctx.deps.services.messages.get({
      projectId: ctx.project.id,
      messageId: input.message_id,
    });
    if (!result.ok) throw new ApiError("message_not_found", REFUSAL_MESSAGES.message_not_found);
    ctx.state.messageId = result.message.id;
    return result.message;
  });
