// What every page answer shares: the security headers of an HTML page, the
// document shell's response, redirects, and reading a browser's form post
// (same-origin check, size and type limits).
import type { Html } from "./html.ts";

/** The two families of pages: the claim flow (the dashboard's stylesheet, no script, no Referer) and the dashboard (own assets). */
export type PageKind = "claim" | "dashboard";

/**
 * No inline script, no external assets, no framing, no caching. Forms may
 * post to this origin only, and a sign-in form's redirect may continue to the
 * providers' authorization endpoints (`formActionOrigins`). The claim pages
 * carry their token in the URL: no Referer (also not on the stylesheet's
 * request), and no script at all.
 */
export function pageHeaders(
  kind: PageKind,
  formActionOrigins: readonly string[] = [],
): Record<string, string> {
  const formAction = ["'self'", ...formActionOrigins].join(" ");
  const common = {
    "Content-Type": "text/html; charset=utf-8",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "X-Robots-Tag": "noindex, nofollow",
    "Cross-Origin-Opener-Policy": "same-origin",
  };
  if (kind === "claim") {
    return {
      ...common,
      "Content-Security-Policy": `default-src 'none'; style-src 'self'; img-src data:; base-uri 'none'; form-action ${formAction}; frame-ancestors 'none'`,
      "Referrer-Policy": "no-referrer",
    };
  }
  return {
    ...common,
    "Content-Security-Policy": `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'none'; base-uri 'none'; form-action ${formAction}; frame-ancestors 'none'`,
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
  };
}

/** A whole HTML document as a response with the page headers. */
export function htmlResponse(
  document: Html,
  options: { kind: PageKind; status?: number; formActionOrigins?: readonly string[] },
): Response {
  return new Response(document.toString(), {
    status: options.status ?? 200,
    headers: pageHeaders(options.kind, options.formActionOrigins),
  });
}

/** 303 to `location` (a path on this site or a provider's URL), never cached, without Referer. */
export function redirect(location: string, cookies: readonly string[] = []): Response {
  const headers = new Headers({
    Location: location,
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
  });
  for (const cookie of cookies) headers.append("Set-Cookie", cookie);
  return new Response(null, { status: 303, headers });
}

/**
 * Fetch metadata first (every current browser sends it), then Origin. A
 * request with neither is not from a modern browser; each form's CSRF token
 * still has to match.
 */
export function isSameOriginPost(request: Request, origin: string): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site !== null) return site === "same-origin";
  const from = request.headers.get("origin");
  if (from !== null && from !== "null") return from === origin;
  return true;
}

/** Why a form post could not be read: answered with a 413, 408 or 415 page. */
export type FormProblem = "too_large" | "too_slow" | "unsupported";

export const FORM_PROBLEMS: Record<FormProblem, { status: number; title: string; text: string }> = {
  too_slow: { status: 408, title: "Form too slow", text: "The form did not arrive in time. Send it again." },
  too_large: {
    status: 413,
    title: "Form too large",
    text: "The form sent was larger than this page ever sends.",
  },
  unsupported: {
    status: 415,
    title: "Unsupported form",
    text: "The form must be sent as an ordinary HTML form.",
  },
};

/** A URL-encoded form of at most `maxBytes`, read with the app's body reader. */
export async function readForm(
  request: Request,
  maxBytes: number,
  readBody: (request: Request, maxBytes: number) => Promise<string | null | "too_slow">,
): Promise<URLSearchParams | FormProblem> {
  const type = request.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") return "unsupported";
  const text = await readBody(request, maxBytes);
  if (text === null) return "too_large";
  if (text === "too_slow") return "too_slow";
  return new URLSearchParams(text);
}

/** A thrown tRPC error, recognised by shape (this package does not depend on @trpc/server). */
export function procedureErrorCode(error: unknown): { code: string; fromSchema: boolean } | null {
  if (!(error instanceof Error) || error.name !== "TRPCError") return null;
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? { code, fromSchema: error.cause !== undefined } : null;
}
