import { sha256HexSync } from "@sms/crypto";
import { describe, expect, it } from "vitest";
import { createApiKeyAuthenticator } from "./authenticate-api-key.ts";

const KEY = `sk_test_${"a".repeat(43)}`;
const OTHER = `sk_test_${"b".repeat(43)}`;

/** A key store that knows KEY and records the hashes it was asked for. */
function fakeStore() {
  const asked: string[] = [];
  const store = {
    keys: {
      async lookup(keyHash: string) {
        asked.push(keyHash);
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
