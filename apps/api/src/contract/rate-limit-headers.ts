// RateLimit-* (IETF draft) and Retry-After headers from a limit's state.
import type { LimitState } from "@sms/domain";

/** Whole seconds until `resetAt`, at least 1. */
export function secondsUntil(resetAt: Date, now: Date): number {
  return Math.max(1, Math.ceil((resetAt.getTime() - now.getTime()) / 1000));
}

export function rateLimitHeaders(state: LimitState | undefined, now: Date): Record<string, string> {
  if (!state) return {};
  return {
    "RateLimit-Limit": String(state.limit),
    "RateLimit-Remaining": String(state.remaining),
    "RateLimit-Reset": String(secondsUntil(state.resetAt, now)),
  };
}

export function retryHeaders(state: LimitState, now: Date): Record<string, string> {
  const headers = rateLimitHeaders(state, now);
  return { ...headers, "Retry-After": headers["RateLimit-Reset"] ?? "60" };
}
