import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  API_KEY_PATTERN,
  apiKeyPrefix,
  newApiKey,
  randomToken,
  sha256Hex,
  timingSafeEqual,
} from "./index.ts";

const BASE64URL = /^[A-Za-z0-9_-]*$/;

describe("randomToken", () => {
  it("is 32 bytes of base64url without padding by default", () => {
    const token = randomToken();
    expect(token).toHaveLength(43);
    expect(token).toMatch(BASE64URL);
  });

  it("has length ceil(4n/3) for n bytes, in the URL-safe alphabet", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 512 }), (n) => {
        const token = randomToken(n);
        expect(token).toHaveLength(Math.ceil((4 * n) / 3));
        expect(token).toMatch(BASE64URL);
        expect(Buffer.from(token, "base64url")).toHaveLength(n);
      }),
    );
  });

  it("uses the whole alphabet and does not repeat", () => {
    const tokens = Array.from({ length: 1000 }, () => randomToken());
    expect(new Set(tokens).size).toBe(1000);
    expect(new Set(tokens.join(""))).toHaveProperty("size", 64);
  });

  it("rejects nonsense lengths", () => {
    for (const n of [0, -1, 1.5, Number.NaN, 65_537]) expect(() => randomToken(n)).toThrow(RangeError);
  });
});

describe("API keys", () => {
  it.each(["test", "live"] as const)("newApiKey(%s) has the prefix and 43 random characters", (mode) => {
    const key = newApiKey(mode);
    expect(key.startsWith(`sk_${mode}_`)).toBe(true);
    expect(key).toHaveLength(`sk_${mode}_`.length + 43);
    expect(key.slice(8)).toMatch(BASE64URL);
    expect(API_KEY_PATTERN.test(key)).toBe(true);
    expect(apiKeyPrefix(key)).toBe(key.slice(0, 12));
    expect(apiKeyPrefix(key)).toMatch(new RegExp(`^sk_${mode}_[A-Za-z0-9_-]{4}$`));
  });

  it("does not repeat", () => {
    const keys = new Set(Array.from({ length: 1000 }, () => newApiKey("live")));
    expect(keys.size).toBe(1000);
  });

  it("API_KEY_PATTERN rejects near misses", () => {
    const secret = "A".repeat(43);
    expect(API_KEY_PATTERN.test(`sk_test_${secret}`)).toBe(true);
    for (const bad of [
      `sk_prod_${secret}`,
      `pk_test_${secret}`,
      `sk_test_${secret.slice(1)}`,
      `sk_test_${secret}A`,
      `sk_test_${secret.slice(1)}+`,
      `sk_test_${secret.slice(1)}=`,
      `SK_TEST_${secret}`,
      ` sk_test_${secret}`,
      `sk_test_${secret}\n`,
      "",
    ]) {
      expect(API_KEY_PATTERN.test(bad)).toBe(false);
    }
  });

  it("apiKeyPrefix refuses a non-key without echoing it", () => {
    const notAKey = "super-secret-password-123";
    expect(() => apiKeyPrefix(notAKey)).toThrow(TypeError);
    try {
      apiKeyPrefix(notAKey);
    } catch (error) {
      expect(String(error)).not.toContain("super");
    }
  });

  it("newApiKey rejects an unknown mode", () => {
    expect(() => newApiKey("prod" as "live")).toThrow(TypeError);
  });
});

describe("sha256Hex", () => {
  it.each([
    ["", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
    ["abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
    [
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    ],
    ["a".repeat(1_000_000), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"],
  ])("matches the FIPS 180-2 vector for %#", async (input, expected) => {
    expect(await sha256Hex(input)).toBe(expected);
  });

  it("hashes the UTF-8 encoding (checked against node:crypto)", async () => {
    expect(await sha256Hex("გამარჯობა 👋")).toBe(
      createHash("sha256").update("გამარჯობა 👋", "utf8").digest("hex"),
    );
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "binary" }), async (text) => {
        expect(await sha256Hex(text)).toBe(createHash("sha256").update(text, "utf8").digest("hex"));
      }),
    );
  });
});

describe("timingSafeEqual", () => {
  it("agrees with === on arbitrary strings", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.string({ unit: "binary" }), (a, b) => {
        expect(timingSafeEqual(a, b)).toBe(a === b);
        expect(timingSafeEqual(a, a)).toBe(true);
      }),
    );
  });

  it("agrees with === on strings that differ in one place", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.nat(),
        fc.integer({ min: 1, max: 0xffff }),
        (a, i, flip) => {
          const at = i % a.length;
          const b = a.slice(0, at) + String.fromCharCode(a.charCodeAt(at) ^ flip) + a.slice(at + 1);
          expect(timingSafeEqual(a, b)).toBe(false);
        },
      ),
    );
  });

  it("handles lengths and NUL characters", () => {
    expect(timingSafeEqual("", "")).toBe(true);
    expect(timingSafeEqual("abc", "abc")).toBe(true);
    expect(timingSafeEqual("abc", "abd")).toBe(false);
    expect(timingSafeEqual("abc", "ab")).toBe(false);
    expect(timingSafeEqual("ab", "abc")).toBe(false);
    expect(timingSafeEqual("", "\0")).toBe(false);
    expect(timingSafeEqual("a\0", "a")).toBe(false);
    expect(timingSafeEqual("a", "a\0")).toBe(false);
  });
});
