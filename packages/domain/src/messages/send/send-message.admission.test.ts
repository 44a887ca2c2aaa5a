import { describe, expect, it } from "vitest";
import { holdAtUbill, placesState, sendHarness, settleUntil } from "../../../test/support/send-harness.ts";
import { createSlots, type Slots } from "../../slots.ts";
import type { LivePlaces } from "./send-message.ts";

describe("sendMessage: admission", () => {
  const { state, setup, live } = sendHarness();

  describe("live keys", () => {
    /**
     * A paid project with 10 credits, and one place at uBill with room for `ahead` sends written ahead
     * beside it (a send waits up to a minute); `admitted` is the room (with no send ahead, the place's).
     */
    const onePlace = (ahead = 0) => {
      state.tables.hasPaidCredits = true;
      state.tables.balance = 10;
      const bound: LivePlaces = { places: createSlots(1), admitted: createSlots(1 + ahead), waitMs: 60_000 };
      const { send, live: ubill } = setup({ liveSubmissions: bound });
      if (!ubill) throw new Error("no live provider");
      return { bound, admitted: bound.admitted, send, ubill };
    };

    it("a burst of live sends waits for the live slots, holding no transaction, while test sends go on", async () => {
      state.tables.hasPaidCredits = true;
      state.tables.balance = 10;
      const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
      const burst = async (liveSlots: Slots | undefined) => {
        let open = () => {};
        const transactionGate = new Promise<void>((resolve) => {
          open = resolve;
        });
        const { send, transactions } = setup({ liveSlots, transactionGate });
        const sends = ["+995555000001", "+995555000002", "+995555000003"].map((to, index) =>
          send(live({ to, idempotencyKey: `burst-${liveSlots ? "slots" : "none"}-${index}` })),
        );
        await settle();
        const whileBlocked = { open: transactions.open, waiting: liveSlots?.waiting ?? 0 };
        // A test send needs no live slot: it is answered while the live ones wait.
        const testSend = await send({ idempotencyKey: `test-${liveSlots ? "slots" : "none"}` });
        open();
        const results = await Promise.all(sends);
        return { whileBlocked, testSend, results, mostOpen: transactions.mostOpen };
      };

      const slots = createSlots(1);
      const bounded = await burst(slots);
      expect(bounded.whileBlocked).toEqual({ open: 1, waiting: 2 });
      expect(bounded.testSend).toMatchObject({ ok: true, message: { status: "submitted" } });
      expect(bounded.mostOpen).toBe(1);
      for (const result of bounded.results)
        expect(result).toMatchObject({ ok: true, message: { status: "submitted" } });
      expect([slots.inUse, slots.waiting]).toEqual([0, 0]);

      // Without slots, all three hold a transaction at once.
      const unbounded = await burst(undefined);
      expect(unbounded.whileBlocked.open).toBe(3);
      expect(state.tables.balance).toBe(4);
    });

    it("a live send waits for a place at uBill holding nothing; one that finds none in time is a 503 with nothing written, and its retry is safe", async () => {
      const { bound, admitted, send, ubill } = onePlace();
      // uBill holds every send until the gate opens.
      const held = holdAtUbill(ubill.provider);
      const first = send(live({ to: "+995555000021", idempotencyKey: "place-1" }));
      await settleUntil(() => held.calls === 1);
      // The first holds the one place at uBill; the second waits for it with nothing written or reserved.
      const second = send(live({ to: "+995555000022", idempotencyKey: "place-2" }));
      await settleUntil(() => admitted.waiting === 1);
      const written = () => ({
        messages: state.tables.messages.size,
        records: [...state.tables.records.keys()],
        balance: state.tables.balance,
        ledger: state.tables.ledger.length,
      });
      expect(written()).toEqual({ messages: 1, records: ["prj_unit|live|place-1"], balance: 9, ledger: 1 });

      // One that finds no place within its wait: 503, nothing written, reserved or sent.
      const impatient = setup({ liveSubmissions: { ...bound, waitMs: 20 } });
      expect(await impatient.send(live({ to: "+995555000023", idempotencyKey: "place-3" }))).toEqual({
        ok: false,
        code: "provider_unavailable",
      });
      expect(written()).toEqual({ messages: 1, records: ["prj_unit|live|place-1"], balance: 9, ledger: 1 });
      expect(impatient.live?.submitted).toEqual([]);
      expect([admitted.inUse, admitted.waiting]).toEqual([1, 1]);

      held.open();
      for (const result of await Promise.all([first, second]))
        expect(result).toMatchObject({ ok: true, replayed: false, message: { status: "submitted" } });
      expect(held.calls).toBe(2);
      expect([admitted.inUse, admitted.waiting]).toEqual([0, 0]);
      // The refused key was never claimed: its retry is a fresh send.
      expect(await send(live({ to: "+995555000023", idempotencyKey: "place-3" }))).toMatchObject({
        ok: true,
        replayed: false,
        message: { status: "submitted" },
      });
      expect([state.tables.messages.size, state.tables.balance]).toEqual([3, 7]);
    });

    it("every place at uBill taken: a key already answered is replayed, or 409 for another body, without waiting for a place", async () => {
      const { bound, admitted, send, ubill } = onePlace();
      const answered = await send(live({ to: "+995555000041", idempotencyKey: "answered" }));
      expect(answered).toMatchObject({ ok: true, replayed: false });
      // uBill now holds the next send, and with it the one place.
      const held = holdAtUbill(ubill.provider);
      const holding = send(live({ to: "+995555000042", idempotencyKey: "holding" }));
      await settleUntil(() => admitted.inUse > 0);
      expect([admitted.inUse, admitted.waiting]).toEqual([1, 0]);
      // A send that waited for a place would be refused after 20 ms: these never wait.
      const impatient = setup({ liveSubmissions: { ...bound, waitMs: 20 } });
      expect(await impatient.send(live({ to: "+995555000041", idempotencyKey: "answered" }))).toEqual({
        ok: true,
        replayed: true,
        message: answered.ok ? answered.message : undefined,
      });
      expect(await impatient.send(live({ to: "+995555000049", idempotencyKey: "answered" }))).toEqual({
        ok: false,
        code: "idempotency_key_reused",
      });
      // A new key does wait, and is refused with nothing written.
      expect(await impatient.send(live({ to: "+995555000043", idempotencyKey: "new" }))).toEqual({
        ok: false,
        code: "provider_unavailable",
      });
      expect([state.tables.messages.size, state.tables.balance]).toEqual([2, 8]);
      held.open();
      expect(await holding).toMatchObject({ ok: true, replayed: false });
    });

    it("a send written ahead waits for the next place at uBill; one that finds none in time is released, a 503 with nothing kept, and its retry is safe", async () => {
      const { bound, send, ubill } = onePlace(1);
      const held = holdAtUbill(ubill.provider);
      const written = () => ({
        messages: state.tables.messages.size,
        records: [...state.tables.records.keys()].sort(),
        balance: state.tables.balance,
      });
      const first = send(live({ to: "+995555000051", idempotencyKey: "ahead-1" }));
      await settleUntil(() => held.calls === 1);

      // Admitted beside the one place, written ahead, and not given a place within its wait: released.
      const impatient = setup({ liveSubmissions: { ...bound, waitMs: 20 } });
      expect(await impatient.send(live({ to: "+995555000059", idempotencyKey: "ahead-late" }))).toEqual({
        ok: false,
        code: "provider_unavailable",
      });
      expect(written()).toEqual({ messages: 1, records: ["prj_unit|live|ahead-1"], balance: 9 });
      expect(held.calls).toBe(1);

      // Written ahead while the first is at uBill: its message and credit are already there.
      const second = send(live({ to: "+995555000052", idempotencyKey: "ahead-2" }));
      await settleUntil(() => bound.places.waiting === 1);
      expect(written()).toEqual({
        messages: 2,
        records: ["prj_unit|live|ahead-1", "prj_unit|live|ahead-2"],
        balance: 8,
      });
      expect(held.calls).toBe(1);
      // No room beside them: the third waits to be admitted, holding nothing.
      const third = send(live({ to: "+995555000053", idempotencyKey: "ahead-3" }));
      await settleUntil(() => bound.admitted.waiting === 1);
      expect(written().messages).toBe(2);

      held.open();
      for (const result of await Promise.all([first, second, third]))
        expect(result).toMatchObject({ ok: true, replayed: false, message: { status: "submitted" } });
      expect(held.calls).toBe(3);
      expect(placesState(bound)).toEqual([0, 0, 0, 0]);
      // The released key was given back: its retry sends, once.
      expect(await send(live({ to: "+995555000059", idempotencyKey: "ahead-late" }))).toMatchObject({
        ok: true,
        replayed: false,
        message: { status: "submitted" },
      });
      expect([state.tables.messages.size, state.tables.balance, held.calls]).toEqual([4, 6, 4]);
    });

    it("a place at uBill is given back however the send ends: uBill not reached, accepted, refused in the write-ahead, replayed", async () => {
      state.tables.hasPaidCredits = true;
      state.tables.balance = 1;
      const bound: LivePlaces = { places: createSlots(1), admitted: createSlots(2), waitMs: 60_000 };
      const { send } = setup({
        liveSubmissions: bound,
        live: [{ kind: "unreachable", reason: "connection refused" }],
      });
      // uBill not reached: 503, the credit refunded.
      expect(await send(live({ to: "+995555000031", idempotencyKey: "given-1" }))).toEqual({
        ok: false,
        code: "provider_unavailable",
      });
      expect(state.tables.balance).toBe(1);
      expect(placesState(bound)).toEqual([0, 0, 0, 0]);
      // Accepted: the one credit spent.
      expect(await send(live({ to: "+995555000032", idempotencyKey: "given-2" }))).toMatchObject({
        ok: true,
      });
      // Refused in the write-ahead (no credits left).
      expect(await send(live({ to: "+995555000033", idempotencyKey: "given-3" }))).toMatchObject({
        ok: false,
        code: "insufficient_credits",
      });
      expect(placesState(bound)).toEqual([0, 0, 0, 0]);
      // A replay of an answered key.
      expect(await send(live({ to: "+995555000032", idempotencyKey: "given-2" }))).toMatchObject({
        ok: true,
        replayed: true,
      });
      expect(placesState(bound)).toEqual([0, 0, 0, 0]);
    });

    it("a live send's record takes a live slot too, ahead of the write-aheads still waiting", async () => {
      state.tables.hasPaidCredits = true;
      state.tables.balance = 10;
      const inner = createSlots(1);
      const started: string[] = [];
      const liveSlots: Slots = {
        run: (work, options) =>
          inner.run(() => {
            started.push(options?.first ? "record" : "write-ahead");
            return work();
          }, options),
        size: inner.size,
        get inUse() {
          return inner.inUse;
        },
        get waiting() {
          return inner.waiting;
        },
      };
      const { send } = setup({ liveSlots });
      const results = await Promise.all(
        ["+995555000011", "+995555000012", "+995555000013"].map((to, index) =>
          send(live({ to, idempotencyKey: `ordered-${index}` })),
        ),
      );
      for (const result of results)
        expect(result).toMatchObject({ ok: true, message: { status: "submitted" } });
      expect(started.filter((kind) => kind === "record")).toHaveLength(3);
      // The first send's record did not wait for the third send's write-ahead.
      expect(started.indexOf("record")).toBeLessThan(started.lastIndexOf("write-ahead"));
      expect([inner.inUse, inner.waiting]).toEqual([0, 0]);
    });
  });
});
