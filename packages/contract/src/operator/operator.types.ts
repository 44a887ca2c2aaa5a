import { z } from "zod";
import { ZCursor } from "../dashboard/cursor.types.ts";
import {
  ZAuditEntry,
  ZCredits,
  ZFreeTier,
  ZKey,
  ZNewKey,
  ZProject,
  ZProjectId,
  ZRefusal,
  ZSenderRequest,
} from "../dashboard/records.types.ts";
import { KEY_MODES, MESSAGE_STATUSES } from "../vocabulary.ts";

const ok = <T extends z.ZodRawShape>(shape: T) =>
  z.discriminatedUnion("ok", [z.object({ ok: z.literal(true), ...shape }), ZRefusal]);

export const ZFindProjectsRequest = z.strictObject({ query: z.string().max(300) });
export const ZFindProjectsResponse = ok({
  by: z.enum(["project_id", "key_prefix", "email"]),
  projects: z.array(
    ZProject.extend({ account_id: z.string().nullable(), account_email: z.string().nullable() }),
  ),
});

export const ZProjectRequest = z.strictObject({ project_id: ZProjectId });
export const ZMessageCount = z.object({
  mode: z.enum(KEY_MODES),
  status: z.enum(MESSAGE_STATUSES),
  last_24h: z.number(),
  last_7d: z.number(),
});
export type TMessageCount = z.output<typeof ZMessageCount>;

export const ZDescribeProjectResponse = ok({
  project: ZProject.extend({
    account_id: z.string().nullable(),
    daily_credit_cap: z
      .number()
      .nullable()
      .meta({ description: "Live credits a UTC day may reserve; null: no cap." }),
  }),
  credits: ZCredits,
  free_tier: ZFreeTier,
  keys: z.array(ZKey),
  messages: z.array(ZMessageCount),
});

export const ZSuspensionRequest = z.strictObject({
  project_id: ZProjectId,
  reason: z.string().max(1000).optional(),
});
export const ZSuspensionResponse = ok({
  project_id: z.string(),
  suspended_at: z.string().nullable(),
  changed: z.boolean(),
});

export const ZGrantCreditsRequest = z.strictObject({
  project_id: ZProjectId,
  amount: z.number().int(),
  reference: z.string().max(300).optional(),
});
export const ZGrantCreditsResponse = ok({
  project_id: z.string(),
  amount: z.number(),
  reference: z.string().nullable(),
  entry_id: z.string(),
  balance: z.number(),
  already_granted: z.boolean(),
});

export const ZCreateLiveKeyRequest = z.strictObject({ project_id: ZProjectId });
export const ZCreateLiveKeyResponse = ok({ project_id: z.string(), key: ZNewKey });

/**
 * A key named by its id or by its prefix (exactly one; the domain refuses
 * otherwise). Long enough that a whole pasted key reaches the domain, which
 * refuses it as whole_key_given rather than as a malformed id.
 */
export const ZRevokeKeyRequest = z.strictObject({
  key_id: z.string().max(200).optional(),
  prefix: z.string().max(200).optional(),
  project_id: ZProjectId.optional(),
});
export const ZRevokeKeyResponse = ok({
  project_id: z.string(),
  key: z.object({ id: z.string(), mode: z.enum(KEY_MODES), prefix: z.string() }),
  revoked_at: z.string(),
  already_revoked: z.boolean(),
});

export const ZSetSenderRequest = z.strictObject({
  project_id: ZProjectId,
  name: z.string().max(100),
  brand_id: z.number().int().optional(),
});
export const ZSetSenderResponse = ok({
  project_id: z.string(),
  sender: z.string(),
  brand_id: z.number(),
  validated: z.boolean(),
  changed: z.boolean(),
});

export const ZClearSenderResponse = ok({ project_id: z.string(), changed: z.boolean() });

export const ZRotateKeysRequest = z.strictObject({ batch_size: z.number().int() });
export const ZRotateKeysResponse = ok({
  current_key_id: z.string(),
  rotated: z.number(),
  failed: z.number(),
  remaining: z.number(),
  fingerprints_on_old_keys: z.number(),
});

export const ZGetKeyRequest = z.strictObject({ project_id: ZProjectId, key_id: z.string().max(40) });
export const ZGetKeyResponse = ok({ key: ZKey });

export const ZListSenderRequestsRequest = z.strictObject({
  status: z.enum(["pending", "approved", "refused"]).default("pending"),
  cursor: ZCursor,
});
export const ZListSenderRequestsResponse = z.object({
  requests: z.array(ZSenderRequest),
  next: z.string().nullable(),
});

export const ZApproveSenderRequest = z.strictObject({
  request_id: z.string().max(40),
  brand_id: z.number().int().positive().optional(),
});
export const ZApproveSenderResponse = ok({
  request_id: z.string(),
  project_id: z.string(),
  sender: z.string(),
  brand_id: z.number(),
  validated: z.boolean(),
});

export const ZRefuseSenderRequest = z.strictObject({
  request_id: z.string().max(40),
  reason: z.string().max(1000),
});
export const ZRefuseSenderResponse = ok({ request_id: z.string(), project_id: z.string() });

export const ZAuditRequest = z.strictObject({ project_id: ZProjectId.optional(), cursor: ZCursor });
export const ZAuditResponse = ok({ entries: z.array(ZAuditEntry), next: z.string().nullable() });

export const ZSetDailyCreditCapRequest = z.strictObject({
  project_id: z.string().max(40),
  cap: z.number().int().nullable(),
});
export const ZSetDailyCreditCapResponse = z.discriminatedUnion("ok", [
  z.object({ ok: z.literal(true), project_id: z.string(), daily_credit_cap: z.number().nullable() }),
  ZRefusal,
]);
