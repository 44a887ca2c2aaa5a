// The records the dashboard's and the operator's procedures return, shared by
// both routers: snake_case and ISO 8601 UTC timestamps like the public API,
// so they read the same through the server-side caller and over the wire.
// What a message record holds is what GET /v1/messages/{id} returns plus
// mode and template: never the text or the full number (spec 1.8).
import { z } from "zod";
import { isFilterDay, KEY_MODES, MESSAGE_STATUSES } from "../vocabulary.ts";

const ZTimestamp = z.string().meta({ description: "ISO 8601 UTC." });

export const ZProjectId = z.string().max(40).meta({ description: "prj_…" });

/** A day a log is filtered by (the messages' and the requests' from/to): the domain's isFilterDay. */
export const ZDay = z
  .string()
  .refine(isFilterDay, { error: "must be a day (YYYY-MM-DD) from 1970-01-01 to 9999-12-30" })
  .meta({ description: "A UTC day, YYYY-MM-DD." });

export const ZProject = z.object({
  id: z.string(),
  /** What the owner calls it; null: not named. */
  name: z.string().nullable(),
  created_at: ZTimestamp,
  claimed_at: ZTimestamp.nullable(),
  suspended_at: ZTimestamp.nullable(),
  /** null: the shared default sender. */
  sender: z.string().nullable(),
  sender_brand_id: z.number().nullable(),
  credit_balance: z.number(),
});

export const ZKey = z.object({
  id: z.string(),
  mode: z.enum(KEY_MODES),
  prefix: z.string().meta({ description: "The first 12 characters; never the key." }),
  name: z.string().nullable(),
  created_at: ZTimestamp,
  revoked_at: ZTimestamp.nullable(),
  last_used_at: ZTimestamp.nullable(),
});

/** A key just made: the only time the whole key is returned. */
export const ZNewKey = z.object({
  id: z.string(),
  mode: z.enum(KEY_MODES),
  prefix: z.string(),
  api_key: z.string(),
});

export const ZLedgerEntry = z.object({
  id: z.string(),
  kind: z.enum(["grant_paid", "grant_free", "reservation", "refund"]),
  amount: z.number(),
  message_id: z.string().nullable(),
  note: z.string().nullable(),
  created_at: ZTimestamp,
  /** false: the message was never kept (a live send refunded on 503): nothing to link to. */
  message_kept: z.boolean().optional(),
});

export const ZFreeTier = z.object({
  applies: z.boolean(),
  limit: z.number(),
  used_today: z.number(),
  remaining_today: z.number(),
  reset_at: ZTimestamp,
});

export const ZCredits = z.object({
  balance: z.number(),
  ledger_sum: z.number(),
  consistent: z.boolean(),
  has_paid_credits: z.boolean(),
});

export const ZMessageRow = z.object({
  id: z.string(),
  mode: z.enum(KEY_MODES),
  to: z.string().meta({ description: "Masked: +9955••••••12." }),
  template: z.string(),
  status: z.enum(MESSAGE_STATUSES),
  segments: z.number().nullable(),
  error_code: z.string().nullable(),
  created_at: ZTimestamp,
  updated_at: ZTimestamp,
});

export const ZMessageDetail = ZMessageRow.extend({
  locale: z.string(),
  sender: z.string(),
  encoding: z.string().nullable(),
  error_message: z.string().nullable(),
  credits_reserved: z.number(),
  api_key_id: z.string().nullable(),
  submitted_at: ZTimestamp.nullable(),
  text_purged_at: ZTimestamp.nullable(),
});

export const ZMessageEvent = z.object({
  status: z.enum(MESSAGE_STATUSES),
  error_code: z.string().nullable(),
  at: ZTimestamp,
});

export const ZSenderRequest = z.object({
  id: z.string(),
  project_id: z.string(),
  name: z.string(),
  purpose: z.string(),
  status: z.enum(["pending", "approved", "refused"]),
  requested_by: z.string(),
  decided_by: z.string().nullable(),
  decided_at: ZTimestamp.nullable(),
  refusal_reason: z.string().nullable(),
  created_at: ZTimestamp,
});

export const ZAuditEntry = z.object({
  id: z.string(),
  actor: z.string(),
  action: z.string(),
  project_id: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
  created_at: ZTimestamp,
});

/** A refusal of an action: the stable code and the sentence to show. */
export const ZRefusal = z.object({ ok: z.literal(false), code: z.string(), message: z.string() });
