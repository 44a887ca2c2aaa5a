import { z } from "zod";
import { KEY_MODES } from "../vocabulary.ts";
import { ZCursor } from "./cursor.types.ts";
import { ZDay, ZProjectId } from "./records.types.ts";

/** One API request as the console shows it: never a body value, a number, a code or a key. */
export const ZRequestRow = z.object({
  id: z.string().meta({ description: "req_…, the X-Request-Id the caller saw." }),
  method: z.string(),
  route: z.string().meta({ description: "The route template, e.g. /v1/messages/{id}." }),
  status: z.number(),
  error_code: z.string().nullable(),
  idempotency_key: z.string().nullable(),
  replayed: z.boolean(),
  duration_ms: z.number(),
  mode: z.enum(KEY_MODES).nullable(),
  key_id: z.string().nullable(),
  key_prefix: z.string().nullable(),
  key_name: z.string().nullable(),
  message_id: z.string().nullable(),
  verification_id: z.string().nullable(),
  created_at: z.string(),
});

export const ZListRequestsRequest = z.strictObject({
  project_id: ZProjectId,
  status_class: z.enum(["2xx", "4xx", "5xx"]).optional(),
  error_code: z.string().max(64).optional(),
  route: z.string().max(128).optional(),
  mode: z.enum(KEY_MODES).optional(),
  from: ZDay.optional(),
  to: ZDay.optional(),
  cursor: ZCursor,
});
export const ZListRequestsResponse = z.object({
  requests: z.array(ZRequestRow),
  next: z.string().nullable(),
});

export const ZGetRequestRequest = z.strictObject({ project_id: ZProjectId, request_id: z.string().max(40) });
export const ZGetRequestResponse = z.object({ request: ZRequestRow });

export const ZMessageRequestsRequest = z.strictObject({
  project_id: ZProjectId,
  message_id: z.string().max(40),
});
export const ZMessageRequestsResponse = z.object({ requests: z.array(ZRequestRow) });

/** No control characters: none is in an id or a header's key, and PostgreSQL's text cannot hold a NUL. */
export const ZSearchRequest = z.strictObject({
  project_id: ZProjectId,
  query: z
    .string()
    .max(1000)
    .regex(/^\P{Cc}*$/u, { error: "must not contain control characters" }),
});
export const ZSearchResponse = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("message"), id: z.string() }),
  z.object({ kind: z.literal("verification"), id: z.string() }),
  z.object({ kind: z.literal("request"), id: z.string() }),
  z.object({ kind: z.literal("idempotency_key"), requests: z.array(ZRequestRow) }),
  z.object({ kind: z.literal("not_found") }),
  /** The query held a whole API key: not searched for. */
  z.object({ kind: z.literal("whole_key_given") }),
]);
