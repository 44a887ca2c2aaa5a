// GET /v1/messages/{message_id} (spec 4.3). Absent ids, malformed ids and
// other projects' ids are indistinguishable: the same single indexed query
// runs for all of them, and all three answer message_not_found.
import { isId } from "@sms/crypto";
import { type MessageResource, toMessageResource } from "../model/message.ts";
import type { MessageStore } from "../store/index.ts";

export type GetMessageResult =
  | { ok: true; message: MessageResource }
  | { ok: false; code: "message_not_found" };

export async function getMessage(
  deps: { store: { messages: Pick<MessageStore, "readInProject"> } },
  input: { projectId: string; messageId: string },
): Promise<GetMessageResult> {
  // A malformed id still costs one lookup, so timing does not tell it apart.
  const id = isId("msg", input.messageId) ? input.messageId : "msg_invalid";
  const state = await deps.store.messages.readInProject(id, input.projectId);
  if (!state) return { ok: false, code: "message_not_found" };
  return { ok: true, message: toMessageResource(state) };
}
