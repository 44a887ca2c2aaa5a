// What the claim and dashboard pages share about browser form posts: the
// same-origin check, reading a URL-encoded form within a size limit, and
// adding cookies to a response.
import { ApiError } from "../contract/errors.ts";
import { readBodyText } from "../http/read-body.ts";

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

/** Why a form post could not be read: each page answers it with its own 413, 408 or 415 page. */
export type FormProblem = "too_large" | "too_slow" | "unsupported";

/**
 * A URL-encoded form of at most `maxBytes`; "too_slow" when the body does
 * not arrive by the server's deadline (read-body.ts).
 */
export async function readForm(request: Request, maxBytes: number): Promise<URLSearchParams | FormProblem> {
  const type = request.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") return "unsupported";
  let text: string | null;
  try {
    text = await readBodyText(request, maxBytes);
  } catch (error) {
    if (error instanceof ApiError && error.code === "request_timeout") return "too_slow";
    throw error;
  }
  if (text === null) return "too_large";
  return new URLSearchParams(text);
}

export function withCookies(response: Response, cookies: string[]): Response {
  for (const cookie of cookies) response.headers.append("Set-Cookie", cookie);
  return response;
}
