import { z } from "zod";
import { ZProject, ZProjectId, ZRefusal, ZSenderRequest } from "./records.types.ts";

export const ZSenderRequestRequest = z.strictObject({ project_id: ZProjectId });
export const ZSenderResponse = z.object({ project: ZProject, requests: z.array(ZSenderRequest) });

export const ZRequestSenderRequest = z.strictObject({
  project_id: ZProjectId,
  name: z.string().max(40),
  purpose: z.string().max(2000),
});
export const ZRequestSenderResponse = z.discriminatedUnion("ok", [
  z.object({ ok: z.literal(true), request: ZSenderRequest }),
  ZRefusal,
]);
