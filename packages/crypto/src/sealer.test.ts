// Sealed cookies and CSRF tokens (used by the claim flow and the dashboard).
import { describe, expect, it } from "vitest";
import { createCookieSealer } from "./sealer.ts";

const SECRET = "unit-test-cookie-secret-0123456789abcdef";
const NOW = new Date("2026-11-22T10:00:00Z");

describe("sealed cookies", () => {
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

describe("compatibility", () => {
  // Sealed by the claim flow's own sealer before it moved into @sms/crypto:
  // cookies in browsers at the time of an upgrade must still open.
  const EARLIER = {
    value:
      "1OWf8C5J9LDKmq6brrCVrFH89Iiv8hNhTIXByIPkEOm50uaC8ulB6DKGjCCE6V6-2Hsl5ih_7b-Cc_RF55os4GkRJijMqL9Pmwnw62zytKNGGK-GWzciMLvTM43ZkUw",
    csrf: "MYZZ12qyiFLKMFHfUl-UU60hahflvV0HXhTtVAjVrG8",
  };

  it("opens a claim cookie sealed before the move, and issues the same CSRF token", async () => {
    const sealer = await createCookieSealer(SECRET, { purpose: "claim" });
    expect(await sealer.open("sms_claim_identity", EARLIER.value, NOW)).toEqual({
      provider: "github",
      subject: "4242",
    });
    expect(await sealer.csrfToken("session-1")).toBe(EARLIER.csrf);
  });

  it("keeps purposes apart: another purpose's sealer opens nothing and issues other tokens", async () => {
    const other = await createCookieSealer(SECRET, { purpose: "dashboard" });
    expect(await other.open("sms_claim_identity", EARLIER.value, NOW)).toBeNull();
    expect(await other.csrfToken("session-1")).not.toBe(EARLIER.csrf);
    const claim = await createCookieSealer(SECRET);
    const value = await other.seal("c", { a: 1 }, 60_000, NOW);
    expect(await claim.open("c", value, NOW)).toBeNull();
    expect(await other.open("c", value, NOW)).toEqual({ a: 1 });
  });
});
