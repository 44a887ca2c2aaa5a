// latestCount (metrics.ts): the backlog gauge's count, served fresh when it
// finishes within the deadline and as the last one otherwise, never started
// twice, and never failing the scrape. Shown with counts that the test ends
// itself; the PostgreSQL case (a locked table) is in
// test/metrics.integration.test.ts.
import { describe, expect, it } from "vitest";
import { latestCount } from "./metrics.ts";

/** The next turn of the event loop: a count started by a read has begun by then. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * A count the test answers (or fails) when it likes, counting how often it was
 * started. The deadlines below are timers too, so one answered after `tick()`
 * is always in time, whatever the machine's load: timers fire in the order
 * they are due.
 */
function controlledCount() {
  const pending: Array<{ resolve(value: number): void; reject(error: Error): void }> = [];
  return {
    started: () => pending.length,
    count: () =>
      new Promise<number>((resolve, reject) => {
        pending.push({ resolve, reject });
      }),
    answer: (value: number) => pending.at(-1)?.resolve(value),
    fail: () => pending.at(-1)?.reject(new Error("the database went away")),
  };
}

describe("latestCount", () => {
  it("serves a count that finishes in time", async () => {
    let calls = 0;
    const latest = latestCount(async () => ++calls, 1_000);
    expect(await latest.read()).toBe(1);
    expect(await latest.read()).toBe(2);
    expect(latest.ageSeconds()).toBeLessThan(1);
  });

  it("serves the last count while a new one is late, and starts no second one meanwhile", async () => {
    const source = controlledCount();
    const latest = latestCount(source.count, 200);
    const first = latest.read();
    await tick();
    source.answer(7);
    expect(await first).toBe(7);

    // The second count is late: the first one's answer stands, and the third read waits for the second
    // count again instead of starting another.
    expect(await latest.read()).toBe(7);
    expect(await latest.read()).toBe(7);
    expect(source.started()).toBe(2);

    // The late count finishes after all: its answer is kept, and served while the next count is late.
    source.answer(9);
    await tick();
    expect(await latest.read()).toBe(9);
    expect(source.started()).toBe(3);
  });

  it("is null before any count has finished, and keeps the last count when one fails", async () => {
    const source = controlledCount();
    const latest = latestCount(source.count, 200);
    expect(await latest.read()).toBeNull();
    source.answer(3);
    await tick();
    const failing = latest.read();
    await tick();
    source.fail();
    expect(await failing).toBe(3);
  });

  it("survives a count that throws before it returns a promise", async () => {
    const latest = latestCount((): Promise<number> => {
      throw new Error("not connected");
    }, 20);
    expect(await latest.read()).toBeNull();
  });
});
