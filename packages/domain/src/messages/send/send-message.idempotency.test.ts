import { describe, expect, it } from "vitest";
import type { Row } from "../../../test/support/fake-send-store.ts";
import { FIRST_ANSWER, sendHarness, T0 } from "../../../test/support/send-harness.ts";

describe("sendMessage: idempotency", () => {
  const { state, setup, inFlightRecord, live } = sendHarness();

  it("replay: the same key and body answer the first response, unchanged, without a second submission", async () => {
    const { send, test } = setup();
    const first = await send();
    state.now = new Date(T0.getTime() + 60_000);
    const again = await send();
    expect(again).toEqual({ ok: true, replayed: true, message: first.ok ? first.message : null });
    expect(test.submitted).toHaveLength(1);
    // A replay is not counted against the per-minute limit.
    // The project's minute, and the recipient's test minute and day (never a live one), each counted once.
    expect([...state.tables.counters.values()]).toEqual([1, 1, 1]);
  });

  it("the same key with another body is refused, and nothing is sent", async () => {
    const { send, test } = setup();
    await send();
    expect(await send({ code: "111111" })).toEqual({ ok: false, code: "idempotency_key_reused" });
    expect(test.submitted).toHaveLength(1);
  });

  it("in flight: a duplicate waits for the first request's answer and replays it, sending nothing", async () => {
    const record = await inFlightRecord();
    const { send, test, timer } = setup({
      onSleep: (elapsed) => {
        if (elapsed >= 300) record.response = FIRST_ANSWER;
      },
    });
    expect(await send()).toEqual({ ok: true, replayed: true, message: FIRST_ANSWER });
    expect(test.submitted).toHaveLength(0);
    expect(timer.sleeps).toBeGreaterThan(1);
    // Waiting is free: nothing was counted for the duplicate.
    expect(state.tables.counters.size).toBe(0);
  });

  it("in flight with another body: 409 at once, without waiting", async () => {
    await inFlightRecord({ code: "111111" });
    const { send, timer } = setup();
    expect(await send()).toEqual({ ok: false, code: "idempotency_key_reused" });
    expect(timer.sleeps).toBe(0);
  });

  it("in flight and never answered, its message queued (a send crashed after writing ahead): unresolved once the wait is over", async () => {
    const record = await inFlightRecord();
    record.messageId = "msg_queued";
    state.tables.messages.set("msg_queued", { messageId: "msg_queued", status: "queued" } as Row);
    const { send, test, timer } = setup();
    expect(await send()).toEqual({ ok: false, code: "first_request_unresolved", retryAfterMs: 60_000 });
    expect(timer.elapsed).toBe(15_000);
    expect(test.submitted).toHaveLength(0);
    expect(state.tables.messages.size).toBe(1);
  });

  it("a claim that never got its message (a test send died between its two statements): the duplicate takes the key over once its wait is over, and sends", async () => {
    await inFlightRecord();
    const { send, test, timer } = setup();
    expect(await send()).toMatchObject({ ok: true, replayed: false, message: { status: "submitted" } });
    expect(timer.elapsed).toBe(15_000);
    expect(test.submitted).toHaveLength(1);
    expect(state.tables.messages.size).toBe(1);
  });

  it("a claim another duplicate gave up first: this one waits for that duplicate's send and replays it", async () => {
    const first = await inFlightRecord();
    const ANSWER = { ...FIRST_ANSWER, id: "msg_other" };
    const { send, test, timer } = setup({
      hooks: {
        // The other duplicate's wait ran out a moment earlier: it gave the
        // claim up and claimed the key for its own send, not yet answered.
        beforeReleaseAbandoned: () => {
          state.tables.records.set("prj_unit|test|k-1", {
            ...first,
            id: "idem_other",
            messageId: "msg_other",
          });
        },
      },
      onSleep: (elapsed) => {
        const record = state.tables.records.get("prj_unit|test|k-1");
        if (elapsed > 15_000 && record?.messageId === "msg_other") record.response = ANSWER;
      },
    });
    expect(await send()).toEqual({ ok: true, replayed: true, message: ANSWER });
    expect(timer.elapsed).toBeGreaterThan(15_000);
    expect(test.submitted).toHaveLength(0);
  });

  it("a claim given up while its send was in flight: nothing is written, and the caller hears to retry", async () => {
    const { send, test } = setup();
    // The simulator answers only after a duplicate that waited in vain took
    // the key over (what releaseAbandoned does).
    test.provider.submit = async () => {
      state.tables.records.clear();
      return { kind: "accepted", providerRef: "sim-late" };
    };
    expect(await send()).toEqual({ ok: false, code: "first_request_unresolved", retryAfterMs: 1_000 });
    expect(state.tables.messages.size).toBe(0);
  });

  it("in flight, then released (the first request sent nothing): the duplicate starts over and sends", async () => {
    await inFlightRecord();
    const { send, test } = setup({
      onSleep: (elapsed) => {
        if (elapsed >= 100) state.tables.records.delete("prj_unit|test|k-1");
      },
    });
    expect(await send()).toMatchObject({ ok: true, replayed: false, message: { status: "submitted" } });
    expect(test.submitted).toHaveLength(1);
    // The project's minute, and the recipient's test minute and day (never a live one), each counted once.
    expect([...state.tables.counters.values()]).toEqual([1, 1, 1]);
  });

  it("lost race: another request claimed the key at the same moment; its answer stands, nothing is counted", async () => {
    const { send, test } = setup({ hooks: { loseRaceTo: FIRST_ANSWER } });
    expect(await send()).toEqual({ ok: true, replayed: true, message: FIRST_ANSWER });
    expect(test.submitted).toHaveLength(0);
    expect(state.tables.messages.size).toBe(0);
    expect(state.tables.counters.size).toBe(0);
  });

  describe("live keys", () => {
    it("a test send's key does not replay a live send with the same Idempotency-Key", async () => {
      state.tables.balance = 3;
      const { send } = setup();
      await send();
      expect(await send(live())).toMatchObject({ ok: true, replayed: false });
      expect(state.tables.messages.size).toBe(2);
    });
  });
});
