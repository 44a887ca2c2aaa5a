import { describe, expect, it } from "vitest";
import { keyring, sendHarness, T0 } from "../../../test/support/send-harness.ts";

describe("sendMessage: outcomes", () => {
  const { state, setup } = sendHarness();

  it("accepted: writes ahead, submits once and records `submitted`, first check after the simulator delay", async () => {
    const { send, test } = setup({ test: [{ kind: "accepted", providerRef: "sim-1" }] });
    const result = await send();
    expect(result).toMatchObject({
      ok: true,
      replayed: false,
      message: { status: "submitted", error: null, segments: 1 },
    });
    if (!result.ok || result.replayed) throw new Error("unreachable");
    expect(result.message.to).toBe("+9955••••••56");
    expect(result.rateLimit).toMatchObject({ limit: 100, remaining: 99, window: "minute" });
    expect(test.submitted).toEqual([
      expect.objectContaining({ to: "+995555123456", sender: { name: "SMSGE", brandId: null } }),
    ]);
    const row = state.tables.messages.get(result.message.id);
    expect(row).toMatchObject({ status: "submitted", providerRef: "sim-1", creditsReserved: 0 });
    expect(row?.nextCheckAt).toEqual(new Date(T0.getTime() + 5_000));
    // The text and the number are stored encrypted only.
    expect(await keyring.decrypt(row!.textCiphertext, row!.messageId)).toContain("482913");
  });

  it("a test key's write-ahead commits asynchronously, outside a transaction; a live key's too (one statement for a paid project, a transaction for a free-tier one), made durable before the provider hears of it", async () => {
    // The test write-ahead may skip the disk only because recordOutcome's
    // durable commit flushes it before anything is answered (store/messages.ts).
    // The live one must be on disk before uBill is contacted: flushCommitted.
    state.tables.hasPaidCredits = true;
    state.tables.balance = 5;
    const { send, live } = setup();
    if (!live) throw new Error("a live provider is configured");
    const flushesAtSubmit: number[] = [];
    const submitLive = live.provider.submit.bind(live.provider);
    live.provider.submit = async (request) => {
      flushesAtSubmit.push(state.tables.flushes);
      return submitLive(request);
    };
    expect(await send()).toMatchObject({ ok: true, replayed: false });
    expect(state.tables.flushes).toBe(0);
    expect(await send({ mode: "live", idempotencyKey: "k-live" })).toMatchObject({
      ok: true,
      replayed: false,
    });
    expect(state.tables.writeAheads).toEqual([
      { mode: "test", relaxed: true, inTransaction: false },
      { mode: "live", relaxed: true, inTransaction: false },
    ]);
    expect(flushesAtSubmit).toEqual([1]);
    // Its record too commits without waiting for the disk, and is made durable before the answer.
    expect(state.tables.flushes).toBe(2);

    // Without paid credits (a claimed project's free credits) the one statement refuses, keeping
    // nothing, and the transaction takes the free tier's allowance.
    state.tables.hasPaidCredits = false;
    expect(await send({ mode: "live", idempotencyKey: "k-free", to: "+995555123457" })).toMatchObject({
      ok: true,
      replayed: false,
    });
    expect(state.tables.writeAheads.slice(2)).toEqual([
      { mode: "live", relaxed: true, inTransaction: false },
      { mode: "live", relaxed: true, inTransaction: true },
    ]);
    expect(flushesAtSubmit).toEqual([1, 3]);
    expect(state.tables.flushes).toBe(4);
    expect(state.tables.messages.size).toBe(3);
  });

  it("a live write-ahead that cannot be made durable sends nothing: 503, the message, key, counters and credits given back", async () => {
    state.tables.hasPaidCredits = true;
    state.tables.balance = 5;
    const { send, live } = setup({ hooks: { flushOutage: 1 } });
    if (!live) throw new Error("a live provider is configured");
    expect(await send({ mode: "live", idempotencyKey: "k-live" })).toEqual({
      ok: false,
      code: "provider_unavailable",
    });
    expect(live.submitted).toEqual([]);
    expect(state.tables.messages.size).toBe(0);
    expect(state.tables.records.size).toBe(0);
    expect(state.tables.balance).toBe(5);
    expect([...state.tables.counters.values()].every((count) => count === 0)).toBe(true);
    // The key is free: the same request again sends.
    expect(await send({ mode: "live", idempotencyKey: "k-live" })).toMatchObject({
      ok: true,
      replayed: false,
    });
    expect(live.submitted).toHaveLength(1);
  });

  it("a live write-ahead the database lost before it was durable (a crash): 503, nothing sent, and a retry sends", async () => {
    state.tables.hasPaidCredits = true;
    state.tables.balance = 5;
    const { send, live } = setup({ hooks: { flushOutage: 1, flushLosesQueued: true } });
    if (!live) throw new Error("a live provider is configured");
    expect(await send({ mode: "live", idempotencyKey: "k-live" })).toEqual({
      ok: false,
      code: "provider_unavailable",
    });
    expect(live.submitted).toEqual([]);
    expect(await send({ mode: "live", idempotencyKey: "k-live" })).toMatchObject({
      ok: true,
      replayed: false,
    });
    expect(live.submitted).toHaveLength(1);
  });

  it("invalid variables are refused before anything is written, naming the variable", async () => {
    const { send, test } = setup();
    const result = await send({ code: "12" });
    expect(result).toMatchObject({
      ok: false,
      code: "invalid_variables",
      detail: expect.stringContaining("`code`"),
    });
    expect(test.submitted).toHaveLength(0);
    expect(state.tables.records.size + state.tables.messages.size + state.tables.counters.size).toBe(0);
  });

  it("rejected (test): `failed` with provider_rejected, answered 201", async () => {
    const { send } = setup({ test: [{ kind: "rejected", code: "provider_rejected", reason: "no" }] });
    expect(await send()).toMatchObject({
      ok: true,
      replayed: false,
      message: { status: "failed", error: { code: "provider_rejected" } },
    });
  });

  it("indeterminate, or an adapter that throws: `unknown` with provider_unavailable, never re-sent", async () => {
    const { send, test } = setup({
      test: [{ kind: "indeterminate", reason: "timeout" }, new Error("adapter bug")],
    });
    expect(await send()).toMatchObject({
      ok: true,
      message: { status: "unknown", error: { code: "provider_unavailable" } },
    });
    expect(await send({ idempotencyKey: "k-2" })).toMatchObject({ ok: true, message: { status: "unknown" } });
    expect(test.submitted).toHaveLength(2);
    expect(await send()).toMatchObject({ ok: true, replayed: true, message: { status: "unknown" } });
    expect(test.submitted).toHaveLength(2);
  });

  it("unreachable: 503, the message and the key are released, and a retry with the same key sends", async () => {
    const { send, test } = setup({ test: [{ kind: "unreachable", reason: "refused" }] });
    expect(await send()).toEqual({ ok: false, code: "provider_unavailable" });
    expect(state.tables.messages.size).toBe(0);
    expect(state.tables.records.size).toBe(0);
    expect(await send()).toMatchObject({ ok: true, replayed: false, message: { status: "submitted" } });
    expect(test.submitted).toHaveLength(2);
  });
});
