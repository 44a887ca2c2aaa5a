// The pages' cookies, all sealed by @sms/crypto's cookie sealer (one secret,
// CLAIM_COOKIE_SECRET), all HttpOnly and SameSite=Lax (Secure and __Secure-
// over https):
//
//   sign-in cookie   set when sign-in starts, read once by the provider's
//                    callback: state, nonce, PKCE verifier, provider and the
//                    claim link (10 minutes)
//   identity cookie  set after a verified sign-in: provider, subject, email,
//                    name, the claim link and a random session id the CSRF
//                    token is bound to (15 minutes)
//   dashboard cookie the dashboard session's random token (Path=/dashboard;
//                    as long as the session lasts)
//
// Keys are derived from CLAIM_COOKIE_SECRET (see packages/crypto/src/sealer.ts).
import { randomToken } from "@sms/crypto";

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

/** The dashboard session cookie's name and path. */
export const dashboardCookieName = (secure: boolean) => `${secure ? "__Secure-" : ""}sms_dashboard`;
export const SESSION_COOKIE_PATH = "/dashboard";

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

/** The response with these Set-Cookie headers added. */
export function withCookies(response: Response, cookies: readonly string[]): Response {
  for (const cookie of cookies) response.headers.append("Set-Cookie", cookie);
  return response;
}
