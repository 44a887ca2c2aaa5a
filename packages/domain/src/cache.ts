// The one in-process cache mechanism: each cache is a namespace declared with
// its size bound and TTL, and gets single flight (loads of one key share one
// promise) and metrics (its own counters) from here, instead of a hand-made
// Map each. Entries leave oldest-set first when the namespace is full (a Map
// keeps insertion order, so the oldest entry is the first key; a read does not
// make an entry younger), and are dropped when read after they expire.
//
// The cache has no clock of its own: every caller passes `now` on the clock
// its namespace lives by (the monotonic timer, the injected wall clock, a
// send's clock), so tests drive it as they drive the rest.
//
// Why not lru-cache: its TTLs run on its own clock (performance.now, or a
// `perf` object for all of a cache), where these namespaces need the caller's
// (an injected wall clock in tests, a send's clock), its `fetch` caches every
// value it loads (these keep some, drop others, and drop all loads begun
// before a `clear()`), and it would be one more dependency in what Deno loads
// at start-up, for some sixty lines.

/** A namespace's counters since it was created. */
export type CacheStats = {
  namespace: string;
  size: number;
  /** Reads that found a fresh entry. */
  hits: number;
  /** Reads that found nothing, or an entry that had expired (counted in `expired` too). */
  misses: number;
  expired: number;
  /** Entries pushed out by newer ones (maxEntries). */
  evicted: number;
  /** Loads run, and loads that joined one already running (single flight). */
  loads: number;
  joined: number;
};

export type CacheEntry<V> = { value: V; storedAt: number; expiresAt: number };

/** An entry as a read found it: `fresh`, or expired (and dropped by that read). */
export type CacheRead<V> = CacheEntry<V> & { fresh: boolean };

export type Cache<K, V> = {
  /** The value of a fresh entry at `now` (stored no later than `now`, not yet expired); undefined otherwise. */
  get(key: K, now: number): V | undefined;
  /**
   * The entry itself, with when it was stored (for a refresh ahead of its expiry), and whether it is
   * fresh at `now`: an entry that is not is dropped by this read, but still told apart from none at all.
   */
  entry(key: K, now: number): CacheRead<V> | undefined;
  /** Stores `value` as the newest entry, fresh from `now` for the namespace's ttlMs (or `ttlMs`). */
  set(key: K, value: V, now: number, ttlMs?: number): void;
  /** Stores `value` as the newest entry, fresh until `expiresAt` whenever it is read before that. */
  setUntil(key: K, value: V, expiresAt: number): void;
  delete(key: K): void;
  /** Drops every entry and forgets the loads under way: one begun before stores nothing when it ends. */
  clear(): void;
  /** The load of `key` under way (single flight), if any. */
  loading(key: K): Promise<V> | undefined;
  /**
   * Single flight: `load()` runs once for every caller that asks for `key` while it runs, and its value
   * is stored (fresh from `now`: a number, when the load began, or a function read when it ends) when
   * `keep` (default: always) says so. A load that rejects stores nothing; its callers see the rejection.
   */
  load(
    key: K,
    now: number | (() => number),
    load: () => Promise<V>,
    keep?: (value: V) => boolean,
  ): Promise<V>;
  stats(): CacheStats;
};

/**
 * Every cache alive in this process, for /metrics (apps/api/src/metrics.ts reads `cacheStats()` at scrape
 * time). Weak references: a cache nobody holds any more (a test's app) leaves the sum when it is collected.
 */
const alive = new Set<WeakRef<{ stats(): CacheStats }>>();
let createdSincePrune = 0;

function prune(): void {
  createdSincePrune = 0;
  for (const ref of alive) if (ref.deref() === undefined) alive.delete(ref);
}

