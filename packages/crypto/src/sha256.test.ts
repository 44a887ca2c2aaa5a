import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "./secret.ts";
import { sha256HexSync } from "./sha256.ts";

describe("sha256HexSync", () => {
  it("matches the FIPS 180-4 test vectors", () => {
    expect(sha256HexSync("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(sha256HexSync("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(sha256HexSync("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")).toBe(
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    );
  });

  it("agrees with WebCrypto on any text, across block boundaries", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "binary", maxLength: 300 }), async (text) => {
        expect(sha256HexSync(text)).toBe(await sha256Hex(text));
      }),
      { numRuns: 300 },
    );
    for (let length = 50; length < 140; length++) {
      const text = "k".repeat(length);
      expect(sha256HexSync(text)).toBe(await sha256Hex(text));
    }
  });
});
