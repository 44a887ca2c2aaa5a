// Byte/text encodings used by ids, tokens and key specs. Written out by hand
// (rather than Buffer, atob/btoa or Uint8Array.fromBase64) so that Node 20 and
// Deno behave identically and decoding is strict: no whitespace, no stray
// characters, no silently ignored bits.

/** Lowercase Crockford base32 (no i, l, o, u). Byte order equals sort order. */
export const CROCKFORD32 = "0123456789abcdefghjkmnpqrstvwxyz";

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

export function bytesToHex(bytes: Uint8Array): string {
  let out = "";
  for (const byte of bytes) out += HEX[byte];
  return out;
}

function encodeBase64With(bytes: Uint8Array, alphabet: string, pad: boolean): string {
  let out = "";
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += alphabet[n >>> 18]! + alphabet[(n >>> 12) & 63]! + alphabet[(n >>> 6) & 63]! + alphabet[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += alphabet[n >>> 18]! + alphabet[(n >>> 12) & 63]! + (pad ? "==" : "");
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += alphabet[n >>> 18]! + alphabet[(n >>> 12) & 63]! + alphabet[(n >>> 6) & 63]! + (pad ? "=" : "");
  }
  return out;
}

/** Standard base64 (RFC 4648 §4) with `=` padding. */
export function bytesToBase64(bytes: Uint8Array): string {
  return encodeBase64With(bytes, BASE64, true);
}

/** base64url (RFC 4648 §5) without padding. */
export function bytesToBase64Url(bytes: Uint8Array): string {
  return encodeBase64With(bytes, BASE64URL, false);
}

const BASE64_VALUES: ReadonlyMap<string, number> = new Map([
  ...[...BASE64].map((c, i) => [c, i] as const),
  // The URL-safe alphabet is accepted too; the two differ only in 62 and 63.
  ["-", 62],
  ["_", 63],
]);

/**
 * Strict base64 / base64url decoding; padding optional. Returns null (never
 * throws, never echoes the input) when the text is not canonical base64.
 */
export function base64ToBytes(text: string): Uint8Array<ArrayBuffer> | null {
  const body = text.replace(/={1,2}$/, "");
  if (body.length !== text.length && text.length % 4 !== 0) return null;
  if (body.length % 4 === 1) return null;
  const out = new Uint8Array(Math.floor((body.length * 3) / 4));
  let acc = 0;
  let bits = 0;
  let o = 0;
  for (const char of body) {
    const value = BASE64_VALUES.get(char);
    if (value === undefined) return null;
    acc = ((acc << 6) | value) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >>> bits) & 0xff;
    }
  }
  // Leftover bits must be zero, otherwise two texts would decode to one key.
  if ((acc & ((1 << bits) - 1)) !== 0) return null;
  return out;
}
