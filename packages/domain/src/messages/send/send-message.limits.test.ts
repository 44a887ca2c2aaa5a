import { describe, expect, it } from "vitest";
import { sendHarness } from "../../../test/support/send-harness.ts";

describe("sendMessage: limits", () => {
  const { state, setup, live } = sendHarness();

  it("limited: over the per-minute limit nothing is written or sent", async () => {
    const { send, test } = setup({ perMinute: 1 });
    expect((await send()).ok).toBe(true);
    const refused = await send({ idempotencyKey: "k-2" });
    expect(refused).toMatchObject({ ok: false, code: "rate_limited", limit: { limit: 1, remaining: 0 } });
    if (refused.ok || refused.code !== "rate_limited") throw new Error("unreachable");
    expect(refused.limit.resetAt).toEqual(new Date("2026-11-22T10:01:00Z"));
    expect(test.submitted).toHaveLength(1);
    expect(state.tables.messages.size).toBe(1);
    // The refused request gave its key back: the same key works in the next minute.
    expect(state.tables.records.size).toBe(1);
    state.now = new Date("2026-11-22T10:01:00Z");
    expect(await send({ idempotencyKey: "k-2" })).toMatchObject({ ok: true, replayed: false });
  });

  it("test keys are never refused per number, and each new send says what a live key would have left (issue 53, item 3)", async () => {
    const { send } = setup({ perRecipient: { perMinute: 2, perDay: 10 } });
    const allowances = [];
    for (let i = 0; i < 3; i++) {
      const sent = await send({ idempotencyKey: `t-${i}` });
      if (!sent.ok || sent.replayed) throw new Error("not a new send");
      allowances.push(sent.recipient);
    }
    // The third has nothing left this minute: the minute says its limit, the day goes on counting.
    expect(allowances).toEqual([
      { limit: { minute: 2, day: 10 }, used: { minute: 1, day: 1 } },
      { limit: { minute: 2, day: 10 }, used: { minute: 2, day: 2 } },
      { limit: { minute: 2, day: 10 }, used: { minute: 2, day: 3 } },
    ]);
    // A replay counts nothing and says nothing of it.
    expect(await send({ idempotencyKey: "t-0" })).not.toHaveProperty("recipient");
    // Another number starts again; the next minute starts the minute again, not the day.
    expect(await send({ idempotencyKey: "t-other", to: "+995555000111" })).toMatchObject({
      recipient: { used: { minute: 1, day: 1 } },
    });
    state.now = new Date("2026-11-22T10:01:00Z");
    expect(await send({ idempotencyKey: "t-3" })).toMatchObject({
      recipient: { used: { minute: 1, day: 4 } },
    });
    // The counters are test-only buckets: no live allowance was used.
    const buckets = [...state.tables.counters.keys()];
    expect(buckets.some((bucket) => bucket.startsWith("test_recipient:prj_unit:"))).toBe(true);
    expect(buckets.some((bucket) => bucket.startsWith("recipient:"))).toBe(false);
  });

  describe("live keys", () => {
    it("per-recipient limits in the contract's two meanings: a minute's window is rate_limited (reset within 60 s), the day's cap is daily_limit_reached (reset at midnight UTC)", async () => {
      state.tables.balance = 100;
      state.tables.hasPaidCredits = true;
      const { send, live: provider } = setup({ perRecipient: { perMinute: 2, perDay: 5 } });
      for (let i = 0; i < 2; i++) {
        expect(await send(live({ idempotencyKey: `r-${i}` }))).toMatchObject({ ok: true, replayed: false });
      }
      const refused = await send(live({ idempotencyKey: "r-2" }));
      expect(refused).toMatchObject({
        ok: false,
        code: "rate_limited",
        subject: "recipient",
        limit: { limit: 2, remaining: 0, window: "minute", resetAt: new Date("2026-11-22T10:01:00Z") },
      });
      if (refused.ok || refused.code !== "rate_limited") throw new Error("not rate_limited");
      expect(refused.limit.resetAt.getTime() - state.now.getTime()).toBeLessThanOrEqual(60_000);
      // Rolled back: nothing written, nothing reserved, nothing sent.
      expect(state.tables.messages.size).toBe(2);
      expect(state.tables.balance).toBe(98);
      expect(provider?.submitted).toHaveLength(2);
      // Another number is unaffected.
      expect(await send(live({ idempotencyKey: "other", to: "+995555000111" }))).toMatchObject({ ok: true });
      // The next minutes allow three more: the day's cap of 5 is then reached.
      state.now = new Date("2026-11-22T10:01:00Z");
      expect((await send(live({ idempotencyKey: "r-3" }))).ok).toBe(true);
      expect((await send(live({ idempotencyKey: "r-4" }))).ok).toBe(true);
      state.now = new Date("2026-11-22T10:02:00Z");
      expect((await send(live({ idempotencyKey: "r-5" }))).ok).toBe(true);
      expect(await send(live({ idempotencyKey: "r-6" }))).toMatchObject({
        ok: false,
        code: "daily_limit_reached",
        subject: "recipient",
        limit: { limit: 5, remaining: 0, window: "utc_day", resetAt: new Date("2026-11-23T00:00:00Z") },
      });
      // Counter names carry a keyed fingerprint, never the number.
      const buckets = [...state.tables.counters.keys()];
      expect(buckets.some((bucket) => bucket.startsWith("recipient:prj_unit:"))).toBe(true);
      expect(buckets.join(" ")).not.toMatch(/555123456|555000111/);
    });

    it("test keys are not subject to the per-recipient limits", async () => {
      const { send } = setup({ perRecipient: { perMinute: 1, perDay: 1 } });
      for (let i = 0; i < 4; i++) {
        expect(await send({ idempotencyKey: `t-${i}` })).toMatchObject({ ok: true, replayed: false });
      }
      expect([...state.tables.counters.keys()].some((bucket) => bucket.startsWith("recipient:"))).toBe(false);
    });

    it("over the per-minute limit, a live send is refused as the project's, and the recipient's counters do not move", async () => {
      state.tables.balance = 10;
      const { send } = setup({ perMinute: 1 });
      expect((await send(live())).ok).toBe(true);
      expect(await send(live({ idempotencyKey: "k-2" }))).toMatchObject({
        ok: false,
        code: "rate_limited",
        subject: "project",
      });
      const recipientCounts = [...state.tables.counters.entries()].filter(([key]) =>
        key.startsWith("recipient:"),
      );
      expect(recipientCounts.map(([, count]) => count)).toEqual([1, 1]);
      expect(state.tables.balance).toBe(9);
    });

    it("over both the per-minute and a recipient's limit, the project's minute is the refusal (the contract's order), though the project's rows are taken last", async () => {
      state.tables.balance = 10;
      state.tables.hasPaidCredits = true;
      const { send } = setup({ perMinute: 1, perRecipient: { perMinute: 1, perDay: 10 } });
      expect((await send(live())).ok).toBe(true);
      expect(await send(live({ idempotencyKey: "k-2" }))).toMatchObject({
        ok: false,
        code: "rate_limited",
        subject: "project",
        limit: { limit: 1, remaining: 0, window: "minute" },
      });
      // Nothing of the refused send stays counted.
      expect([...state.tables.counters.values()]).toEqual([1, 1, 1]); // the recipient's minute and day, the project's minute
      expect(state.tables.balance).toBe(9);
    });
  });
});
