// The read replica's lag watch (replica-lag.ts), with a hand-moved clock and
// scripted measurements: behind only when the standby lacks WAL older than the
// window; a paused standby that lacks nothing is not behind; measured at most
// once per interval (concurrent reads share one measurement); each episode is
// reported once.
import { describe, expect, it } from "vitest";
import { lagCheckInterval, type ReplicaLagState, watchReplicaLag } from "./replica-lag.ts";

const WINDOW_MS = 2_000;
const EVERY_MS = 500;

function harness(answers: Array<number | null | Error>) {
  let clockMs = 10_000;
  let measured = 0;
  const changes: ReplicaLagState[] = [];
  const pending = [...answers];
  const watch = watchReplicaLag({
    measure: async () => {
      measured++;
      const next = pending.length > 1 ? pending.shift() : pending[0];
      if (next instanceof Error) throw next;
      return next ?? null;
    },
    windowMs: WINDOW_MS,
    checkEveryMs: EVERY_MS,
    monotonicMs: () => clockMs,
    onChange: (state) => changes.push(state),
  });
  return {
    watch,
    changes,
    measured: () => measured,
    advance(ms: number) {
      clockMs += ms;
    },
  };
}

describe("the read replica's lag watch", () => {
  it("is not behind while the standby has replayed what the primary wrote, however long its replay is paused", async () => {
    // 0: replayed everything the primary had written (replicationLagSeconds), even with replay paused.
    const h = harness([0]);
    for (let i = 0; i < 10; i++) {
      expect(await h.watch.check()).toEqual({ behind: false });
      h.advance(WINDOW_MS);
    }
    expect(h.changes).toEqual([]);
  });

  it("is behind once the standby lacks WAL older than the window, and carries the lag forward between measurements", async () => {
    // Caught up, then lacking WAL with its last replayed transaction 0.5 s old, and so on.
    const h = harness([0, 0.5]);
    expect(await h.watch.check()).toEqual({ behind: false });
    h.advance(EVERY_MS);
    // What it lacks was written after the caught-up measurement 0.5 s ago: not yet past the window.
    expect(await h.watch.check()).toEqual({ behind: false });
    // Past the window since that measurement: behind, without waiting for another measurement.
    h.advance(WINDOW_MS - EVERY_MS + 1);
    expect(h.watch.current()).toEqual({ behind: true, lagMs: WINDOW_MS + 1 });
    expect(h.changes).toEqual([{ behind: true, lagMs: WINDOW_MS + 1 }]);
  });

  it("bounds an old last-replayed transaction by the last time the standby was found caught up", async () => {
    // An idle primary, then one write: the last replayed transaction is an hour old, but the standby
    // was caught up 0.5 s ago, so what it lacks is at most 0.5 s old.
    const h = harness([0, 3_600]);
    await h.watch.check();
    h.advance(EVERY_MS);
    expect(await h.watch.check()).toEqual({ behind: false });
    // Without a caught-up measurement to bound it, the hour counts.
    const fresh = harness([3_600]);
    expect(await fresh.watch.check()).toMatchObject({ behind: true });
  });

  it("reports one episode once: behind, then caught up", async () => {
    const h = harness([5, 5, 5, 0]);
    for (let i = 0; i < 3; i++) {
      expect((await h.watch.check()).behind).toBe(true);
      h.advance(EVERY_MS);
    }
    expect(await h.watch.check()).toEqual({ behind: false });
    expect(await h.watch.check()).toEqual({ behind: false });
    expect(h.changes.map((change) => change.behind)).toEqual([true, false]);
  });

  it("measures at most once per interval; concurrent checks share one measurement", async () => {
    const h = harness([0]);
    await Promise.all(Array.from({ length: 5 }, () => h.watch.check()));
    expect(h.measured()).toBe(1);
    h.advance(EVERY_MS - 1);
    await h.watch.check();
    expect(h.measured()).toBe(1);
    h.advance(1);
    await h.watch.check();
    expect(h.measured()).toBe(2);
  });

  it("keeps the last answer when a measurement fails, and is never behind for a server that is not a standby", async () => {
    const h = harness([5, new Error("connection refused")]);
    expect((await h.watch.check()).behind).toBe(true);
    h.advance(EVERY_MS);
    expect((await h.watch.check()).behind).toBe(true);
    expect(h.measured()).toBe(2);
    const promoted = harness([null]);
    expect(await promoted.watch.check()).toEqual({ behind: false });
  });

  it("measures well inside the window", () => {
    expect(lagCheckInterval(30_000)).toBe(1_000);
    expect(lagCheckInterval(2_000)).toBe(500);
    expect(lagCheckInterval(1)).toBe(1);
  });
});
