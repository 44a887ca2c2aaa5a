import { describe, expect, it } from "vitest";
import { canonicalRequest } from "./idempotency.ts";
import { canonicalVerificationRequest, drawCode, effectiveStatus, testModeCode } from "./verification.ts";

describe("verification codes", () => {
  it("draws codes of exactly the asked length, digits only, every digit about equally often", () => {
    const counts = new Array<number>(10).fill(0);
    for (const length of [4, 5, 6, 7, 8]) {
      for (let i = 0; i < 2_000; i++) {
        const code = drawCode(length);
        expect(code).toMatch(new RegExp(`^[0-9]{${length}}$`));
        for (const digit of code) counts[Number(digit)]! += 1;
      }
    }
    const total = counts.reduce((a, b) => a + b, 0);
    // 60,000 digits: each share within one point of a tenth.
    for (const count of counts) expect(Math.abs(count / total - 0.1)).toBeLessThan(0.01);
    expect(new Set(Array.from({ length: 50 }, () => drawCode(8))).size).toBeGreaterThan(45);
  });

  it("gives test keys zeros of the asked length", () => {
    expect(testModeCode(4)).toBe("0000");
    expect(testModeCode(8)).toBe("00000000");
  });

  it("never shares an idempotency identity with a message", () => {
    const start = canonicalVerificationRequest({
      to: "+995555123456",
      template: "verification_code",
      locale: "ka",
      codeLength: 6,
    });
    expect(start).not.toBe(
      canonicalRequest(
        { to: "+995555123456", template: "verification_code", variables: { code: "000000" } },
        "ka",
      ),
    );
    expect(JSON.parse(start)).toHaveLength(5);
  });

  it("reads a pending verification past its lifetime as expired, and nothing else", () => {
    const expiresAt = new Date("2026-11-22T10:10:00Z");
    expect(effectiveStatus({ status: "pending", expiresAt }, new Date("2026-11-22T10:09:59Z"))).toBe(
      "pending",
    );
    expect(effectiveStatus({ status: "pending", expiresAt }, expiresAt)).toBe("expired");
    expect(effectiveStatus({ status: "approved", expiresAt }, new Date("2026-11-23T00:00:00Z"))).toBe(
      "approved",
    );
  });
});
