import { z } from "zod";
import { CONDITIONAL_200_HEADERS, NOT_MODIFIED, ZConditionalReadHeaders } from "../conditional-read.types.ts";
import type { Meta } from "../meta.ts";
import { MESSAGE_EXAMPLES, ZMessage } from "./message.types.ts";

export const ZGetMessageRequest = z.strictObject({
  message_id: z.string().meta({
    description: "The `id` returned when the message was created.",
    example: "msg_01m81b5h8058wzg6wcqtsa05cx",
  }),
});

export const ZGetMessageResponse = ZMessage;

export const getMessageMeta: Meta = {
  openapi: {
    method: "GET",
    path: "/v1/messages/{message_id}",
    operationId: "getMessage",
    tags: ["Messages"],
    summary: "Read a message",
    description:
      "The message's current state, in the same shape as on creation. Poll it: first read about 2 s after sending, " +
      "then double the wait after each read, capped at 30 s, and stop at a final status (`delivered`, `undeliverable`, " +
      "`failed`, `unknown`). Test messages settle within about 30 s. Only the authenticated project's messages are readable.",
    protect: true,
    requestHeaders: ZConditionalReadHeaders,
  },
  responses: {
    200: {
      description: "The message, current state.",
      headers: CONDITIONAL_200_HEADERS,
      examples: {
        submitted: MESSAGE_EXAMPLES.submitted,
        delivered: MESSAGE_EXAMPLES.delivered,
        undeliverable: MESSAGE_EXAMPLES.undeliverable,
        failed: MESSAGE_EXAMPLES.failed,
        unknown: MESSAGE_EXAMPLES.unknown,
      },
    },
    304: NOT_MODIFIED,
    400: { description: "An unexpected query parameter.", codes: ["invalid_request"] },
    404: {
      description: "No such message in this project (absent and another project's look the same).",
      codes: ["message_not_found"],
    },
  },
  readTurn: true,
  conditional: { idParam: "message_id" },
};
