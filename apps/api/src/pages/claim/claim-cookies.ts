// The claim flow's short-lived cookies, sealed with AES-256-GCM (so they are
// both secret and tamper-proof), and the CSRF token of the confirmation form.
//
//   sign-in cookie   set when sign-in starts, read once by the provider's
//                    callback: state, nonce, PKCE verifier, provider and the
//                    claim link (10 minutes)
//   identity cookie  set after a verified sign-in: provider, subject, email,
//                    name, the claim link and a random session id the CSRF
//                    token is bound to (15 minutes)
//
// Keys are derived with HKDF from CLAIM_COOKIE_SECRET, one per purpose. The
// cookie's name is the AEAD's associated data, so one cookie cannot be
// replayed as the other; the expiry is inside the sealed payload.
import { randomToken, timingSafeEqual } from "@sms/crypto";

export const SIGN_IN_COOKIE_MAX_AGE_MS = 10 * 60_000;
export const IDENTITY_COOKIE_MAX_AGE_MS = 15 * 60_000;

/** Paths the cookies are sent to: the claim pages only. */
export const COOKIE_PATH = "/claim";

export type SignInTransaction = {
  provider: string;
  /** The claim token from the link, so the flow can return to it ("" for a dashboard sign-in). */
  token: string;
  state: string;
  nonce: string | null;
  codeVerifier: string;
  /**
   * What the sign-in is for: a claim (absent, as before) or the dashboard,
   * which shares this callback so that no other redirect URI has to be
   * registered with the providers.
   */
  purpose?: "dashboard";
  /** Dashboard: the page to return to after signing in. */
  returnTo?: string;
};

export type SignedInIdentity = {
  provider: string;
  subject: string;
  email: string | null;
  name: string | null;
  token: string;
  /** Random per sign-in; the CSRF token is an HMAC of it. */
  sessionId: string;
};

export type CookieNames = { signIn: string; identity: string };

export function cookieNames(secure: boolean): CookieNames {
  // The __Secure- prefix makes browsers refuse the cookie unless it is Secure
  // and set over HTTPS.
  const prefix = secure ? "__Secure-" : "";
  return { signIn: `${prefix}sms_claim_signin`, identity: `${prefix}sms_claim_identity` };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return null;
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

const IV_BYTES = 12;
/** Longer values are refused before any decryption is attempted. */
const MAX_COOKIE_VALUE_LENGTH = 3000;

export type CookieSealer = {
  seal(name: string, payload: object, maxAgeMs: number, now: Date): Promise<string>;
  /** The payload, or null when the value is missing, forged, for another cookie or expired. */
  open<T>(name: string, value: string | undefined, now: Date): Promise<T | null>;
  csrfToken(sessionId: string): Promise<string>;
  verifyCsrf(sessionId: string, token: string): Promise<boolean>;
};

export async function createCookieSealer(secret: string): Promise<CookieSealer> {
  if (secret.length < 32) throw new RangeError("the cookie secret must be at least 32 characters");
  const material = await crypto.subtle.importKey("raw", encoder.encode(secret), "HKDF", false, ["deriveKey"]);
  const derive = (info: string, algorithm: AesKeyGenParams | HmacKeyGenParams, usages: KeyUsage[]) =>
    crypto.subtle.deriveKey(
      { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: encoder.encode(info) },
      material,
      algorithm,
      false,
      usages,
    );
  const aesKey = await derive("sms-claim-cookie-v1", { name: "AES-GCM", length: 256 }, [
    "encrypt",
    "decrypt",
  ]);
  const csrfKey = await derive("sms-claim-csrf-v1", { name: "HMAC", hash: "SHA-256", length: 256 }, ["sign"]);

  async function csrfToken(sessionId: string): Promise<string> {
    const mac = await crypto.subtle.sign("HMAC", csrfKey, encoder.encode(`confirm:${sessionId}`));
    return toBase64Url(new Uint8Array(mac));
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
      return toBase64Url(bytes);
    },
    async open<T>(name: string, value: string | undefined, now: Date): Promise<T | null> {
      if (!value || value.length > MAX_COOKIE_VALUE_LENGTH) return null;
      const bytes = fromBase64Url(value);
      if (!bytes || bytes.length <= IV_BYTES + 16) return null;
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

/** A fresh secret for development, when CLAIM_COOKIE_SECRET is not set. */
export function generateCookieSecret(): string {
  return randomToken(32);
}

/** The value of cookie `name` in a Cookie header (the first one, if repeated). */
export function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const index = part.indexOf("=");
    if (index < 0) continue;
    if (part.slice(0, index).trim() === name) return part.slice(index + 1).trim();
  }
  return undefined;
}

export function setCookieHeader(
  name: string,
  value: string,
  options: { maxAgeMs: number; secure: boolean; path?: string },
): string {
  const maxAge = Math.max(0, Math.floor(options.maxAgeMs / 1000));
  return `${name}=${value}; Path=${options.path ?? COOKIE_PATH}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${options.secure ? "; Secure" : ""}`;
}

export function clearCookieHeader(name: string, secure: boolean, path?: string): string {
  return setCookieHeader(name, "", { maxAgeMs: 0, secure, ...(path ? { path } : {}) });
}
