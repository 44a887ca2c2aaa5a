// The dashboard session in the browser: a random token (the procedures keep
// its hash) in a sealed, HttpOnly, SameSite=Lax cookie on Path=/dashboard.
import type { Procedures, Viewer } from "@sms/contract";
import type { CookieSealer } from "@sms/crypto";
import {
  clearCookieHeader,
  dashboardCookieName,
  readCookie,
  SESSION_COOKIE_PATH,
  setCookieHeader,
} from "./cookies.ts";

export type Sessions = ReturnType<typeof sessionCookies>;

export function sessionCookies(options: {
  sealer: CookieSealer;
  clock: { now(): Date };
  secure: boolean;
  /** A provider this server offers now: a session from one it no longer offers is none. */
  offered(provider: string): boolean;
}) {
  const { sealer, clock, secure } = options;
  const name = dashboardCookieName(secure);

  /** The session's token from the cookie (sealed: a forged or foreign cookie is simply absent). */
  async function token(request: Request): Promise<string | null> {
    const opened = await sealer.open<{ t?: unknown }>(
      name,
      readCookie(request.headers.get("cookie"), name),
      clock.now(),
    );
    return opened && typeof opened.t === "string" ? opened.t : null;
  }

  return {
    token,
    /** Starts a session for `identity`: its Set-Cookie header. */
    async start(
      procedures: Procedures,
      identity: { provider: string; subject: string; name: string | null },
    ): Promise<string> {
      const started = await procedures.pages.sessions.start({ identity });
      const maxAgeMs = Date.parse(started.expires_at) - clock.now().getTime();
      const value = await sealer.seal(name, { t: started.token }, maxAgeMs, clock.now());
      return setCookieHeader(name, value, { maxAgeMs, secure, path: SESSION_COOKIE_PATH });
    },
    clear: () => clearCookieHeader(name, secure, SESSION_COOKIE_PATH),
    /** This browser's live session, if any, and whether it sent a session cookie at all. */
    async resume(
      request: Request,
      procedures: Procedures,
    ): Promise<{ viewer: Viewer | null; hadCookie: boolean }> {
      const hadCookie = readCookie(request.headers.get("cookie"), name) !== undefined;
      const found = await token(request);
      if (!found) return { viewer: null, hadCookie };
      const resumed = await procedures.pages.sessions.resume({ token: found });
      if (!resumed.ok || !options.offered(resumed.viewer.identity.provider))
        return { viewer: null, hadCookie };
      return { viewer: resumed.viewer, hadCookie };
    },
    csrfToken: (viewer: Viewer) => sealer.csrfToken(`dashboard:${viewer.sessionId}`),
    verifyCsrf: (viewer: Viewer, form: URLSearchParams) =>
      sealer.verifyCsrf(`dashboard:${viewer.sessionId}`, form.get("csrf_token") ?? ""),
  };
}
