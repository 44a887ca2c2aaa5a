// sendMessage, live keys: credits, the free tier, refunds and the recovery sweep. Without a database: the harness
// (test/support/send-harness.ts) runs it over the in-memory store, a real keyring and scripted providers.
import { DatabaseUnavailableError } from "@sms/db";
import { describe, expect, it } from "vitest";
import { sendHarness } from "../../../test/support/send-harness.ts";

describe("sendMessage: live-credits", () => {
  const { state, setup, live } = sendHarness();

  describe("live keys", () => {
    it("the recovery sweep decided first: its stored answer stands", async () => {
      state.tables.balance = 3;
      const { send } = setup({ hooks: { sweepFirst: true } });
      expect(await send(live())).toMatchObject({ ok: true, replayed: false, message: { status: "unknown" } });
    });

    it("recording is retried only for so long: then the outage stands, and the message stays queued for the sweep", async () => {
      state.tables.balance = 3;
      const { send, timer } = setup({ hooks: { outage: 1_000 } });
      await expect(send(live())).rejects.toBeInstanceOf(DatabaseUnavailableError);
      expect(timer.elapsed).toBe(30_000);
      expect([...state.tables.messages.values()].map((row) => row.status)).toEqual(["queued"]);
    });

    it("reserve one credit per segment and take free-tier segments; both stay for an accepted send", async () => {
      state.tables.balance = 3;
      const { send, live: provider, test } = setup();
      const result = await send(live());
      expect(result).toMatchObject({ ok: true, message: { status: "submitted" } });
      expect(test.submitted).toHaveLength(0);
      expect(provider?.submitted).toHaveLength(1);
      expect(state.tables.balance).toBe(2);
      expect(
        [...state.tables.counters.entries()].find(([key]) => key.startsWith("free_tier_segments:"))?.[1],
      ).toBe(1);
      const row = [...state.tables.messages.values()][0];
      expect(row).toMatchObject({ provider: "ubill", creditsReserved: 1, nextCheckAt: state.now });
    });

    it("a rejection refunds the credits and gives the free-tier segments back", async () => {
      state.tables.balance = 3;
      const { send } = setup({ live: [{ kind: "rejected", code: "sender_not_allowed", reason: "brand" }] });
      expect(await send(live())).toMatchObject({
        ok: true,
        message: { status: "failed", error: { code: "sender_not_allowed" } },
      });
      expect(state.tables.balance).toBe(3);
      expect(state.tables.ledger.map((entry) => entry.kind)).toEqual(["reservation", "refund"]);
      expect(
        [...state.tables.counters.entries()].find(([key]) => key.startsWith("free_tier_segments:"))?.[1],
      ).toBe(0);
    });

    it("an indeterminate answer keeps the credits charged", async () => {
      state.tables.balance = 3;
      const { send } = setup({ live: [{ kind: "indeterminate", reason: "timeout" }] });
      expect(await send(live())).toMatchObject({ ok: true, message: { status: "unknown" } });
      expect(state.tables.balance).toBe(2);
    });

    it("unreachable refunds and releases, with no message left; only the write-ahead waits for a flush (the release commits durably)", async () => {
      state.tables.balance = 3;
      const { send } = setup({ live: [{ kind: "unreachable", reason: "refused" }] });
      expect(await send(live())).toEqual({ ok: false, code: "provider_unavailable" });
      expect(state.tables.flushes).toBe(1);
      expect(state.tables.balance).toBe(3);
      expect(state.tables.messages.size).toBe(0);
      expect(
        [...state.tables.counters.entries()].find(([key]) => key.startsWith("free_tier_segments:"))?.[1],
      ).toBe(0);
    });

    it("unreachable gives back the minute and per-recipient counters too: retries during an outage never lock a number out", async () => {
      state.tables.balance = 20;
      const outage = Array.from({ length: 8 }, () => ({ kind: "unreachable" as const, reason: "refused" }));
      const { send, live: provider } = setup({
        live: [...outage, { kind: "accepted", providerRef: "ref-after" }],
        perRecipient: { perMinute: 5, perDay: 20 },
      });
      for (let i = 0; i < 8; i++) {
        expect(await send(live())).toEqual({ ok: false, code: "provider_unavailable" });
        // Nothing counted stays counted: every counter the write-ahead moved is back at 0.
        expect([...state.tables.counters.values()].every((count) => count === 0)).toBe(true);
      }
      // uBill is back: the same key sends, counted once.
      expect(await send(live())).toMatchObject({
        ok: true,
        replayed: false,
        message: { status: "submitted" },
      });
      expect(provider?.submitted).toHaveLength(9);
      const counts = [...state.tables.counters.entries()].filter(
        ([key]) => !key.startsWith("free_tier_segments:"),
      );
      expect(counts.map(([, count]) => count)).toEqual([1, 1, 1]);
      expect(state.tables.balance).toBe(19);
    });

    it("with no live provider configured: 503 and nothing kept, no counter moved", async () => {
      state.tables.balance = 3;
      const { send } = setup({ live: null });
      expect(await send(live())).toEqual({ ok: false, code: "provider_unavailable" });
      expect(state.tables.balance).toBe(3);
      expect([...state.tables.counters.values()].every((count) => count === 0)).toBe(true);
    });

    it("with no live provider configured: 503 and nothing kept", async () => {
      state.tables.balance = 3;
      const { send } = setup({ live: null });
      expect(await send(live())).toEqual({ ok: false, code: "provider_unavailable" });
      expect(state.tables.balance).toBe(3);
    });

    it("too few credits: 402, the write-ahead rolled back, nothing sent", async () => {
      state.tables.balance = 0;
      const { send, live: provider } = setup();
      expect(await send(live())).toEqual({ ok: false, code: "insufficient_credits" });
      expect(provider?.submitted).toHaveLength(0);
      expect(state.tables.messages.size + state.tables.records.size).toBe(0);
      expect(
        [...state.tables.counters.entries()].find(([key]) => key.startsWith("free_tier_segments:")),
      ).toBeUndefined();
    });

    it("the free tier's daily segments used up: daily_limit_reached, rolled back; paid credits lift it", async () => {
      state.tables.balance = 10;
      const { send } = setup({ freeTier: 1 });
      expect((await send(live())).ok).toBe(true);
      const refused = await send(live({ idempotencyKey: "k-2" }));
      expect(refused).toMatchObject({
        ok: false,
        code: "daily_limit_reached",
        subject: "free_tier",
        limit: { limit: 1, remaining: 0 },
      });
      expect(state.tables.messages.size).toBe(1);
      expect(state.tables.balance).toBe(9);
      state.tables.hasPaidCredits = true;
      expect(await send(live({ idempotencyKey: "k-2" }))).toMatchObject({ ok: true, replayed: false });
      expect(state.tables.balance).toBe(8);
    });
  });
});
