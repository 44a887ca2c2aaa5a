import { bytesToBase64Url, bytesToHex } from "./encoding.ts";

export type ApiKeyMode = "test" | "live";

/** getRandomValues refuses more than 65,536 bytes per call. */
const MAX_TOKEN_BYTES = 65_536;

/** `byteLength` random bytes as base64url without padding (32 bytes → 43 characters). */
export function randomToken(byteLength = 32): string {
  if (!Number.isInteger(byteLength) || byteLength < 1 || byteLength > MAX_TOKEN_BYTES) {
    throw new RangeError(`token length must be an integer from 1 to ${MAX_TOKEN_BYTES} bytes`);
  }
  return bytesToBase64Url(crypto.getRandomValues(new Uint8Array(byteLength)));
}

/** Random characters after `sk_<mode>_`: 32 bytes of entropy as base64url. */
const API_KEY_SECRET_LENGTH = 43;

/** Recognises a well-formed API key: `sk_test_` or `sk_live_` + 43 base64url characters. */
export const API_KEY_PATTERN = /^sk_(?:test|live)_[A-Za-z0-9_-]{43}$/;

/** Characters of a key shown in dashboards and lists: `sk_test_` + 4. */
export const API_KEY_PREFIX_LENGTH = 12;

/** A new API key, `sk_test_…` or `sk_live_…`. Show it once; store only `sha256Hex(key)`. */
export function newApiKey(mode: ApiKeyMode): string {
  if (mode !== "test" && mode !== "live") throw new TypeError('API key mode must be "test" or "live"');
  const key = `sk_${mode}_${randomToken(32)}`;
  // 32 bytes always encode to 43 characters; keep the invariant explicit.
  if (key.length !== 8 + API_KEY_SECRET_LENGTH) throw new Error("unexpected API key length");
  return key;
}

/**
 * The displayable, non-secret start of a key (`sk_test_AbCd`), stored beside
 * the hash so users can tell keys apart. Throws (without echoing the input) if
 * the value is not a well-formed key, so no other secret is stored by mistake.
 */
export function apiKeyPrefix(key: string): string {
  if (!API_KEY_PATTERN.test(key)) throw new TypeError("not a well-formed API key");
  return key.slice(0, API_KEY_PREFIX_LENGTH);
}

/** SHA-256 of the UTF-8 encoding of `text`, as 64 lowercase hex characters. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return bytesToHex(new Uint8Array(digest));
}

/**
 * String equality whose running time does not depend on where the strings
 * differ: every UTF-16 code unit of the longer string is visited. Unequal
 * lengths return false, after the same loop.
 */
export function timingSafeEqual(a: string, b: string): boolean {
  const length = Math.max(a.length, b.length);
  let diff = a.length ^ b.length;
  for (let i = 0; i < length; i++) {
    // charCodeAt past the end is NaN, which `|` and `^` treat as 0.
    diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  }
  return diff === 0;
}
