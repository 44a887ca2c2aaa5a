import { describe, expect, it } from "vitest";
import { cookieNames, createCookieSealer, readCookie, setCookieHeader } from "./claim-cookies.ts";

const SECRET = "unit-test-cookie-secret-0123456789abcdef";
const NOW = new Date("2026-11-22T10:00:00Z");

describe("sealed claim cookies", () => {
  it("round-trips a payload until it expires", async () => {
    const sealer = await createCookieSealer(SECRET);
    const value = await sealer.seal("c", { a: 1, b: "two" }, 60_000, NOW);
    expect(value).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(value).not.toContain("two");
    expect(await sealer.open("c", value, NOW)).toEqual({ a: 1, b: "two" });
    expect(await sealer.open("c", value, new Date(NOW.getTime() + 59_999))).toEqual({ a: 1, b: "two" });
    expect(await sealer.open("c", value, new Date(NOW.getTime() + 60_000))).toBeNull();
  });

  it("refuses another cookie's value, another secret, tampering and garbage", async () => {
    const sealer = await createCookieSealer(SECRET);
    const value = await sealer.seal("c", { a: 1 }, 60_000, NOW);
    expect(await sealer.open("d", value, NOW)).toBeNull();
    expect(await (await createCookieSealer(`${SECRET}x`)).open("c", value, NOW)).toBeNull();
    for (let i = 0; i < value.length; i += 7) {
      const flipped = value.slice(0, i) + (value[i] === "A" ? "B" : "A") + value.slice(i + 1);
      expect(await sealer.open("c", flipped, NOW)).toBeNull();
    }
    for (const garbage of [undefined, "", "!!!", "A", "AAAA", "x".repeat(5000), value.slice(0, 20)]) {
      expect(await sealer.open("c", garbage, NOW)).toBeNull();
    }
  });

  it("uses a fresh IV each time", async () => {
    const sealer = await createCookieSealer(SECRET);
    const a = await sealer.seal("c", { a: 1 }, 60_000, NOW);
    const b = await sealer.seal("c", { a: 1 }, 60_000, NOW);
    expect(a).not.toBe(b);
  });

  it("binds CSRF tokens to the session id and the secret", async () => {
    const sealer = await createCookieSealer(SECRET);
    const token = await sealer.csrfToken("session-1");
    expect(await sealer.verifyCsrf("session-1", token)).toBe(true);
    expect(await sealer.verifyCsrf("session-2", token)).toBe(false);
    expect(await sealer.verifyCsrf("session-1", "")).toBe(false);
    expect(await (await createCookieSealer(`${SECRET}x`)).verifyCsrf("session-1", token)).toBe(false);
  });

  it("refuses a short secret", async () => {
    await expect(createCookieSealer("short")).rejects.toThrow(/at least 32/);
  });
});

describe("cookie headers", () => {
  it("reads one cookie out of a header", () => {
    expect(readCookie("a=1; sms_claim_signin=xyz; b=2", "sms_claim_signin")).toBe("xyz");
    expect(readCookie("sms_claim_signin_other=1", "sms_claim_signin")).toBeUndefined();
    expect(readCookie(null, "a")).toBeUndefined();
  });

  it("writes HttpOnly, SameSite=Lax cookies scoped to /claim, Secure over HTTPS", () => {
    expect(setCookieHeader("n", "v", { maxAgeMs: 600_000, secure: false })).toBe(
      "n=v; Path=/claim; Max-Age=600; HttpOnly; SameSite=Lax",
    );
    expect(setCookieHeader("n", "v", { maxAgeMs: 600_000, secure: true })).toMatch(/; Secure$/);
    expect(cookieNames(true)).toEqual({
      signIn: "__Secure-sms_claim_signin",
      identity: "__Secure-sms_claim_identity",
    });
  });
});
