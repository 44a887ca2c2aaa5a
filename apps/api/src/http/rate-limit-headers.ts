// RateLimit-* (IETF draft) and Retry-After headers from a limit's state.
import type { LimitState } from "@sms/domain";

export function rateLimitHeaders(state: LimitState | undefined, now: Date): Record<string, string> {
  if (!state) return {};
  const reset = Math.max(1, Math.ceil((state.resetAt.getTime() - now.getTime()) / 1000));
  return {
    "RateLimit-Limit": String(state.limit),
    "RateLimit-Remaining": String(state.remaining),
    "RateLimit-Reset": String(reset),
  };
}

export function retryHeaders(state: LimitState, now: Date): Record<string, string> {
  const headers = rateLimitHeaders(state, now);
  return { ...headers, "Retry-After": headers["RateLimit-Reset"] ?? "60" };
}
