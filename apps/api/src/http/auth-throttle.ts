// Failed API-key authentication, throttled per address (issue 25, L5: 300
// random keys from one address were each answered 401 after a database
// lookup). In front of the key lookup, per instance:
//
//   - a negative cache: a key the lookup found unknown or revoked is answered
//     401 from memory for NEGATIVE_TTL_MS (a revoked key never comes back, an
//     unknown one only if that very key were issued later);
//   - a limit: an address (an IPv6 /64) whose lookups of well-formed keys failed
//     `maxFailuresPerMinute` times in the current UTC minute gets 429
//     rate_limited for any key this instance has not seen authenticate, until
//     the minute ends;
//   - valid keys are never held back: a key that authenticated on this
//     instance in the last day passes even from a throttled address, and an
//     address that never fails costs nothing but one hash per request.
//
// Counting is per instance (N instances allow N times the limit): the point is
// to make guessing slow and to keep it off the database, not exact fairness.
import { API_KEY_PATTERN, sha256HexSync } from "@sms/crypto";
import { type Authentication, type Clock, createCache, type KeyAndHash } from "@sms/domain";
import { rateLimitSubject } from "./client-address.ts";

const MINUTE_MS = 60_000;
const NEGATIVE_TTL_MS = 10 * MINUTE_MS;
const POSITIVE_TTL_MS = 24 * 60 * MINUTE_MS;
const MAX_ENTRIES = 20_000;

export type AuthThrottleVerdict =
  /** `key`: the well-formed bearer key and its hash (the lookup reuses it); null when there is none. */
  | { kind: "lookup"; key: KeyAndHash | null }
  | { kind: "known_invalid" }
  | { kind: "throttled"; limit: number; resetAt: Date };

export type AuthThrottle = {
  /** Before the lookup: whether it may run (and the key's hash, when the throttle needs it afterwards). */
  before(address: string, authorization: string | null): AuthThrottleVerdict;
  /** After the lookup: counts a failure, remembers a valid key or an invalid one. */
  after(address: string, verdict: { key: KeyAndHash | null }, result: Authentication): void;
};

/**
 * The well-formed API key of an Authorization header, or null: anything else
 * is refused without a lookup, so it is neither counted nor throttled.
 */
function bearerKey(authorization: string | null): string | null {
  const key = /^\s*bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1];
  return key !== undefined && API_KEY_PATTERN.test(key) ? key : null;
}

export function createAuthThrottle(options: { clock: Clock; maxFailuresPerMinute: number }): AuthThrottle {
  /** Failed lookups per address, in the minute of the last one (until that minute ends). */
  const failures = createCache<string, { minute: number; count: number }>({
    namespace: "auth_failures",
    maxEntries: MAX_ENTRIES,
  });
  /** Key hashes the lookup refused (unknown, revoked): that answer is reused for NEGATIVE_TTL_MS. */
  const invalid = createCache<string, true>({ namespace: "auth_invalid_keys", maxEntries: MAX_ENTRIES });
  /** Key hashes that authenticated: they pass a throttled address for POSITIVE_TTL_MS. */
  const valid = createCache<string, true>({ namespace: "auth_valid_keys", maxEntries: MAX_ENTRIES });

  return {
    before(address, authorization) {
      const key = bearerKey(authorization);
      if (key === null) return { kind: "lookup", key: null };
      const keyHash = sha256HexSync(key);
      const now = options.clock.now().getTime();
      if (valid.get(keyHash, now)) return { kind: "lookup", key: { key, keyHash } };
      const minute = Math.floor(now / MINUTE_MS);
      const record = failures.get(rateLimitSubject(address), now);
      if (record && record.minute === minute && record.count >= options.maxFailuresPerMinute) {
        return {
          kind: "throttled",
          limit: options.maxFailuresPerMinute,
          resetAt: new Date((minute + 1) * MINUTE_MS),
        };
      }
      if (invalid.get(keyHash, now)) {
        countFailure(address, now);
        return { kind: "known_invalid" };
      }
      return { kind: "lookup", key: { key, keyHash } };
    },
    after(address, verdict, result) {
      if (verdict.key === null) return;
      const { keyHash } = verdict.key;
      const now = options.clock.now().getTime();
      if (result.ok) {
        valid.setUntil(keyHash, true, now + POSITIVE_TTL_MS);
        return;
      }
      if (result.code !== "invalid_api_key") return;
      invalid.setUntil(keyHash, true, now + NEGATIVE_TTL_MS);
      countFailure(address, now);
    },
  };

  function countFailure(address: string, now: number) {
    const subject = rateLimitSubject(address);
    const minute = Math.floor(now / MINUTE_MS);
    const record = failures.get(subject, now);
    if (record && record.minute === minute) record.count += 1;
    else failures.setUntil(subject, { minute, count: 1 }, (minute + 1) * MINUTE_MS);
  }
}
