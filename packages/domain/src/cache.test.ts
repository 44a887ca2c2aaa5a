import { describe, expect, it } from "vitest";
import { cacheStats, createCache } from "./cache.ts";

describe("createCache", () => {
  it("serves an entry for its TTL on the caller's clock, never before it was stored, then drops it", () => {
    const cache = createCache<string, number>({ namespace: "t", maxEntries: 10, ttlMs: 100 });
    cache.set("a", 1, 1_000);
    expect(cache.get("a", 1_000)).toBe(1);
    expect(cache.get("a", 1_099)).toBe(1);
    expect(cache.get("a", 999)).toBeUndefined();
    cache.set("a", 1, 1_000);
    expect(cache.entry("a", 1_100)).toMatchObject({ value: 1, fresh: false });
    expect(cache.entry("a", 1_000)).toBeUndefined();
    cache.setUntil("b", 2, 5_000);
    expect(cache.get("b", 0)).toBe(2);
    expect(cache.get("b", 5_000)).toBeUndefined();
    expect(cache.stats()).toMatchObject({ namespace: "t", size: 0, hits: 3, expired: 3 });
  });

  it("keeps at most maxEntries, pushing out the oldest set first (a read does not refresh)", () => {
    const cache = createCache<string, number>({ namespace: "t", maxEntries: 2 });
    cache.set("a", 1, 0);
    cache.set("b", 2, 0);
    expect(cache.get("a", 0)).toBe(1);
    cache.set("c", 3, 0);
    expect([cache.get("a", 0), cache.get("b", 0), cache.get("c", 0)]).toEqual([undefined, 2, 3]);
    cache.set("b", 4, 0);
    cache.set("d", 5, 0);
    expect([cache.get("b", 0), cache.get("c", 0), cache.get("d", 0)]).toEqual([4, undefined, 5]);
    expect(cache.stats()).toMatchObject({ size: 2, evicted: 2 });
    const none = createCache<string, number>({ namespace: "t", maxEntries: 0 });
    none.set("a", 1, 0);
    expect(none.get("a", 0)).toBeUndefined();
  });

  it("loads a key once for every caller meanwhile, and stores what `keep` keeps", async () => {
    const cache = createCache<string, number | null>({ namespace: "t", maxEntries: 10, ttlMs: 100 });
    let loads = 0;
    let release: (value: number | null) => void = () => undefined;
    const load = () => {
      loads++;
      return new Promise<number | null>((resolve) => {
        release = resolve;
      });
    };
    const first = cache.load("a", 0, load);
    const second = cache.load("a", 0, load);
    expect(cache.loading("a")).toBe(first);
    release(7);
    expect(await Promise.all([first, second])).toEqual([7, 7]);
    expect(loads).toBe(1);
    expect(cache.loading("a")).toBeUndefined();
    expect(cache.get("a", 50)).toBe(7);
    const dropped = cache.load("b", 0, load, (value) => value !== null);
    release(null);
    expect(await dropped).toBeNull();
    expect(cache.entry("b", 0)).toBeUndefined();
    expect(cache.stats()).toMatchObject({ loads: 2, joined: 1 });
  });

  it("stores nothing from a load that began before clear(), nor from one that failed", async () => {
    const cache = createCache<string, number>({ namespace: "t", maxEntries: 10 });
    let release: (value: number) => void = () => undefined;
    const pending = cache.load("a", 0, () => new Promise<number>((resolve) => (release = resolve)));
    cache.clear();
    expect(cache.loading("a")).toBeUndefined();
    release(1);
    expect(await pending).toBe(1);
    expect(cache.get("a", 0)).toBeUndefined();
    await expect(cache.load("a", 0, () => Promise.reject(new Error("down")))).rejects.toThrow("down");
    expect(cache.get("a", 0)).toBeUndefined();
    const later = await cache.load(
      "a",
      () => 40,
      () => Promise.resolve(2),
    );
    expect(later).toBe(2);
    expect(cache.entry("a", 40)).toMatchObject({ storedAt: 40, fresh: true });
  });

  it("cacheStats sums every live cache of a namespace (what /metrics serves)", () => {
    const namespace = `sum-${Math.random()}`;
    const a = createCache<string, number>({ namespace, maxEntries: 1 });
    const b = createCache<string, number>({ namespace, maxEntries: 10 });
    a.set("x", 1, 0);
    a.set("y", 2, 0);
    b.set("x", 3, 0);
    expect(a.get("y", 0)).toBe(2);
    expect(b.get("x", 0)).toBe(3);
    expect(b.get("z", 0)).toBeUndefined();
    expect(cacheStats().find((stats) => stats.namespace === namespace)).toEqual({
      namespace,
      size: 2,
      hits: 2,
      misses: 1,
      expired: 0,
      evicted: 1,
      loads: 0,
      joined: 0,
    });
  });
});
