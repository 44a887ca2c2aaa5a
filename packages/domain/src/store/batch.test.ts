import { describe, expect, it } from "vitest";
import { batcher } from "./batch.ts";

class Outage extends Error {}

/** A batch runner whose batches end when the test says so. */
function controlledRun(answer: (items: number[]) => number[] | Error = (items) => items.map((n) => n * 10)) {
  const batches: number[][] = [];
  const pending: Array<() => void> = [];
  const run = (items: number[]) => {
    batches.push(items);
    return new Promise<number[]>((resolve, reject) => {
      pending.push(() => {
        const result = answer(items);
        if (result instanceof Error) reject(result);
        else resolve(result);
      });
    });
  };
  /** Ends the oldest running batch and lets its callers (and the next batch) go on. */
  const finishOne = async () => {
    pending.shift()?.();
    await new Promise((resolve) => setTimeout(resolve, 0));
  };
  return { run, batches, finishOne };
}

const settled = <T>(promise: Promise<T>) =>
  promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );

describe("batcher", () => {
  it("runs a call at once, alone, when nothing else runs", async () => {
    const { run, batches, finishOne } = controlledRun();
    const call = batcher(run, { maxBatch: 8, maxInFlight: 2, retryAlone: () => true });
    const result = call(1);
    expect(batches).toEqual([[1]]);
    await finishOne();
    expect(await result).toBe(10);
  });

  it("calls made while maxInFlight batches run go together in the next, in order, at most maxBatch each", async () => {
    const { run, batches, finishOne } = controlledRun();
    const call = batcher(run, { maxBatch: 3, maxInFlight: 2, retryAlone: () => true });
    const results = [1, 2, 3, 4, 5, 6, 7].map((n) => call(n));
    expect(batches).toEqual([[1], [2]]);
    await finishOne();
    expect(batches).toEqual([[1], [2], [3, 4, 5]]);
    await finishOne();
    expect(batches).toEqual([[1], [2], [3, 4, 5], [6, 7]]);
    await finishOne();
    await finishOne();
    expect(await Promise.all(results)).toEqual([10, 20, 30, 40, 50, 60, 70]);
  });

  it("an outage fails every call of the batch, without running them again", async () => {
    const { run, batches, finishOne } = controlledRun((items) =>
      items.length > 1 ? new Outage("connection lost") : items.map((n) => n),
    );
    const call = batcher(run, {
      maxBatch: 8,
      maxInFlight: 1,
      retryAlone: (error) => !(error instanceof Outage),
    });
    const results = [1, 2, 3].map((n) => settled(call(n)));
    await finishOne();
    await finishOne();
    const [first, second, third] = await Promise.all(results);
    expect(first).toEqual({ value: 1 });
    expect(second).toEqual({ error: expect.any(Outage) });
    expect(third).toEqual({ error: expect.any(Outage) });
    expect(batches).toEqual([[1], [2, 3]]);
  });

  it("any other failure of a batch runs each of its calls again alone: one call's failure is its own", async () => {
    const { run, batches, finishOne } = controlledRun((items) =>
      items.includes(3) ? new Error("bad row") : items.map((n) => n * 10),
    );
    const call = batcher(run, {
      maxBatch: 8,
      maxInFlight: 1,
      retryAlone: (error) => !(error instanceof Outage),
    });
    const results = [1, 2, 3, 4].map((n) => settled(call(n)));
    for (let i = 0; i < 5; i++) await finishOne();
    expect(await Promise.all(results)).toEqual([
      { value: 10 },
      { value: 20 },
      { error: new Error("bad row") },
      { value: 40 },
    ]);
    expect(batches).toEqual([[1], [2, 3, 4], [2], [3], [4]]);
  });

  it("a batch answered with the wrong number of results fails rather than answering the wrong calls", async () => {
    const { run, finishOne } = controlledRun((items) => items.slice(1));
    const call = batcher(run, { maxBatch: 8, maxInFlight: 1, retryAlone: () => false });
    const result = settled(call(1));
    await finishOne();
    expect(await result).toEqual({ error: new Error("a batch of 1 got 0 results") });
  });
});
