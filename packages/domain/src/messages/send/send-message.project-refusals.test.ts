import { describe, expect, it } from "vitest";
import { sendHarness, T0 } from "../../../test/support/send-harness.ts";
import { createProjectRefusals } from "./project-refusals.ts";

describe("sendMessage: project-refusals", () => {
  const { state, setup, live, ways } = sendHarness();

  describe("live keys", () => {
    it("a paid project refused as a whole (its minute used up) goes straight to the transaction until that minute ends; recipient refusals are not remembered", async () => {
      state.tables.hasPaidCredits = true;
      state.tables.balance = 10;
      const { send } = setup({ perMinute: 2, projectRefusals: createProjectRefusals() });
      const to = (n: number) => `+99555500000${n}`;
      expect(await send(live({ to: to(1), idempotencyKey: "m-1" }))).toMatchObject({ ok: true });
      // The recipient's minute (2) is used up by two sends to one number: refused, not remembered.
      expect(await send(live({ to: to(1), idempotencyKey: "m-2" }))).toMatchObject({ ok: true });
      expect(await send(live({ to: to(1), idempotencyKey: "m-3" }))).toMatchObject({
        ok: false,
        code: "rate_limited",
        subject: "project",
      });
      // That refusal was the project's (its minute was used up too): remembered.
      expect(ways()).toEqual(["statement", "statement", "statement", "transaction"]);
      const before = state.tables.writeAheads.length;
      for (const [n, key] of [
        [2, "m-4"],
        [3, "m-5"],
      ] as const)
        expect(await send(live({ to: to(n), idempotencyKey: key }))).toMatchObject({
          ok: false,
          code: "rate_limited",
          subject: "project",
        });
      expect(ways(before)).toEqual(["transaction", "transaction"]);
      // The next minute, the statement again.
      state.now = new Date(T0.getTime() + 60_000);
      const next = state.tables.writeAheads.length;
      expect(await send(live({ to: to(4), idempotencyKey: "m-6" }))).toMatchObject({ ok: true });
      expect(ways(next)).toEqual(["statement"]);
      expect(state.tables.balance).toBe(7);
    });

    it("a recipient refusal alone is not remembered: the project's next send to another number uses the statement", async () => {
      state.tables.hasPaidCredits = true;
      state.tables.balance = 10;
      const { send } = setup({
        perRecipient: { perMinute: 1, perDay: 10 },
        projectRefusals: createProjectRefusals(),
      });
      expect(await send(live({ to: "+995555000001", idempotencyKey: "r-1" }))).toMatchObject({ ok: true });
      expect(await send(live({ to: "+995555000001", idempotencyKey: "r-2" }))).toMatchObject({
        ok: false,
        code: "rate_limited",
        subject: "recipient",
      });
      expect(await send(live({ to: "+995555000002", idempotencyKey: "r-3" }))).toMatchObject({ ok: true });
      expect(ways()).toEqual(["statement", "statement", "transaction", "statement"]);
    });

    it("a project without paid credits goes straight to the transaction for the rest of the minute; once it has paid credits, its sends use the statement again", async () => {
      state.tables.hasPaidCredits = false;
      state.tables.balance = 10;
      const { send } = setup({ projectRefusals: createProjectRefusals() });
      for (const n of [1, 2, 3])
        expect(await send(live({ to: `+99555500000${n}`, idempotencyKey: `f-${n}` }))).toMatchObject({
          ok: true,
        });
      expect(ways()).toEqual(["statement", "transaction", "transaction", "transaction"]);
      // Paid credits granted meanwhile: the transaction serves the send, and the project is forgotten.
      state.tables.hasPaidCredits = true;
      const granted = state.tables.writeAheads.length;
      for (const n of [4, 5])
        expect(await send(live({ to: `+99555500000${n}`, idempotencyKey: `f-${n}` }))).toMatchObject({
          ok: true,
        });
      expect(ways(granted)).toEqual(["transaction", "statement"]);
    });

    it("short of credits: remembered for the minute; every refusal still names insufficient_credits", async () => {
      state.tables.hasPaidCredits = true;
      state.tables.balance = 0;
      const { send } = setup({ projectRefusals: createProjectRefusals() });
      for (const n of [1, 2])
        expect(await send(live({ to: `+99555500000${n}`, idempotencyKey: `c-${n}` }))).toEqual({
          ok: false,
          code: "insufficient_credits",
        });
      expect(ways()).toEqual(["statement", "transaction", "transaction"]);
      expect(state.tables.messages.size).toBe(0);
    });
  });
});
