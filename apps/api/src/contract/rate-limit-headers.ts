// RateLimit-* (IETF draft) and Retry-After headers from a limit's state, and
// a test send's Live-Recipient-* (an extension: what a live key would have left).
import { type LimitState, type RecipientAllowance, recipientRemaining } from "@sms/domain";

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

/**
 * Issue 53, item 3 (an extension of the contract): a test send (201) names
 * the live per-number limits and what a live key would have left for this
 * number after it, as `minute=N, day=M` (never below 0). Test sends are never
 * refused by them; the counts are of this project's test sends to the number.
 */
export function liveRecipientHeaders(allowance: RecipientAllowance | undefined): Record<string, string> {
  if (!allowance) return {};
  const { limit } = allowance;
  const left = recipientRemaining(allowance);
  return {
    "Live-Recipient-Limit": `minute=${limit.minute}, day=${limit.day}`,
    "Live-Recipient-Remaining": `minute=${left.minute}, day=${left.day}`,
  };
}
