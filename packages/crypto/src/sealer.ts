// Sealed cookies: a JSON payload with an expiry, encrypted and authenticated
// with AES-256-GCM, so a cookie is both secret and tamper-proof; and CSRF
// tokens bound to a session id. Keys are derived with HKDF from one secret,
// one per purpose (the claim flow, the dashboard), so a cookie of one purpose
// never opens under another. The cookie's name is the AEAD's associated data,
// so one cookie cannot be replayed as another; the expiry is inside the
// sealed payload.
import { base64ToBytes, bytesToBase64Url } from "./encoding.ts";
import { timingSafeEqual } from "./secret.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Longer values are refused before any decryption is attempted. */
const MAX_COOKIE_VALUE_LENGTH = 3000;
/** The shortest secret accepted (characters). */
export const MIN_COOKIE_SECRET_LENGTH = 32;

export type CookieSealer = {
  seal(name: string, payload: object, maxAgeMs: number, now: Date): Promise<string>;
  /** The payload, or null when the value is missing, forged, for another cookie or expired. */
  open<T>(name: string, value: string | undefined, now: Date): Promise<T | null>;
  csrfToken(sessionId: string): Promise<string>;
  verifyCsrf(sessionId: string, token: string): Promise<boolean>;
};

/**
 * A sealer for one purpose. `purpose` picks the derived keys: the claim flow
 * uses "claim" (HKDF info "sms-claim-cookie-v1" and "sms-claim-csrf-v1").
 */
export async function createCookieSealer(
  secret: string,
  options: { purpose?: string } = {},
): Promise<CookieSealer> {
  if (secret.length < MIN_COOKIE_SECRET_LENGTH) {
    throw new RangeError(`the cookie secret must be at least ${MIN_COOKIE_SECRET_LENGTH} characters`);
  }
  const purpose = options.purpose ?? "claim";
  const material = await crypto.subtle.importKey("raw", encoder.encode(secret), "HKDF", false, ["deriveKey"]);
  const derive = (info: string, algorithm: AesKeyGenParams | HmacKeyGenParams, usages: KeyUsage[]) =>
    crypto.subtle.deriveKey(
      { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: encoder.encode(info) },
      material,
      algorithm,
      false,
      usages,
    );
  const aesKey = await derive(`sms-${purpose}-cookie-v1`, { name: "AES-GCM", length: 256 }, [
    "encrypt",
    "decrypt",
  ]);
  const csrfKey = await derive(`sms-${purpose}-csrf-v1`, { name: "HMAC", hash: "SHA-256", length: 256 }, [
    "sign",
  ]);

  async function csrfToken(sessionId: string): Promise<string> {
    const mac = await crypto.subtle.sign("HMAC", csrfKey, encoder.encode(`confirm:${sessionId}`));
    return bytesToBase64Url(new Uint8Array(mac));
  }

  return {
    async seal(name, payload, maxAgeMs, now) {
      const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
      const plaintext = encoder.encode(JSON.stringify({ exp: now.getTime() + maxAgeMs, data: payload }));
      const sealed = await crypto.subtle.encrypt(
        { name: "AES-GCM", iv, additionalData: encoder.encode(name) },
        aesKey,
        plaintext,
      );
      const bytes = new Uint8Array(IV_BYTES + sealed.byteLength);
      bytes.set(iv);
      bytes.set(new Uint8Array(sealed), IV_BYTES);
      return bytesToBase64Url(bytes);
    },
    async open<T>(name: string, value: string | undefined, now: Date): Promise<T | null> {
      if (!value || value.length > MAX_COOKIE_VALUE_LENGTH || !/^[A-Za-z0-9_-]+$/.test(value)) return null;
      const bytes = base64ToBytes(value);
      if (!bytes || bytes.length <= IV_BYTES + TAG_BYTES) return null;
      try {
        const plaintext = await crypto.subtle.decrypt(
          { name: "AES-GCM", iv: bytes.subarray(0, IV_BYTES), additionalData: encoder.encode(name) },
          aesKey,
          bytes.subarray(IV_BYTES),
        );
        const parsed = JSON.parse(decoder.decode(plaintext)) as { exp?: unknown; data?: unknown };
        if (typeof parsed.exp !== "number" || parsed.exp <= now.getTime()) return null;
        if (parsed.data === null || typeof parsed.data !== "object") return null;
        return parsed.data as T;
      } catch {
        return null;
      }
    },
    csrfToken,
    async verifyCsrf(sessionId, token) {
      return timingSafeEqual(await csrfToken(sessionId), token);
    },
  };
}
