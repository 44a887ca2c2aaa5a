import { z } from "zod";
import { KEY_MODES, MESSAGE_STATUSES } from "../vocabulary.ts";
import { ZCursor } from "./cursor.types.ts";
import { ZCredits, ZFreeTier, ZProject, ZProjectId, ZRefusal, ZSenderRequest } from "./records.types.ts";

export const ZListProjectsRequest = z.strictObject({ cursor: ZCursor });
export const ZListProjectsResponse = z.object({
  projects: z.array(ZProject.extend({ messages_today: z.number(), pending_sender: z.string().nullable() })),
  next: z.string().nullable(),
});

export const ZProjectRequest = z.strictObject({ project_id: ZProjectId });
export const ZProjectOverviewResponse = z.object({
  project: ZProject,
  credits: ZCredits,
  free_tier: ZFreeTier,
  pending_sender_request: ZSenderRequest.nullable(),
  messages_today: z.number(),
});

export const ZUsageRequest = z.strictObject({ project_id: ZProjectId, mode: z.enum(KEY_MODES).optional() });
const ZByStatus = z.record(z.enum(MESSAGE_STATUSES), z.number());
export const ZUsageResponse = z.object({
  days: z.array(
    z.object({ day: z.string(), by_status: ZByStatus, messages: z.number(), segments: z.number() }),
  ),
  totals: z.object({ messages: z.number(), segments: z.number(), by_status: ZByStatus }),
  /** delivered ÷ messages in a final status; null when none is final. */
  delivery_rate: z.number().nullable(),
  /** The same rate per mode, whatever `mode` filters (test keys' simulator failures never lower the live rate). */
  delivery_rate_by_mode: z.object({ live: z.number().nullable(), test: z.number().nullable() }),
});

export const ZSetProjectNameRequest = z.strictObject({ project_id: ZProjectId, name: z.string().max(1000) });
export const ZSetProjectNameResponse = z.discriminatedUnion("ok", [
  z.object({ ok: z.literal(true), project: ZProject }),
  ZRefusal,
]);
