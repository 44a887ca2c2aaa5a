// POST /v1/test-keys: an unclaimed project, a test key and a claim link, all
// under the per-address and service-wide limits (spec 4.1).
import { newId, randomToken, sha256Hex } from "@sms/crypto";
import { mintApiKey } from "../auth/mint-api-key.ts";
import { consumeEach, exhaustedLimit, type LimitRefusal } from "../limits/consume-limits.ts";
import { BUCKETS, type LimitCheck, type LimitState, tightestState } from "../model/limits.ts";
import { DAY_MS, truncateToSecond } from "../model/time.ts";
import { type Store, transactionOrRollback } from "../store/index.ts";

const CLAIM_LINK_LIFETIME_MS = 30 * DAY_MS;

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
  | LimitRefusal;

/**
 * The three limits, in the order they are taken (the same everywhere, so
 * concurrent transactions lock the counter rows in the same order). Each
 * window has a bucket of its own.
 *
 * The daily windows come first: a caller whose day is used up hears
 * `daily_limit_reached` (do not retry before midnight UTC) rather than a
 * `rate_limited` that would send it back in a minute. All checks are consumed
 * together or not at all, so the order changes only which refusal is named.
 */
export function testKeyLimitChecks(callerSubject: string, limits: TestKeyLimits): LimitCheck[] {
  return [
    {
      bucket: BUCKETS.testKeysPerAddressDay(callerSubject),
      window: "utc_day",
      limit: limits.perDay,
      refusal: "daily_limit_reached",
    },
    {
      bucket: BUCKETS.testKeysServiceDay(),
      window: "utc_day",
      limit: limits.perDayTotal,
      refusal: "daily_limit_reached",
    },
    {
      bucket: BUCKETS.testKeysPerAddressMinute(callerSubject),
      window: "minute",
      limit: limits.perMinute,
      refusal: "rate_limited",
    },
  ];
}

export type CreateTestKeyDeps = {
  store: Pick<Store, "limits" | "transaction">;
  config: { publicBaseUrl: string; limits: TestKeyLimits };
};

export async function createTestKey(
  deps: CreateTestKeyDeps,
  input: {
    now: Date;
    /** The caller's rate-limit identity (an IPv4 address or an IPv6 /64). */
    callerSubject: string;
  },
): Promise<CreateTestKeyResult> {
  const { now } = input;
  const key = mintApiKey("test", now);
  const claimToken = randomToken(32);
  const tokenHash = await sha256Hex(claimToken);
  const projectId = newId("prj", now.getTime());
  const expiresAt = new Date(truncateToSecond(now).getTime() + CLAIM_LINK_LIFETIME_MS);

  const checks = testKeyLimitChecks(input.callerSubject, deps.config.limits);
  // A caller already over a limit is answered without taking the counter row
  // locks, so a burst of refused requests never queues behind the granted ones.
  const exhausted = await exhaustedLimit(deps.store.limits, checks, now);
  if (exhausted) return exhausted;
  const states = await transactionOrRollback<LimitState[], LimitRefusal>(deps.store, async (tx, rollback) => {
    const consumed = await consumeEach(tx.limits, checks, now);
    if (!consumed.ok) return rollback(consumed);
    await tx.projects.create(projectId, now);
    await tx.keys.create({
      id: key.keyId,
      projectId,
      mode: "test",
      keyHash: key.keyHash,
      prefix: key.prefix,
      now,
    });
    await tx.claims.create({ id: newId("clm", now.getTime()), projectId, tokenHash, expiresAt, now });
    return consumed.states;
  });
  if (!Array.isArray(states)) return states;
  return {
    ok: true,
    apiKey: key.apiKey,
    projectId,
    claimUrl: `${deps.config.publicBaseUrl}/claim/${claimToken}`,
    expiresAt,
    rateLimit: tightestState(states),
  };
}
