import { z } from "zod";
import type { Meta } from "../../trpc/trpc.ts";
import { ZMessage } from "./message.types.ts";

export const ZGetMessageRequest = z.strictObject({
  message_id: z.string().meta({ description: "The id returned when the message was created." }),
});

export const ZGetMessageResponse = ZMessage;

export const getMessageMeta: Meta = {
  openapi: {
    method: "GET",
    path: "/v1/messages/{message_id}",
    tags: ["messages"],
    summary: "Read a message",
    description:
      "The message's current state. Poll: first read after about 2 s, doubling the wait, capped at 30 s. " +
      "Only the authenticated project's messages are readable.",
    protect: true,
  },
  responses: {
    200: "The message, current state.",
    401: "`unauthorized` or `invalid_api_key`.",
    403: "`project_suspended`.",
    404: "`message_not_found`: absent, or owned by another project (indistinguishable).",
    500: "`internal_error`.",
  },
};
