// Operator: revoke one API key, named by its id or its displayable prefix.
// Idempotent: revoking a revoked key changes nothing and says so. The API's
// key cache (API_KEY_CACHE_TTL_MS) lets the key work for at most that long.
import { API_KEY_PATTERN, isId } from "@sms/crypto";
import {
  type OperatorDeps,
  type OperatorRefusal,
  checkCommon,
  refuse,
  writeAuditEntry,
} from "./operator-support.ts";

export const KEY_PREFIX_PATTERN = /^sk_(?:test|live)_[A-Za-z0-9_-]{4}$/;

export type RevokeApiKeyResult =
  | {
      ok: true;
      keyId: string;
      projectId: string;
      mode: "test" | "live";
      prefix: string;
      revokedAt: Date;
      /** True when the key was already revoked (nothing changed). */
      alreadyRevoked: boolean;
    }
  | OperatorRefusal;

export async function revokeApiKey(
  options: OperatorDeps & {
    keyId?: string;
    prefix?: string /** Narrows a prefix lookup. */;
    projectId?: string;
  },
): Promise<RevokeApiKeyResult> {
  const invalid = checkCommon(options, options.projectId);
  if (invalid) return invalid;
  const { keyId, prefix } = options;
  if ((keyId === undefined) === (prefix === undefined)) {
    return refuse(
      "invalid_input",
      "Name the key by exactly one of: its id (key_…) or its prefix (sk_live_XXXX).",
    );
  }
  for (const value of [keyId, prefix]) {
    if (value !== undefined && API_KEY_PATTERN.test(value)) {
      return refuse(
        "invalid_input",
        "That is a whole API key: never paste one into a command. Use its prefix, the first 12 characters.",
      );
    }
  }
  if (keyId !== undefined && !isId("key", keyId)) {
    return refuse("invalid_input", "The key id must look like key_ followed by 26 characters.");
  }
  if (prefix !== undefined && !KEY_PREFIX_PATTERN.test(prefix)) {
    return refuse("invalid_input", "The key prefix must be sk_test_ or sk_live_ followed by 4 characters.");
  }
  const now = options.clock.now();

  return options.prisma.$transaction(async (tx): Promise<RevokeApiKeyResult> => {
    const keys = await tx.apiKey.findMany({
      where:
        keyId !== undefined
          ? { id: keyId }
          : { prefix, ...(options.projectId ? { projectId: options.projectId } : {}) },
      select: { id: true, projectId: true, mode: true, prefix: true, revokedAt: true },
      take: 10,
    });
    const key = keys[0];
    if (!key) return refuse("key_not_found", `No API key ${keyId ?? prefix}.`);
    if (keys.length > 1) {
      return refuse(
        "key_ambiguous",
        `Several keys start with ${prefix} (${keys.map((k) => k.id).join(", ")}): revoke by key id instead.`,
      );
    }
    let revokedAt = key.revokedAt;
    const alreadyRevoked = revokedAt !== null;
    if (!revokedAt) {
      revokedAt = now;
      await tx.apiKey.updateMany({ where: { id: key.id, revokedAt: null }, data: { revokedAt: now } });
    }
    await writeAuditEntry(tx, {
      actor: options.actor,
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
