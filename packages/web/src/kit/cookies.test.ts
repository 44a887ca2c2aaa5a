import { describe, expect, it } from "vitest";
import { cookieNames, readCookie, setCookieHeader } from "./cookies.ts";

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
