// Spec 5: Bearer API keys. Keys are looked up by their SHA-256 hash (unique
// index) and the stored hash is compared in constant time. A short in-process
// cache keeps the hot path off the database; revocation and suspension take
// effect everywhere within its TTL (an entry is never served past it). Requests
// that miss the cache at once share one lookup, and a key in use is looked up
// again in the background once its entry is half its TTL old. A key's last use (api_keys.last_used_at,
// shown on the dashboard) is written at most once a minute per key and
// instance, by a conditional UPDATE that also skips the write when another
// instance recorded a use within the minute.
import { API_KEY_PATTERN, sha256HexSync, timingSafeEqual } from "@sms/crypto";
import { createCache } from "../cache.ts";
import type { AuthenticatedProject, KeyMode } from "../model/keys.ts";
import type { Clock } from "../ports.ts";
import type { KeyLookup, KeyStore } from "../store/index.ts";

export type Authentication =
  | { ok: true; project: AuthenticatedProject; mode: KeyMode; keyId: string }
  | { ok: false; code: "unauthorized" | "invalid_api_key" | "project_suspended" };

type Lookup = Authentication;

/**
 * What a found key authenticates: its project, or the refusal of a revoked key
 * (invalid_api_key) or a suspended project. The one reading of a key's row, by
 * hash here and by an MCP session's key id (mcp-session-keys.ts).
 */
export function authenticationOf(row: KeyLookup): Authentication {
  if (row.revokedAt) return { ok: false, code: "invalid_api_key" };
  if (row.project.suspendedAt) return { ok: false, code: "project_suspended" };
  return {
    ok: true,
    mode: row.mode,
    keyId: row.id,
    project: {
      id: row.project.id,
      sender: row.project.sender,
      senderBrandId: row.project.senderBrandId,
      claimed: row.project.claimedAt !== null,
    },
  };
}

const MAX_CACHE_ENTRIES = 10_000;
/** How stale api_keys.last_used_at may be. */
export const KEY_USE_RESOLUTION_MS = 60_000;

/** Splits `Authorization`; returns the credentials, or the failure code. */
function parseAuthorization(
  header: string | null,
): { key: string } | { code: "unauthorized" | "invalid_api_key" } {
  if (header === null || header.trim() === "") return { code: "unauthorized" };
  const match = /^(\S+)(?:\s+(.*))?$/.exec(header.trim());
  const scheme = match?.[1] ?? "";
  const credentials = (match?.[2] ?? "").trim();
  if (scheme.toLowerCase() !== "bearer") return { code: "invalid_api_key" };
  if (credentials === "") return { code: "unauthorized" };
  return { key: credentials };
}

/** A bearer key and its SHA-256 hex, as a caller that hashed it already (the throttle) passes it on. */
export type KeyAndHash = { key: string; keyHash: string };

export type ApiKeyAuthenticator = {
  /**
   * `hashed`: the header's key hashed by the caller already; used only when
   * its key is the one this header carries, otherwise the key is hashed here.
   */
  authenticate(authorizationHeader: string | null, hashed?: KeyAndHash): Promise<Authentication>;
  /** Drops cached lookups (operator tools call this after a change). */
  forget(): void;
};

export function createApiKeyAuthenticator(options: {
  store: { keys: Pick<KeyStore, "lookup" | "touch"> };
  clock: Clock;
  cacheTtlMs: number;
}): ApiKeyAuthenticator {
  /** Lookups by key hash, fresh for cacheTtlMs; the requests that miss together share one lookup. */
  const cache = createCache<string, Lookup>({
    namespace: "api_keys",
    maxEntries: MAX_CACHE_ENTRIES,
    ttlMs: options.cacheTtlMs,
  });
  /** When this instance last wrote each key's last use (epoch ms): at most once a minute. */
  const touched = createCache<string, number>({
    namespace: "api_key_uses",
    maxEntries: MAX_CACHE_ENTRIES,
    ttlMs: KEY_USE_RESOLUTION_MS,
  });

  /** Records the key's use, at most once a minute; a failed write never fails the request. */
  async function recordUse(keyId: string, now: number): Promise<void> {
    if (touched.get(keyId, now) !== undefined) return;
    touched.set(keyId, now, now);
    try {
      await options.store.keys.touch(keyId, new Date(now), new Date(now - KEY_USE_RESOLUTION_MS));
    } catch {
      // Only a display value: the next minute tries again.
      touched.delete(keyId);
    }
  }

  /**
   * The key's lookup, shared (single flight): the requests that miss the cache together (every request
   * of a busy key, each time its entry reaches the TTL) wait for one lookup instead of each taking a
   * connection for its own. A lookup that began before forget() does not fill the cache after it.
   */
  const sharedLookup = (keyHash: string, now: number): Promise<Lookup> =>
    cache.load(
      keyHash,
      now,
      () => lookup(keyHash),
      () => options.cacheTtlMs > 0,
    );

  async function lookup(keyHash: string): Promise<Lookup> {
    const row = await options.store.keys.lookup(keyHash);
    if (!row || !timingSafeEqual(row.keyHash, keyHash)) return { ok: false, code: "invalid_api_key" };
    return authenticationOf(row);
  }

  return {
    async authenticate(header, hashed) {
      const parsed = parseAuthorization(header);
      if ("code" in parsed) return { ok: false, code: parsed.code };
      if (!API_KEY_PATTERN.test(parsed.key)) return { ok: false, code: "invalid_api_key" };
      const keyHash = hashed?.key === parsed.key ? hashed.keyHash : sha256HexSync(parsed.key);
      const now = options.clock.now().getTime();
      const cached = cache.entry(keyHash, now);
      // Served from the cache for less than the TTL (and never if the clock went back).
      if (cached?.fresh) {
        // Past half its TTL, the entry is looked up again in the background (one lookup: sharedLookup)
        // while it still serves: a busy key's requests never wait for it (it may queue behind a full pool).
        if (now - cached.storedAt >= options.cacheTtlMs / 2) {
          sharedLookup(keyHash, now).catch(() => {
            // The entry serves until its TTL; a request after that looks up (and fails) itself.
          });
        }
        if (cached.value.ok) await recordUse(cached.value.keyId, now);
        return cached.value;
      }
      const result = await sharedLookup(keyHash, now);
      if (result.ok) await recordUse(result.keyId, now);
      return result;
    },
    forget() {
      cache.clear();
    },
  };
}
