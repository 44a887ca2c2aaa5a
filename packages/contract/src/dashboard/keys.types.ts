import { z } from "zod";
import { ZCursor } from "./cursor.types.ts";
import { ZKey, ZNewKey, ZProject, ZProjectId, ZRefusal } from "./records.types.ts";

export const ZKeyId = z.string().max(40).meta({ description: "key_…" });

export const ZListKeysRequest = z.strictObject({ project_id: ZProjectId, cursor: ZCursor });
export const ZListKeysResponse = z.object({
  project: ZProject,
  keys: z.array(ZKey),
  next: z.string().nullable(),
});

export const ZCreateLiveKeyRequest = z.strictObject({
  project_id: ZProjectId,
  name: z.string().max(200).optional().meta({ description: "What to call the key (at most 64 characters)." }),
});
export const ZCreateLiveKeyResponse = z.discriminatedUnion("ok", [
  z.object({ ok: z.literal(true), key: ZNewKey }),
  ZRefusal,
]);

export const ZRevokeKeyRequest = z.strictObject({ project_id: ZProjectId, key_id: ZKeyId });
export const ZRevokeKeyResponse = z.discriminatedUnion("ok", [
  z.object({
    ok: z.literal(true),
    key: z.object({ id: z.string(), mode: z.enum(["test", "live"]), prefix: z.string() }),
    revoked_at: z.string(),
    already_revoked: z.boolean(),
  }),
  ZRefusal,
]);

export const ZRollTestKeyRequest = z.strictObject({ project_id: ZProjectId });
export const ZRollTestKeyResponse = z.discriminatedUnion("ok", [
  z.object({
    ok: z.literal(true),
    key: ZNewKey,
    revoked: z.array(z.object({ id: z.string(), prefix: z.string() })),
  }),
  ZRefusal,
]);

export const ZGetKeyRequest = z.strictObject({ project_id: ZProjectId, key_id: ZKeyId });
export const ZGetKeyResponse = z.discriminatedUnion("ok", [
  z.object({ ok: z.literal(true), key: ZKey }),
  ZRefusal,
]);
