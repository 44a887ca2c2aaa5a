import { z } from "zod";

const ZTimestamp = z.string().meta({ description: "ISO 8601 UTC." });
/** A claim token as the link carries it (the procedures hash it; it is never stored or logged). */
const ZClaimToken = z.string().regex(/^[A-Za-z0-9_-]{43}$/);
const ZIdentityRef = z.object({ provider: z.string().max(20), subject: z.string().max(255) });

export const ZClaimIdentity = ZIdentityRef.extend({
  email: z.string().max(320).nullable(),
  name: z.string().max(500).nullable(),
});

export const ZClaimRefusal = z.discriminatedUnion("code", [
  z.object({
    ok: z.literal(false),
    code: z.literal("claimed_by_you"),
    project_id: z.string(),
    account_id: z.string(),
  }),
  z.object({ ok: z.literal(false), code: z.enum(["used", "expired", "unknown"]) }),
]);

export const ZDescribeClaimRequest = z.strictObject({
  token: ZClaimToken,
  identity: ZIdentityRef.optional(),
});
export const ZDescribeClaimResponse = z.union([
  z.object({
    ok: z.literal(true),
    summary: z.object({
      project_id: z.string(),
      project_created_at: ZTimestamp,
      messages_sent: z.number(),
      key_prefix: z.string().nullable(),
      expires_at: ZTimestamp,
    }),
  }),
  ZClaimRefusal,
]);

export const ZClaimRequest = z.strictObject({ token: ZClaimToken, identity: ZClaimIdentity });
export const ZClaimResponse = z.union([
  z.object({
    ok: z.literal(true),
    project_id: z.string(),
    account_id: z.string(),
    credits_granted: z.number(),
  }),
  ZClaimRefusal,
]);

export const ZStartSessionRequest = z.strictObject({
  identity: ZIdentityRef.extend({ name: z.string().max(500).nullable() }),
});
export const ZStartSessionResponse = z.object({ token: z.string(), expires_at: ZTimestamp });

export const ZSessionTokenRequest = z.strictObject({ token: z.string().max(100) });
export const ZResumeSessionResponse = z.union([
  z.object({
    ok: z.literal(true),
    viewer: z.object({
      sessionId: z.string(),
      identity: z.object({ provider: z.string(), subject: z.string(), name: z.string().nullable() }),
      actor: z.string(),
      accountId: z.string().nullable(),
      operator: z.boolean(),
      expiresAt: z.date(),
    }),
  }),
  z.object({ ok: z.literal(false), code: z.literal("no_session") }),
]);
export const ZEndSessionResponse = z.object({ ended: z.boolean() });
export const ZEndAllSessionsResponse = z.object({ ended: z.number() });

export const ZCountSignInResponse = z.union([
  z.object({ ok: z.literal(true) }),
  z.object({ ok: z.literal(false), retry_after_seconds: z.number() }),
]);
