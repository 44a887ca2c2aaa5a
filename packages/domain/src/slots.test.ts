import { describe, expect, it } from "vitest";
import { createSlots, SlotWaitTimeout } from "./slots.ts";

/** A promise and the function that settles it. */
function deferred() {
  let resolve = () => {};
  let reject = (_error: Error) => {};
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("slots", () => {
  it("runs at most `size` at once; the rest start in arrival order as slots come free", async () => {
    const slots = createSlots(2);
    const gates = [deferred(), deferred(), deferred(), deferred()];
    const started: number[] = [];
    const runs = gates.map((gate, index) =>
      slots.run(async () => {
        started.push(index);
        await gate.promise;
        return index;
      }),
    );
    await settle();
    expect(started).toEqual([0, 1]);
    expect([slots.inUse, slots.waiting]).toEqual([2, 2]);
    gates[1]?.resolve();
    await settle();
    expect(started).toEqual([0, 1, 2]);
    expect([slots.inUse, slots.waiting]).toEqual([2, 1]);
    for (const gate of gates) gate.resolve();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3]);
    expect([slots.inUse, slots.waiting]).toEqual([0, 0]);
  });

  it("serves work run `first` before every other waiter, in its own arrival order", async () => {
    const slots = createSlots(1);
    const holder = deferred();
    const started: string[] = [];
    const run = (name: string, first = false) =>
      slots.run(
        async () => {
          started.push(name);
        },
        { first },
      );
    const held = slots.run(() => holder.promise);
    const runs = [run("new-1"), run("new-2"), run("finish-1", true), run("finish-2", true)];
    await settle();
    expect(slots.waiting).toBe(4);
    holder.resolve();
    await Promise.all([held, ...runs]);
    expect(started).toEqual(["finish-1", "finish-2", "new-1", "new-2"]);
    expect([slots.inUse, slots.waiting]).toEqual([0, 0]);
  });

  it("gives the slot back when the work throws, and passes the error on", async () => {
    const slots = createSlots(1);
    const failing = slots.run(async () => {
      throw new Error("boom");
    });
    const next = slots.run(async () => "next");
    await expect(failing).rejects.toThrow("boom");
    expect(await next).toBe("next");
    expect(slots.inUse).toBe(0);
  });

  it("work that waits longer than its timeoutMs never runs: SlotWaitTimeout, and the others keep their turn", async () => {
    const slots = createSlots(1);
    const holder = deferred();
    const started: string[] = [];
    const run = (name: string, timeoutMs?: number) =>
      slots.run(
        async () => {
          started.push(name);
          return name;
        },
        timeoutMs === undefined ? {} : { timeoutMs },
      );
    const held = slots.run(() => holder.promise);
    const patient = run("patient");
    const hasty = run("hasty", 20);
    const alsoHasty = run("also-hasty", 20);
    await expect(hasty).rejects.toBeInstanceOf(SlotWaitTimeout);
    await expect(alsoHasty).rejects.toThrow("no slot became free within 20 ms");
    expect(slots.waiting).toBe(1);
    holder.resolve();
    expect(await patient).toBe("patient");
    await held;
    expect(started).toEqual(["patient"]);
    expect([slots.inUse, slots.waiting]).toEqual([0, 0]);
  });

  it("work with a timeoutMs that gets its slot in time runs, and is not failed later", async () => {
    const slots = createSlots(1);
    const holder = deferred();
    const held = slots.run(() => holder.promise);
    const waiting = slots.run(async () => "ran", { timeoutMs: 60_000 });
    await settle();
    expect(slots.waiting).toBe(1);
    holder.resolve();
    await held;
    expect(await waiting).toBe("ran");
    // Its slot is free again: work that needs none of the waiting runs at once.
    expect(await slots.run(async () => "after", { timeoutMs: 1 })).toBe("after");
    expect([slots.inUse, slots.waiting]).toEqual([0, 0]);
  });

  it("refuses a size that is not a positive integer", () => {
    expect(() => createSlots(0)).toThrow(RangeError);
    expect(() => createSlots(1.5)).toThrow(RangeError);
  });
});
