import { sha256HexSync } from "@sms/crypto";
import { describe, expect, it } from "vitest";
import { createApiKeyAuthenticator } from "./authenticate-api-key.ts";

const KEY = `sk_test_${"a".repeat(43)}`;
const OTHER = `sk_test_${"b".repeat(43)}`;

/** A key store that knows KEY and records the hashes it was asked for; `gate` holds its answers back. */
function fakeStore(gate: Promise<void> = Promise.resolve()) {
  const asked: string[] = [];
  const store = {
    keys: {
      async lookup(keyHash: string) {
        asked.push(keyHash);
        await gate;
        if (keyHash !== sha256HexSync(KEY)) return null;
        return {
          id: "key_1",
          keyHash,
          mode: "test" as const,
          revokedAt: null,
          project: { id: "prj_1", sender: null, senderBrandId: null, claimedAt: null, suspendedAt: null },
        };
      },
      async touch() {},
    },
  };
  return { asked, store };
}

const clock = { now: () => new Date("2026-11-27T06:00:00Z") };

/** A clock the test moves. */
function movableClock(start: number) {
  let at = start;
  return { now: () => new Date(at), advance: (ms: number) => (at += ms) };
}

function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describe("createApiKeyAuthenticator: a hash the caller already made", () => {
  it("is looked up as given when it comes with the header's own key", async () => {
    const { asked, store } = fakeStore();
    const auth = createApiKeyAuthenticator({ store, clock, cacheTtlMs: 0 });
    const result = await auth.authenticate(`Bearer ${KEY}`, { key: KEY, keyHash: sha256HexSync(KEY) });
    expect(result).toMatchObject({ ok: true, keyId: "key_1" });
    // Taken as is: a (wrong) hash passed with the same key is what the store is asked for.
    await auth.authenticate(`Bearer ${KEY}`, { key: KEY, keyHash: "f".repeat(64) });
    expect(asked).toEqual([sha256HexSync(KEY), "f".repeat(64)]);
  });

  it("is ignored when it comes with another key: the header's key is hashed instead", async () => {
    const { asked, store } = fakeStore();
    const auth = createApiKeyAuthenticator({ store, clock, cacheTtlMs: 0 });
    const result = await auth.authenticate(`Bearer ${KEY}`, { key: OTHER, keyHash: sha256HexSync(OTHER) });
    expect(result).toMatchObject({ ok: true, keyId: "key_1" });
    expect(await auth.authenticate(`Bearer ${OTHER}`, { key: KEY, keyHash: sha256HexSync(KEY) })).toEqual({
      ok: false,
      code: "invalid_api_key",
    });
    expect(asked).toEqual([sha256HexSync(KEY), sha256HexSync(OTHER)]);
  });
});

describe("createApiKeyAuthenticator: requests that miss the cache together", () => {
  it("share one lookup, also each time the entry reaches its TTL", async () => {
    const held = gate();
    const { asked, store } = fakeStore(held.opened);
    const time = movableClock(Date.parse("2026-11-27T06:00:00Z"));
    const auth = createApiKeyAuthenticator({ store, clock: time, cacheTtlMs: 2_000 });
    const together = Array.from({ length: 20 }, () => auth.authenticate(`Bearer ${KEY}`));
    held.open();
    for (const result of await Promise.all(together))
      expect(result).toMatchObject({ ok: true, keyId: "key_1" });
    expect(asked).toHaveLength(1);
    // Cached: no lookup within the TTL.
    await auth.authenticate(`Bearer ${KEY}`);
    expect(asked).toHaveLength(1);
    // The TTL over (nothing used the key in its second half): the next burst shares one lookup again.
    time.advance(2_000);
    await Promise.all(Array.from({ length: 20 }, () => auth.authenticate(`Bearer ${KEY}`)));
    expect(asked).toHaveLength(2);
    // Another key is a lookup of its own.
    expect(await auth.authenticate(`Bearer ${OTHER}`)).toEqual({ ok: false, code: "invalid_api_key" });
    expect(asked).toHaveLength(3);
  });

  it("a lookup that began before forget() does not fill the cache after it; a failed one fails its waiters and is not kept", async () => {
    const held = gate();
    const { asked, store } = fakeStore(held.opened);
    const auth = createApiKeyAuthenticator({ store, clock, cacheTtlMs: 60_000 });
    const before = auth.authenticate(`Bearer ${KEY}`);
    auth.forget();
    held.open();
    expect(await before).toMatchObject({ ok: true });
    await auth.authenticate(`Bearer ${KEY}`);
    expect(asked).toHaveLength(2);

    let failing = true;
    const flaky = {
      keys: {
        lookup: async (keyHash: string) => {
          if (failing) throw new Error("database unavailable");
          return store.keys.lookup(keyHash);
        },
        touch: async () => {},
      },
    };
    const other = createApiKeyAuthenticator({ store: flaky, clock, cacheTtlMs: 60_000 });
    const failed = await Promise.allSettled([
      other.authenticate(`Bearer ${KEY}`),
      other.authenticate(`Bearer ${KEY}`),
    ]);
    expect(failed.map((outcome) => outcome.status)).toEqual(["rejected", "rejected"]);
    failing = false;
    expect(await other.authenticate(`Bearer ${KEY}`)).toMatchObject({ ok: true });
  });
});

describe("createApiKeyAuthenticator: a key in use", () => {
  it("is looked up again in the background past half its TTL, while its entry still serves; never served past the TTL", async () => {
    let held = gate();
    const { asked, store } = fakeStore(held.opened);
    const start = Date.parse("2026-11-27T06:00:00Z");
    const time = movableClock(start);
    const auth = createApiKeyAuthenticator({ store, clock: time, cacheTtlMs: 2_000 });
    const first = auth.authenticate(`Bearer ${KEY}`);
    held.open();
    await first;
    expect(asked).toHaveLength(1);

    // Half the TTL: answered from the entry at once although the store holds its answer back.
    held = gate();
    const gated = fakeStore(held.opened);
    asked.length = 0;
    store.keys.lookup = gated.store.keys.lookup;
    time.advance(1_000);
    expect(await auth.authenticate(`Bearer ${KEY}`)).toMatchObject({ ok: true });
    expect(gated.asked).toHaveLength(1);
    // One refresh at a time.
    expect(await auth.authenticate(`Bearer ${KEY}`)).toMatchObject({ ok: true });
    expect(gated.asked).toHaveLength(1);

    // The refresh has not answered by the TTL: the entry is not served past it, the request waits.
    time.advance(1_000);
    let settled = false;
    const waiting = auth.authenticate(`Bearer ${KEY}`).then((result) => {
      settled = true;
      return result;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(settled).toBe(false);
    expect(gated.asked).toHaveLength(1);
    held.open();
    expect(await waiting).toMatchObject({ ok: true });

    // The refreshed entry counts from when its lookup began (start + 1 s): it serves until start + 3 s.
    time.advance(999);
    expect(await auth.authenticate(`Bearer ${KEY}`)).toMatchObject({ ok: true });
    expect(gated.asked).toHaveLength(2);
  });
});
