// POST /v1/test-keys: an unclaimed project, a test key and a claim link, all
// under the per-address and service-wide limits (spec 4.1).
import { apiKeyPrefix, newApiKey, newId, randomToken, sha256Hex } from "@sms/crypto";
import type { PrismaClient } from "@sms/db";
import {
  type LimitCheck,
  LimitRefusal,
  type LimitState,
  consumeLimitsOrThrow,
  exhaustedLimit,
  tightestState,
} from "../rate-limits/consume-limits.ts";
import { DAY_MS, truncateToSecond } from "../time.ts";

export const CLAIM_LINK_LIFETIME_MS = 30 * DAY_MS;

export const TEST_KEY_NEXT_STEPS =
  "Send test messages now with this key (POST /v1/messages; +995500000001 to +995500000004 simulate failures, any other valid number is delivered), " +
  "and give claim_url to a human, who signs in to claim the project and add free credits before expires_at.";

export type TestKeyLimits = { perMinute: number; perDay: number; perDayTotal: number };

export type CreateTestKeyResult =
  | {
      ok: true;
      apiKey: string;
      projectId: string;
      claimUrl: string;
      expiresAt: Date;
      rateLimit: LimitState | undefined;
    }
  | { ok: false; refusal: "rate_limited" | "daily_limit_reached"; state: LimitState };

/**
 * The three limits, in the order they are taken (the same everywhere, so
 * concurrent transactions lock the counter rows in the same order). Each
 * window has a bucket of its own: a minute window and a day window that start
 * at the same instant (00:00 UTC) must not share a counter row.
 *
 * The daily windows come first: a caller whose day is used up hears
 * `daily_limit_reached` (do not retry before midnight UTC) rather than a
 * `rate_limited` that would send it back in a minute. All checks are consumed
 * together or not at all, so the order changes only which refusal is named.
 */
export function testKeyLimitChecks(callerSubject: string, limits: TestKeyLimits): LimitCheck[] {
  return [
    {
      bucket: `test_keys:addr:${callerSubject}:day`,
      window: "utc_day",
      limit: limits.perDay,
      refusal: "daily_limit_reached",
    },
    {
      bucket: "test_keys:service:day",
      window: "utc_day",
      limit: limits.perDayTotal,
      refusal: "daily_limit_reached",
    },
    {
      bucket: `test_keys:addr:${callerSubject}:minute`,
      window: "minute",
      limit: limits.perMinute,
      refusal: "rate_limited",
    },
  ];
}

export async function createTestKey(options: {
  prisma: PrismaClient;
  now: Date;
  publicBaseUrl: string;
  /** The caller's rate-limit identity (an IPv4 address or an IPv6 /64). */
  callerSubject: string;
  limits: TestKeyLimits;
}): Promise<CreateTestKeyResult> {
  const { prisma, now } = options;
  const apiKey = newApiKey("test");
  const claimToken = randomToken(32);
  const [keyHash, tokenHash] = await Promise.all([sha256Hex(apiKey), sha256Hex(claimToken)]);
  const projectId = newId("prj", now.getTime());
  const expiresAt = new Date(truncateToSecond(now).getTime() + CLAIM_LINK_LIFETIME_MS);

  const checks = testKeyLimitChecks(options.callerSubject, options.limits);
  // A caller already over a limit is answered without taking the counter row
  // locks, so a burst of refused requests never queues behind the granted ones.
  const exhausted = await exhaustedLimit({ tx: prisma, checks, now });
  if (exhausted) return exhausted;
  try {
    const states = await prisma.$transaction(async (tx) => {
      const states = await consumeLimitsOrThrow({ tx, checks, now });
      await tx.project.create({ data: { id: projectId, createdAt: now, updatedAt: now } });
      await tx.apiKey.create({
        data: {
          id: newId("key", now.getTime()),
          projectId,
          mode: "test",
          keyHash,
          prefix: apiKeyPrefix(apiKey),
          createdAt: now,
        },
      });
      await tx.claimToken.create({
        data: { id: newId("clm", now.getTime()), projectId, tokenHash, expiresAt, createdAt: now },
      });
      return states;
    });
    return {
      ok: true,
      apiKey,
      projectId,
      claimUrl: `${options.publicBaseUrl}/claim/${claimToken}`,
      expiresAt,
      rateLimit: tightestState(states),
    };
  } catch (error) {
    if (error instanceof LimitRefusal)
      return { ok: false, refusal: error.outcome.refusal, state: error.outcome.state };
    throw error;
  }
}
