import {
  availableBackends,
  createTestDatabase,
  dropAllTestDatabases,
  type TestDatabase,
} from "@sms/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LimitCheck, type LimitState, tightestState } from "../src/model/limits.ts";
import { createStore, type Store, transactionOrRollback } from "../src/store/index.ts";
import { testKeyLimitChecks } from "../src/test-keys/create-test-key.ts";
import {
  consumeEach,
  consumeLimits,
  exhaustedLimit,
  type LimitOutcome,
} from "../src/limits/consume-limits.ts";

afterAll(() => dropAllTestDatabases());

const backends = await availableBackends();

let sequence = 0;
const bucket = (name: string) => `test:${name}:${++sequence}`;

describe("tightestState", () => {
  const state = (limit: number, remaining: number, resetAt: string): LimitState => ({
    limit,
    remaining,
    resetAt: new Date(resetAt),
    window: "minute",
  });

  it("picks the window closest to exhaustion, then the one that resets first", () => {
    const minute = state(5, 4, "2026-11-22T10:01:00Z");
    const day = state(20, 1, "2026-11-23T00:00:00Z");
    expect(tightestState([minute, day])).toBe(day);
    const a = state(10, 5, "2026-11-23T00:00:00Z");
    const b = state(2, 1, "2026-11-22T10:01:00Z");
    expect(tightestState([a, b])).toBe(b);
    expect(tightestState([])).toBeUndefined();
  });
});

