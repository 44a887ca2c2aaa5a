// Fixed-window limits (spec 8, 4.1, 4.2): their types, their windows and the
// name of every counter bucket the service keeps in rate_limit_counters.
import { DAY_MS, MINUTE_MS, startOfUtcDay, startOfUtcMinute, TEN_MINUTES_MS } from "./time.ts";

/** Fixed UTC windows: a calendar minute, a ten-minute slot (…:00, …:10, …), a UTC day. */
export type LimitWindow = "minute" | "ten_minutes" | "utc_day";

/** What a refusal by a window means to the caller. */
export type LimitRefusalCode = "rate_limited" | "daily_limit_reached";

export type LimitCheck = {
  /**
   * Counter identity (one of BUCKETS). Never put secrets in it. One bucket
   * per window: a counter row is (bucket, window start), and a minute and a
   * day that start at the same instant (00:00 UTC) would otherwise share one row.
   */
  bucket: string;
  window: LimitWindow;
  limit: number;
  /** How much this request uses (1 request, or N segments). */
  cost?: number;
  refusal: LimitRefusalCode;
};

/**
 * What a live key would have left for this number after this send (issue 53,
 * item 3): the live per-number limits, and the recipient's test sends this
 * minute and this UTC day with this one. Reported on test sends, never
 * refusing them (the Live-Recipient-* headers, send-test's page).
 */
export type RecipientAllowance = {
  limit: { minute: number; day: number };
  used: { minute: number; day: number };
};

/** What `allowance` leaves this minute and today, never below 0. */
export function recipientRemaining(allowance: RecipientAllowance): { minute: number; day: number } {
  const { limit, used } = allowance;
  return { minute: Math.max(0, limit.minute - used.minute), day: Math.max(0, limit.day - used.day) };
}

export type LimitState = { limit: number; remaining: number; resetAt: Date; window: LimitWindow };

/** The window `now` falls in: [start, end). */
export function windowOf(window: LimitWindow, now: Date): { start: Date; end: Date } {
  if (window === "minute") {
    const start = startOfUtcMinute(now);
    return { start, end: new Date(start.getTime() + MINUTE_MS) };
  }
  if (window === "ten_minutes") {
    const start = new Date(Math.floor(now.getTime() / TEN_MINUTES_MS) * TEN_MINUTES_MS);
    return { start, end: new Date(start.getTime() + TEN_MINUTES_MS) };
  }
  const start = startOfUtcDay(now);
  return { start, end: new Date(start.getTime() + DAY_MS) };
}

/** What a window looks like once `used` of its limit is taken. */
export function limitState(
  check: Pick<LimitCheck, "limit" | "window">,
  used: number,
  resetAt: Date,
): LimitState {
  return { limit: check.limit, remaining: Math.max(0, check.limit - used), resetAt, window: check.window };
}

/** The state to advertise in RateLimit-* headers: the window closest to exhaustion. */
export function tightestState(states: LimitState[]): LimitState | undefined {
  return [...states].sort(
    (a, b) => a.remaining / a.limit - b.remaining / b.limit || a.resetAt.getTime() - b.resetAt.getTime(),
  )[0];
}

/**
 * Every counter bucket, by what it counts. `subject` is a caller's
 * rate-limit identity (an IPv4 address or an IPv6 /64), never a secret.
 * `recipient` is a keyed fingerprint of a project's recipient
 * (recipientFingerprintInput), never the number.
 */
export const BUCKETS = {
  /** Message creations of a project, per minute (MESSAGES_PER_MINUTE). */
  messages: (projectId: string) => `messages:${projectId}`,
  /** Live messages of a project to one recipient, per minute (RECIPIENT_MESSAGES_PER_MINUTE). */
  recipientMinute: (projectId: string, recipient: string) => `recipient:${projectId}:${recipient}:minute`,
  /** Live messages of a project to one recipient, per UTC day (RECIPIENT_MESSAGES_PER_DAY). */
  recipientDay: (projectId: string, recipient: string) => `recipient:${projectId}:${recipient}:day`,
  /**
   * Test messages of a project to one recipient, per minute: counted, never
   * refused, so that a test send can say what a live key would have left
   * (issue 53, item 3) without using up the live allowance.
   */
  testRecipientMinute: (projectId: string, recipient: string) =>
    `test_recipient:${projectId}:${recipient}:minute`,
  /** Test messages of a project to one recipient, per UTC day (as testRecipientMinute). */
  testRecipientDay: (projectId: string, recipient: string) => `test_recipient:${projectId}:${recipient}:day`,
  /** Live verifications of a project started for one recipient, per minute (VERIFICATIONS_PER_RECIPIENT_PER_MINUTE). */
  verificationStartsMinute: (projectId: string, recipient: string) =>
    `verifications:${projectId}:${recipient}:minute`,
  /** Live verifications of a project started for one recipient, per UTC day (VERIFICATIONS_PER_RECIPIENT_PER_DAY). */
  verificationStartsDay: (projectId: string, recipient: string) =>
    `verifications:${projectId}:${recipient}:day`,
  /** Live segments of a project without paid credits, per UTC day (FREE_TIER_DAILY_SEGMENTS). */
  freeTierSegments: (projectId: string) => `free_tier_segments:${projectId}`,
  /** Instant test keys per caller address, per UTC day. */
  testKeysPerAddressDay: (subject: string) => `test_keys:addr:${subject}:day`,
  /** Instant test keys per caller address, per minute. */
  testKeysPerAddressMinute: (subject: string) => `test_keys:addr:${subject}:minute`,
  /** Instant test keys of the whole service, per UTC day. */
  testKeysServiceDay: () => "test_keys:service:day",
  /** Verification checks of a project, per minute (VERIFICATION_CHECKS_PER_MINUTE). */
  verificationChecks: (projectId: string) => `verification_checks:${projectId}:minute`,
  /** Verification checks from one caller address, per minute (VERIFICATION_CHECKS_PER_ADDRESS_PER_MINUTE). */
  verificationChecksPerAddress: (subject: string) => `verification_checks:addr:${subject}:minute`,
  /** Claim-page sign-in starts per caller address, per minute. */
  claimSignIns: (subject: string) => `claim_sign_ins:addr:${subject}:minute`,
} as const;

/**
 * What the keyring fingerprints to name a recipient's counters: the project
 * is part of it, so two projects' counters for one number cannot be linked,
 * and the number never appears in a bucket name.
 */
export function recipientFingerprintInput(projectId: string, to: string): string {
  return JSON.stringify(["recipient", projectId, to]);
}