/** The stats of every cache alive in this process, summed by namespace (one service per process in production). */
export function cacheStats(): CacheStats[] {
  prune();
  const byNamespace = new Map<string, CacheStats>();
  for (const ref of alive) {
    const stats = ref.deref()?.stats();
    if (!stats) continue;
    const sum = byNamespace.get(stats.namespace);
    if (!sum) {
      byNamespace.set(stats.namespace, { ...stats });
      continue;
    }
    for (const field of ["size", "hits", "misses", "expired", "evicted", "loads", "joined"] as const) {
      sum[field] += stats[field];
    }
  }
  return [...byNamespace.values()].sort((a, b) => a.namespace.localeCompare(b.namespace));
}

export function createCache<K, V>(options: {
  /** The namespace's name, in its stats. */
  namespace: string;
  /** At most this many entries (0 or less: nothing is kept). */
  maxEntries: number;
  /** How long an entry is fresh after `set` (default: forever, until pushed out). */
  ttlMs?: number;
}): Cache<K, V> {
  const { maxEntries } = options;
  const defaultTtlMs = options.ttlMs ?? Number.POSITIVE_INFINITY;
  const entries = new Map<K, CacheEntry<V>>();
  const flights = new Map<K, Promise<V>>();
  /** Bumped by clear(): a load that began before it does not fill the cache after it. */
  let generation = 0;
  const counts = { hits: 0, misses: 0, expired: 0, evicted: 0, loads: 0, joined: 0 };

  const store = (key: K, entry: CacheEntry<V>) => {
    if (maxEntries <= 0) return;
    entries.delete(key);
    if (entries.size >= maxEntries) {
      const oldest = entries.keys().next();
      if (!oldest.done) {
        entries.delete(oldest.value);
        counts.evicted++;
      }
    }
    entries.set(key, entry);
  };
  /** Fresh at `now`: stored no later than `now`, not yet expired. */
  const isFresh = (entry: CacheEntry<V>, now: number) => now < entry.expiresAt && now >= entry.storedAt;
  /** The entry of `key`, counted as a hit or a miss; one that is not fresh at `now` is dropped, and returned. */
  const lookup = (key: K, now: number): CacheEntry<V> | undefined => {
    const entry = entries.get(key);
    if (entry === undefined) {
      counts.misses++;
      return undefined;
    }
    if (isFresh(entry, now)) {
      counts.hits++;
    } else {
      entries.delete(key);
      counts.misses++;
      counts.expired++;
    }
    return entry;
  };

  const cache: Cache<K, V> = {
    get(key, now) {
      // No copy: the hot path of every cached lookup allocates nothing.
      const entry = lookup(key, now);
      return entry !== undefined && isFresh(entry, now) ? entry.value : undefined;
    },
    entry(key, now) {
      const entry = lookup(key, now);
      return entry === undefined ? undefined : { ...entry, fresh: isFresh(entry, now) };
    },
    set(key, value, now, ttlMs = defaultTtlMs) {
      store(key, { value, storedAt: now, expiresAt: now + ttlMs });
    },
    setUntil(key, value, expiresAt) {
      store(key, { value, storedAt: Number.NEGATIVE_INFINITY, expiresAt });
    },
    delete(key) {
      entries.delete(key);
    },
    clear() {
      entries.clear();
      flights.clear();
      generation++;
    },
    loading: (key) => flights.get(key),
    load(key, now, load, keep) {
      const running = flights.get(key);
      if (running !== undefined) {
        counts.joined++;
        return running;
      }
      counts.loads++;
      const started = generation;
      const flight = load()
        .then((value) => {
          if (started === generation && (keep === undefined || keep(value))) {
            cache.set(key, value, typeof now === "number" ? now : now());
          }
          return value;
        })
        .finally(() => {
          if (flights.get(key) === flight) flights.delete(key);
        });
      flights.set(key, flight);
      return flight;
    },
    stats: () => ({ namespace: options.namespace, size: entries.size, ...counts }),
  };
  alive.add(new WeakRef(cache));
  if (++createdSincePrune >= 256) prune();
  return cache;
}