describe.each(backends)("consumeLimits on %s", (kind) => {
  let t: TestDatabase;
  let store: Store;
  beforeAll(async () => {
    t = await createTestDatabase(kind);
    store = createStore(t.db);
  }, 60_000);
  afterAll(() => t?.drop());

  const count = async (name: string) => {
    const rows = await t.db.prisma.rateLimitCounter.findMany({ where: { bucket: name } });
    return rows.reduce((sum, row) => sum + row.count, 0);
  };

  it("counts up to the limit, then refuses without counting", async () => {
    const name = bucket("basic");
    const now = new Date("2026-11-22T10:00:15.500Z");
    const check: LimitCheck = { bucket: name, window: "minute", limit: 3, refusal: "rate_limited" };
    const remaining: number[] = [];
    for (let i = 0; i < 3; i++) {
      const outcome = await consumeLimits(store, [check], now);
      if (!outcome.ok) throw new Error("refused too early");
      remaining.push(outcome.states[0]?.remaining ?? -1);
      expect(outcome.states[0]?.resetAt.toISOString()).toBe("2026-11-22T10:01:00.000Z");
    }
    expect(remaining).toEqual([2, 1, 0]);
    const refused = await consumeLimits(store, [check], now);
    expect(refused).toEqual({
      ok: false,
      code: "rate_limited",
      limit: { limit: 3, remaining: 0, resetAt: new Date("2026-11-22T10:01:00Z"), window: "minute" },
    });
    expect(await count(name)).toBe(3);
    // The next minute is a new window.
    const next = await consumeLimits(store, [check], new Date("2026-11-22T10:01:00Z"));
    expect(next.ok).toBe(true);
  });

  it("charges a cost, and refuses a cost above the limit outright", async () => {
    const name = bucket("cost");
    const now = new Date("2026-11-22T23:59:59Z");
    const check = (cost: number): LimitCheck => ({
      bucket: name,
      window: "utc_day",
      limit: 5,
      cost,
      refusal: "daily_limit_reached",
    });
    expect((await consumeLimits(store, [check(3)], now)).ok).toBe(true);
    const over = await consumeLimits(store, [check(3)], now);
    expect(over.ok ? null : over.limit).toEqual({
      limit: 5,
      remaining: 2,
      resetAt: new Date("2026-11-23T00:00:00Z"),
      window: "utc_day",
    });
    expect((await consumeLimits(store, [check(2)], now)).ok).toBe(true);
    expect((await consumeLimits(store, [check(6)], new Date("2026-11-23T00:00:00Z"))).ok).toBe(false);
    expect((await consumeLimits(store, [check(5)], new Date("2026-11-23T00:00:00Z"))).ok).toBe(true);
  });

  it("refuses two checks on one bucket (a minute and a day starting at 00:00 would share a row)", async () => {
    const name = bucket("dup");
    const checks: LimitCheck[] = [
      { bucket: name, window: "minute", limit: 5, refusal: "rate_limited" },
      { bucket: name, window: "utc_day", limit: 20, refusal: "daily_limit_reached" },
    ];
    await expect(consumeLimits(store, checks, new Date())).rejects.toThrow(TypeError);
  });

  it("keeps the test-key minute and day counters apart at midnight", async () => {
    const subject = `198.51.100.${++sequence % 250}`;
    const checks = testKeyLimitChecks(subject, { perMinute: 5, perDay: 20, perDayTotal: 1_000_000 });
    const now = new Date("2031-01-01T00:00:10Z");
    for (let i = 0; i < 5; i++) {
      const outcome = await consumeLimits(store, checks, now);
      expect(outcome.ok, `request ${i + 1}`).toBe(true);
    }
    expect(await count(`test_keys:addr:${subject}:minute`)).toBe(5);
    expect(await count(`test_keys:addr:${subject}:day`)).toBe(5);
  });

  it("counts all windows or none inside a transaction", async () => {
    const minute = bucket("tx-minute");
    const day = bucket("tx-day");
    const now = new Date("2026-11-22T12:00:00Z");
    const checks: LimitCheck[] = [
      { bucket: minute, window: "minute", limit: 10, refusal: "rate_limited" },
      { bucket: day, window: "utc_day", limit: 1, refusal: "daily_limit_reached" },
    ];
    const inTransaction = () =>
      transactionOrRollback<LimitOutcome, LimitOutcome>(store, async (tx, rollback) => {
        const outcome = await consumeEach(tx.limits, checks, now);
        return outcome.ok ? outcome : rollback(outcome);
      });
    expect((await inTransaction()).ok).toBe(true);
    expect(await inTransaction()).toMatchObject({ ok: false, code: "daily_limit_reached" });
    expect(await count(minute)).toBe(1);
    expect(await count(day)).toBe(1);
  });

  it("exhaustedLimit names the first used-up window from committed counts, without counting", async () => {
    const minute = bucket("peek-minute");
    const day = bucket("peek-day");
    const now = new Date("2026-11-22T08:15:30Z");
    const checks: LimitCheck[] = [
      { bucket: day, window: "utc_day", limit: 3, refusal: "daily_limit_reached" },
      { bucket: minute, window: "minute", limit: 2, refusal: "rate_limited" },
    ];
    expect(await exhaustedLimit(store.limits, checks, now)).toBeNull();
    await consumeLimits(store, checks, now);
    expect(await exhaustedLimit(store.limits, checks, now)).toBeNull();
    await consumeLimits(store, checks, now);
    expect(await exhaustedLimit(store.limits, checks, now)).toEqual({
      ok: false,
      code: "rate_limited",
      limit: { limit: 2, remaining: 0, resetAt: new Date("2026-11-22T08:16:00Z"), window: "minute" },
    });
    // A new minute: only the day counts (2 of 3), and a cost of 2 would pass it.
    const later = new Date("2026-11-22T08:16:00Z");
    expect(await exhaustedLimit(store.limits, checks, later)).toBeNull();
    const costly = checks.map((check) => ({ ...check, cost: 2 }));
    expect(await exhaustedLimit(store.limits, costly, later)).toMatchObject({
      code: "daily_limit_reached",
      limit: { remaining: 1, resetAt: new Date("2026-11-23T00:00:00Z") },
    });
    expect(await count(minute)).toBe(2);
    expect(await count(day)).toBe(2);
  });

  // PGlite has one connection: a second session cannot look while the first is open.
  it.runIf(kind === "postgres")(
    "exhaustedLimit does not refuse on increments not yet committed",
    async () => {
      const name = bucket("peek-uncommitted");
      const now = new Date("2026-11-22T09:00:00Z");
      const check: LimitCheck = { bucket: name, window: "minute", limit: 1, refusal: "rate_limited" };
      const seen = await transactionOrRollback<never, { inside: unknown; outside: unknown }>(
        store,
        async (tx, rollback) => {
          await consumeEach(tx.limits, [check], now);
          const inside = await exhaustedLimit(tx.limits, [check], now);
          const outside = await exhaustedLimit(store.limits, [check], now);
          return rollback({ inside, outside });
        },
      );
      expect(seen.inside).toMatchObject({ code: "rate_limited" });
      expect(seen.outside).toBeNull();
      expect(await count(name)).toBe(0);
    },
  );

  it("never lets a concurrent burst past the limit", async () => {
    const name = bucket("burst");
    const now = new Date("2026-11-22T15:30:00Z");
    const check: LimitCheck = { bucket: name, window: "minute", limit: 5, refusal: "rate_limited" };
    const outcomes = await Promise.all(Array.from({ length: 25 }, () => consumeLimits(store, [check], now)));
    expect(outcomes.filter((outcome) => outcome.ok)).toHaveLength(5);
    expect(await count(name)).toBe(5);
  });
});
