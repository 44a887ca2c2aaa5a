// sendMessage, the database away: records and releases retried for so long. Without a database: the harness
// (test/support/send-harness.ts) runs it over the in-memory store, a real keyring and scripted providers.
import { DatabaseUnavailableError } from "@sms/db";
import { describe, expect, it } from "vitest";
import { sendHarness } from "../../../test/support/send-harness.ts";

describe("sendMessage: outage", () => {
  const { state, setup } = sendHarness();

  it("the database goes away after the provider accepted: recording is retried, and the send ends `submitted` with its reference", async () => {
    const { send, timer } = setup({
      test: [{ kind: "accepted", providerRef: "sim-kept" }],
      hooks: { outage: 4 },
    });
    const result = await send();
    expect(result).toMatchObject({ ok: true, replayed: false, message: { status: "submitted" } });
    if (!result.ok) throw new Error("unreachable");
    expect(state.tables.messages.get(result.message.id)).toMatchObject({
      status: "submitted",
      providerRef: "sim-kept",
    });
    expect(state.tables.records.get("prj_unit|test|k-1")?.response).toEqual(result.message);
    expect(timer.sleeps).toBe(4);
    expect(timer.elapsed).toBeLessThan(30_000);
  });

  it("recording is retried only for so long: then the outage stands; a test send leaves only its unanswered claim", async () => {
    const { send, timer } = setup({ hooks: { outage: 1_000 } });
    await expect(send()).rejects.toBeInstanceOf(DatabaseUnavailableError);
    expect(timer.elapsed).toBe(30_000);
    expect(state.tables.messages.size).toBe(0);
    expect([...state.tables.records.values()].map((record) => record.response)).toEqual([null]);
  });

  it("an error that is not an outage is not retried", async () => {
    const { send, timer } = setup({ hooks: { outage: 1, outageError: () => new Error("a bug") } });
    await expect(send()).rejects.toThrow("a bug");
    expect(timer.sleeps).toBe(0);
  });

  it("unreachable while the database is away: the release is retried too, and the key is free again", async () => {
    const { send } = setup({ test: [{ kind: "unreachable", reason: "refused" }], hooks: { outage: 2 } });
    expect(await send()).toEqual({ ok: false, code: "provider_unavailable" });
    expect(state.tables.messages.size + state.tables.records.size).toBe(0);
  });
});
