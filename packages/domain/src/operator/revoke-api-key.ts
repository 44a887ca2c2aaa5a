// Operator: revoke one API key, named by its id or its displayable prefix.
// Idempotent: revoking a revoked key changes nothing and says so. The API's
// key cache (API_KEY_CACHE_TTL_MS) lets the key work for at most that long.
import { API_KEY_PATTERN, isId } from "@sms/crypto";
import type { KeyMode } from "../model/keys.ts";
import {
  checkCommon,
  invalid,
  type OperatorDeps,
  type OperatorInput,
  type OperatorRefusal,
} from "./operator-support.ts";

export const KEY_PREFIX_PATTERN = /^sk_(?:test|live)_[A-Za-z0-9_-]{4}$/;

export type RevokeApiKeyResult =
  | {
      ok: true;
      keyId: string;
      projectId: string;
      mode: KeyMode;
      prefix: string;
      revokedAt: Date;
      /** True when the key was already revoked (nothing changed). */
      alreadyRevoked: boolean;
    }
  | OperatorRefusal;

export async function revokeApiKey(
  deps: OperatorDeps,
  input: OperatorInput & {
    keyId?: string;
    prefix?: string;
    /** Narrows a prefix lookup; with a key id, the key must belong to it. */
    projectId?: string;
  },
): Promise<RevokeApiKeyResult> {
  const refused = checkCommon(input, input.projectId);
  if (refused) return refused;
  const { keyId, prefix } = input;
  if ((keyId === undefined) === (prefix === undefined)) return invalid("key");
  for (const value of [keyId, prefix]) {
    if (value !== undefined && API_KEY_PATTERN.test(value)) return { ok: false, code: "whole_key_given" };
  }
  if (keyId !== undefined && !isId("key", keyId)) return invalid("key_id");
  if (prefix !== undefined && !KEY_PREFIX_PATTERN.test(prefix)) return invalid("key_prefix");
  const now = deps.clock.now();

  return deps.store.transaction(async (tx): Promise<RevokeApiKeyResult> => {
    const keys =
      keyId !== undefined
        ? [await tx.keys.findById(keyId)].filter((key) => key !== null)
        : await tx.keys.findByPrefix(prefix ?? "", input.projectId ?? null);
    const key = keys[0];
    if (!key || (input.projectId !== undefined && key.projectId !== input.projectId)) {
      return { ok: false, code: "key_not_found" };
    }
    if (keys.length > 1) return { ok: false, code: "key_ambiguous", keyIds: keys.map((k) => k.id) };
    const alreadyRevoked = key.revokedAt !== null;
    const revokedAt = key.revokedAt ?? now;
    if (!alreadyRevoked) await tx.keys.revoke(key.id, now);
    await tx.audit.write({
      actor: input.actor,
      action: "api_key.revoked",
      projectId: key.projectId,
      details: { key_id: key.id, mode: key.mode, already_revoked: alreadyRevoked },
      now,
    });
    return {
      ok: true,
      keyId: key.id,
      projectId: key.projectId,
      mode: key.mode,
      prefix: key.prefix,
      revokedAt,
      alreadyRevoked,
    };
  });
}
