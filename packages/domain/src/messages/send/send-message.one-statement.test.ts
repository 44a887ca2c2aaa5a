import { describe, expect, it } from "vitest";
import { FIRST_ANSWER, sendHarness } from "../../../test/support/send-harness.ts";

describe("sendMessage: one-statement", () => {
  const { state, setup, inFlightRecord } = sendHarness();

  describe("a pure simulator: a test send in one statement", () => {
    it("asks the simulator first, then claims, counts and writes the answered message in one durable statement", async () => {
      const { send, test } = setup({ pure: true, test: [{ kind: "accepted", providerRef: "sim-1" }] });
      const result = await send();
      expect(result).toMatchObject({ ok: true, replayed: false, message: { status: "submitted" } });
      if (!result.ok || result.replayed) throw new Error("unreachable");
      expect(result.rateLimit).toMatchObject({ limit: 100, remaining: 99, window: "minute" });
      expect(test.submitted).toHaveLength(1);
      expect(state.tables.writeAheads).toEqual([{ mode: "test", relaxed: false, inTransaction: false }]);
      expect(state.tables.messages.get(result.message.id)).toMatchObject({
        status: "submitted",
        providerRef: "sim-1",
      });
      expect(state.tables.records.get("prj_unit|test|k-1")?.response).toEqual(result.message);
      // The same request again replays the answer; nothing more is written or counted.
      expect(await send()).toEqual({ ok: true, replayed: true, message: result.message });
      expect(state.tables.messages.size).toBe(1);
      // The project's minute, and the recipient's test minute and day (never a live one), each counted once.
      expect([...state.tables.counters.values()]).toEqual([1, 1, 1]);
    });

    it("over the per-minute limit: 429, and nothing is claimed, counted or written", async () => {
      const { send } = setup({ pure: true, perMinute: 1 });
      await send({ idempotencyKey: "k-1" });
      expect(await send({ idempotencyKey: "k-2" })).toMatchObject({
        ok: false,
        code: "rate_limited",
        subject: "project",
      });
      expect([...state.tables.records.keys()]).toEqual(["prj_unit|test|k-1"]);
      expect(state.tables.messages.size).toBe(1);
      // The project's minute, and the recipient's test minute and day (never a live one), each counted once.
      expect([...state.tables.counters.values()]).toEqual([1, 1, 1]);
    });

    it("a key in flight: waits for the first request's answer and replays it, writing nothing", async () => {
      const record = await inFlightRecord();
      const { send } = setup({ pure: true, onSleep: () => (record.response = FIRST_ANSWER) });
      expect(await send()).toEqual({ ok: true, replayed: true, message: FIRST_ANSWER });
      expect(state.tables.messages.size).toBe(0);
      expect(state.tables.counters.size).toBe(0);
    });

    it("lost race: the key claimed at the same moment by a request that has answered; its answer stands", async () => {
      const { send } = setup({ pure: true, hooks: { loseRaceTo: FIRST_ANSWER } });
      expect(await send()).toMatchObject({ ok: true, replayed: true, message: FIRST_ANSWER });
      expect(state.tables.messages.size).toBe(0);
      expect(state.tables.counters.size).toBe(0);
    });

    it("not reached: the simulator is asked once, the claim taken and given back (503), and a retry sends", async () => {
      const { send, test } = setup({
        pure: true,
        test: [
          { kind: "unreachable", reason: "scripted" },
          { kind: "accepted", providerRef: "sim-2" },
        ],
      });
      expect(await send()).toEqual({ ok: false, code: "provider_unavailable" });
      expect(test.submitted).toHaveLength(1);
      expect(state.tables.writeAheads).toEqual([{ mode: "test", relaxed: true, inTransaction: false }]);
      expect(state.tables.records.size).toBe(0);
      expect(await send()).toMatchObject({ ok: true, replayed: false, message: { status: "submitted" } });
      expect(test.submitted).toHaveLength(2);
    });

    it("a verification's send (its row written before the simulator sees the SMS) keeps the two statements", async () => {
      const { send, test } = setup({ pure: true });
      const order: string[] = [];
      const submitTest = test.provider.submit.bind(test.provider);
      test.provider.submit = async (request) => {
        order.push("submit");
        return submitTest(request);
      };
      const result = await send({
        beforeSubmit: async () => {
          order.push(`beforeSubmit with ${state.tables.records.size} claim`);
        },
      });
      expect(result).toMatchObject({ ok: true, replayed: false });
      expect(order).toEqual(["beforeSubmit with 1 claim", "submit"]);
      expect(state.tables.writeAheads).toEqual([{ mode: "test", relaxed: true, inTransaction: false }]);
    });

    it("a live send is never one statement", async () => {
      state.tables.hasPaidCredits = true;
      state.tables.balance = 5;
      const { send } = setup({ pure: true });
      expect(await send({ mode: "live" })).toMatchObject({ ok: true, replayed: false });
      expect(state.tables.writeAheads.map((w) => w.mode)).toEqual(["live"]);
      expect(state.tables.flushes).toBe(2);
    });
  });
});
