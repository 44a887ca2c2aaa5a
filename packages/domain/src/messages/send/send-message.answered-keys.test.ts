// sendMessage, answered keys in memory. Without a database: the harness
// (test/support/send-harness.ts) runs it over the in-memory store, a real keyring and scripted providers.
import { DatabaseUnavailableError } from "@sms/db";
import { describe, expect, it } from "vitest";
import { countFinds, FIRST_ANSWER, sendHarness, T0 } from "../../../test/support/send-harness.ts";
import { createAnsweredKeys } from "../answered-keys.ts";

describe("sendMessage: answered-keys", () => {
  const { state, setup, inFlightRecord } = sendHarness();

  describe("answered keys in memory", () => {
    it("replays a key this instance answered without the store, and refuses another body the same way", async () => {
      const { send, test } = setup({ answered: {} });
      const first = await send();
      if (!first.ok) throw new Error("the first send failed");
      state.tables.records.clear(); // whatever the store holds now, memory answers (within the revalidation age)
      state.now = new Date(T0.getTime() + 10_000);
      expect(await send()).toEqual({ ok: true, replayed: true, message: first.message });
      expect(await send({ code: "111111" })).toEqual({ ok: false, code: "idempotency_key_reused" });
      expect(state.tables.writeAheads).toHaveLength(1);
      expect(test.submitted).toHaveLength(1);
      // The project's minute, and the recipient's test minute and day (never a live one), each counted once.
      expect([...state.tables.counters.values()]).toEqual([1, 1, 1]);
    });

    it("checks a different body before the key it reuses: an invalid one is refused as invalid, not as reused", async () => {
      const { send } = setup({ answered: {} });
      await send();
      expect(await send({ code: "not digits" })).toMatchObject({ ok: false, code: "invalid_variables" });
      expect(await send({ code: "111111" })).toEqual({ ok: false, code: "idempotency_key_reused" });
    });

    it("remembers an answer read from the store, so the next replay skips it", async () => {
      const { send } = setup({ answered: {} });
      const record = await inFlightRecord();
      record.response = FIRST_ANSWER;
      expect(await send()).toEqual({ ok: true, replayed: true, message: FIRST_ANSWER });
      expect(state.tables.writeAheads).toHaveLength(1);
      expect(await send()).toEqual({ ok: true, replayed: true, message: FIRST_ANSWER });
      expect(state.tables.writeAheads).toHaveLength(1);
    });

    it("forgets an answer when its record expires: after 24 hours the key sends again", async () => {
      const { send, test } = setup({ answered: {} });
      const first = await send();
      state.now = new Date(T0.getTime() + 86_400_000);
      const again = await send();
      expect(again).toMatchObject({ ok: true, replayed: false });
      expect(again.ok && first.ok && again.message.id !== first.message.id).toBe(true);
      expect(test.submitted).toHaveLength(2);
    });

    it("answers from memory only for a short revalidation age: then the store decides, and a record gone there (purged early, lost in a failover) is not replayed", async () => {
      const { send, test, timer } = setup({ answered: { revalidateAfterMs: 15_000 } });
      const first = await send();
      if (!first.ok) throw new Error("the first send failed");
      // Within the age: from memory, even though the store lost the record.
      state.tables.records.clear();
      timer.elapsed += 14_000;
      expect(await send()).toEqual({ ok: true, replayed: true, message: first.message });
      // Past it: the store is asked, finds nothing, and this instance sends as every other one would.
      timer.elapsed += 2_000;
      const again = await send();
      expect(again).toMatchObject({ ok: true, replayed: false });
      expect(again.ok && again.message.id !== first.message.id).toBe(true);
      expect(test.submitted).toHaveLength(2);
    });

    it("a revalidated entry that the store still holds is remembered again, with the store's expiry", async () => {
      const { send, timer, store } = setup({ answered: { revalidateAfterMs: 15_000 } });
      const record = await inFlightRecord();
      record.response = FIRST_ANSWER;
      expect(await send()).toEqual({ ok: true, replayed: true, message: FIRST_ANSWER });
      timer.elapsed += 20_000;
      // Read again from the store (one read of the key's record, no write-ahead)…
      const finds = countFinds(store);
      expect(await send()).toEqual({ ok: true, replayed: true, message: FIRST_ANSWER });
      expect([finds(), state.tables.writeAheads.length]).toEqual([1, 1]);
      // …and then from memory again.
      expect(await send()).toEqual({ ok: true, replayed: true, message: FIRST_ANSWER });
      expect([finds(), state.tables.writeAheads.length]).toEqual([1, 1]);
      // The store's expiry bounds it: once the record expires, the key sends anew.
      state.now = new Date(record.expiresAt.getTime());
      expect(await send()).toMatchObject({ ok: true, replayed: false });
    });

    it("past the revalidation age, replays arriving together share one read of the record: no herd through the send path", async () => {
      const { send, test, timer, store } = setup({ answered: { revalidateAfterMs: 15_000 } });
      const first = await send();
      if (!first.ok) throw new Error("the first send failed");
      timer.elapsed += 20_000;
      const finds = countFinds(store);
      const replays = await Promise.all(Array.from({ length: 8 }, () => send()));
      expect(replays).toEqual(Array(8).fill({ ok: true, replayed: true, message: first.message }));
      // One read for the eight; nothing prepared, written or sent again.
      expect([finds(), state.tables.writeAheads.length, test.submitted.length]).toEqual([1, 1, 1]);
      // Another body with the key, while the read runs, is refused as reused once the read answers.
      timer.elapsed += 20_000;
      const [again, other] = await Promise.all([send(), send({ code: "111111" })]);
      expect(again).toEqual({ ok: true, replayed: true, message: first.message });
      expect(other).toEqual({ ok: false, code: "idempotency_key_reused" });
      expect([finds(), state.tables.writeAheads.length]).toEqual([2, 1]);
    });

    it("a reread that fails forgets the entry: the send's own path meets the database as any request does", async () => {
      const { send, test, timer, store } = setup({ answered: { revalidateAfterMs: 15_000 } });
      const first = await send();
      if (!first.ok) throw new Error("the first send failed");
      timer.elapsed += 20_000;
      const find = store.idempotency.find;
      let failures = 1;
      store.idempotency.find = async (...args) => {
        if (failures-- > 0) throw new DatabaseUnavailableError("connect_failed");
        return find(...args);
      };
      // The write-ahead finds the record: a replay all the same, nothing sent again.
      expect(await send()).toEqual({ ok: true, replayed: true, message: first.message });
      expect([state.tables.writeAheads.length, test.submitted.length]).toEqual([2, 1]);
    });

    it("keeps at most its number of entries, dropping the oldest first", () => {
      const answered = createAnsweredKeys({ maxEntries: 2 });
      const scope = (key: string) => ({ projectId: "prj_unit", mode: "test" as const, key });
      const record = {
        fingerprint: "f",
        responseBody: FIRST_ANSWER,
        expiresAt: new Date(T0.getTime() + 1_000),
      };
      for (const key of ["a", "b", "c"]) answered.remember(scope(key), record);
      expect(["a", "b", "c"].map((key) => answered.get(scope(key), T0) !== null)).toEqual([
        false,
        true,
        true,
      ]);
      expect(answered.get({ ...scope("b"), mode: "live" }, T0)).toBeNull();
    });
  });
});
