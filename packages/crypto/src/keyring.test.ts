import { createDecipheriv, createHmac, hkdfSync } from "node:crypto";
import { inspect } from "node:util";
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DecryptError, generateKeySpec, KeyringError, newId, parseKeyring } from "./index.ts";

// Fixed keys so failures are reproducible: 32 bytes each.
const K1 = Buffer.alloc(32, 1).toString("base64");
const K2 = Buffer.alloc(32, 2).toString("base64");
const K1_SPEC = `k1:${K1}`;
const K2_SPEC = `k2:${K2}`;

afterEach(() => {
  vi.restoreAllMocks();
});

function parseError(spec: string): KeyringError {
  try {
    parseKeyring(spec);
  } catch (error) {
    if (error instanceof KeyringError) return error;
    throw error;
  }
  throw new Error("expected parseKeyring to throw");
}

async function decryptError(promise: Promise<unknown>): Promise<DecryptError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DecryptError) return error;
    throw error;
  }
  throw new Error("expected decrypt to throw");
}

describe("parseKeyring", () => {
  it("parses one key", () => {
    const ring = parseKeyring(K1_SPEC);
    expect(ring.currentKeyId).toBe("k1");
    expect(ring.keyIds).toEqual(["k1"]);
  });

  it("parses several keys; the first encrypts", () => {
    const ring = parseKeyring(
      ` ${K2_SPEC} , ${K1_SPEC} ,legacy_2024-01:${Buffer.alloc(32, 9).toString("base64url")}`,
    );
    expect(ring.currentKeyId).toBe("k2");
    expect(ring.keyIds).toEqual(["k2", "k1", "legacy_2024-01"]);
  });

  it("accepts base64 without padding and base64url", () => {
    const raw = Buffer.from(Array.from({ length: 32 }, (_, i) => 250 - i));
    expect(() => parseKeyring(`a:${raw.toString("base64")}`)).not.toThrow();
    expect(() => parseKeyring(`a:${raw.toString("base64").replace(/=+$/, "")}`)).not.toThrow();
    expect(() => parseKeyring(`a:${raw.toString("base64url")}`)).not.toThrow();
  });

  it.each([
    ["an empty spec", "", /no keys/],
    ["a blank spec", "   ", /no keys/],
    ["an empty entry", `${K1_SPEC},`, /entry 2 is empty/],
    ["a missing colon", K1, /entry 1 has no ":"/],
    ["an empty id", `:${K1}`, /entry 1: key id/],
    ["a 17-character id", `abcdefghijklmnopq:${K1}`, /entry 1: key id/],
    ["a bad id character", `k.1:${K1}`, /entry 1: key id/],
    ["a duplicate id", `${K1_SPEC},k1:${K2}`, /duplicate key id "k1" \(entry 2\)/],
    ["invalid base64", "k1:not base64!", /key "k1" \(entry 1\) is not valid base64/],
    ["a 16-byte key", `k1:${Buffer.alloc(16, 7).toString("base64")}`, /exactly 32 bytes, not 16/],
    ["a 33-byte key", `k1:${Buffer.alloc(33, 7).toString("base64")}`, /exactly 32 bytes, not 33/],
    ["an empty key", "k1:", /exactly 32 bytes, not 0/],
    ["non-canonical trailing bits", `k1:${K1.slice(0, 42)}B=`, /not valid base64/],
    ["misplaced padding", `k1:${K1.slice(0, 40)}=${K1.slice(41)}`, /not valid base64/],
  ])("rejects %s with a clear KeyringError", (_, spec, message) => {
    const error = parseError(spec);
    expect(error.name).toBe("KeyringError");
    expect(error.message).toMatch(/^MESSAGE_ENCRYPTION_KEYS: /);
    expect(error.message).toMatch(message);
  });

  it("never puts key material in an error message", () => {
    const badEntry = fc.oneof(
      // wrong-length keys
      fc
        .uint8Array({ minLength: 1, maxLength: 64 })
        .filter((b) => b.length !== 32)
        .map((b) => `k1:${Buffer.from(b).toString("base64")}`),
      // a valid key without an id, or under an invalid id
      fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString("base64")),
      fc
        .uint8Array({ minLength: 32, maxLength: 32 })
        .map((b) => `bad id!:${Buffer.from(b).toString("base64")}`),
      // a key with a stray character
      fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => `k1:${Buffer.from(b).toString("base64")}*`),
    );
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), badEntry, (good, bad) => {
        const goodB64 = Buffer.from(good).toString("base64");
        // The valid key comes first and again under a duplicate id: neither may leak.
        for (const spec of [`k0:${goodB64},${bad}`, `k0:${goodB64},k0:${goodB64}`]) {
          const { message } = parseError(spec);
          const keyMaterial = [goodB64, ...(bad.match(/[A-Za-z0-9+/=]{8,}/g) ?? [])];
          for (const secret of keyMaterial) {
            for (let i = 0; i + 8 <= secret.length; i++)
              expect(message).not.toContain(secret.slice(i, i + 8));
          }
        }
      }),
    );
  });

  it("does not expose key material on the keyring object", async () => {
    const ring = parseKeyring(K1_SPEC);
    await ring.encrypt("warm up", "msg_x");
    const shown = `${JSON.stringify(ring)} ${inspect(ring, { depth: 10, showHidden: true })}`;
    expect(shown).not.toContain(K1.slice(0, 8));
    expect(shown).not.toContain("1,1,1,1");
    expect(shown).not.toContain("01 01 01 01");
  });
});

describe("generateKeySpec", () => {
  it("makes a parseable id:base64 entry with a fresh key", () => {
    const spec = generateKeySpec();
    expect(spec).toMatch(/^k1:[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(spec.slice(3), "base64")).toHaveLength(32);
    expect(parseKeyring(spec).currentKeyId).toBe("k1");
    expect(generateKeySpec()).not.toBe(spec);
    expect(generateKeySpec("2026-06")).toMatch(/^2026-06:/);
  });

  it("rejects an invalid id", () => {
    expect(() => generateKeySpec("")).toThrow(KeyringError);
    expect(() => generateKeySpec("has space")).toThrow(KeyringError);
  });
});

describe("encrypt / decrypt", () => {
  const ring = parseKeyring(K1_SPEC);

  it.each([
    ["empty", ""],
    ["a phone number", "+995555123456"],
    ["Georgian", "გამარჯობა! თქვენი კოდია 123456"],
    ["emoji", "👋🏽 🇬🇪 👨‍👩‍👧‍👦"],
    ["a long text", "ა".repeat(10_000)],
  ])("round-trips %s", async (_, plaintext) => {
    const aad = newId("msg");
    expect(await ring.decrypt(await ring.encrypt(plaintext, aad), aad)).toBe(plaintext);
  });

  it("round-trips arbitrary Unicode under arbitrary aad", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string({ unit: "binary" }), fc.string({ unit: "grapheme" })),
        fc.string({ unit: "binary" }),
        async (plaintext, aad) => {
          expect(await ring.decrypt(await ring.encrypt(plaintext, aad), aad)).toBe(plaintext);
        },
      ),
    );
  });

  it("writes the documented layout (checked by decrypting with node:crypto)", async () => {
    const aad = "msg_01hf7yat00abcdefghjkmnpqrs";
    const plaintext = "გამარჯობა 👋";
    const blob = await ring.encrypt(plaintext, aad);
    const header = Buffer.from([1, 2, ...Buffer.from("k1")]);
    const plainBytes = Buffer.from(plaintext, "utf8");
    expect(Buffer.from(blob.subarray(0, 4))).toEqual(header);
    expect(blob.length).toBe(4 + 12 + plainBytes.length + 16);

    const nonce = blob.subarray(4, 16);
    const sealed = blob.subarray(16);
    const decipher = createDecipheriv("aes-256-gcm", Buffer.from(K1, "base64"), nonce);
    decipher.setAAD(Buffer.concat([header, Buffer.from(aad, "utf8")]));
    decipher.setAuthTag(sealed.subarray(sealed.length - 16));
    const decrypted = Buffer.concat([
      decipher.update(sealed.subarray(0, sealed.length - 16)),
      decipher.final(),
    ]);
    expect(decrypted.toString("utf8")).toBe(plaintext);
  });

  it("uses a fresh nonce every time", async () => {
    const a = await ring.encrypt("same", "msg_1");
    const b = await ring.encrypt("same", "msg_1");
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false);
    const nonces = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      nonces.add(Buffer.from((await ring.encrypt("same", "msg_1")).subarray(4, 16)).toString("hex"));
    }
    expect(nonces.size).toBe(1000);
  });

  it("accepts a Buffer or a view into a larger buffer", async () => {
    const blob = await ring.encrypt("hello", "msg_1");
    expect(await ring.decrypt(Buffer.from(blob), "msg_1")).toBe("hello");
    const padded = new Uint8Array(blob.length + 10);
    padded.set(blob, 5);
    expect(await ring.decrypt(padded.subarray(5, 5 + blob.length), "msg_1")).toBe("hello");
  });

  it("fails with the wrong aad (a ciphertext moved to another row)", async () => {
    const plaintext = "+995555123456";
    const blob = await ring.encrypt(plaintext, "msg_a");
    const error = await decryptError(ring.decrypt(blob, "msg_b"));
    expect(error.reason).toBe("authentication_failed");
    expect(error.message).not.toContain(plaintext);
    expect((await decryptError(ring.decrypt(blob, ""))).reason).toBe("authentication_failed");
  });

  it("fails on any single flipped bit", async () => {
    const plaintext = "secret";
    const blob = await ring.encrypt(plaintext, "msg_1");
    for (let bit = 0; bit < blob.length * 8; bit++) {
      const tampered = Uint8Array.from(blob);
      tampered[bit >> 3]! ^= 1 << (bit & 7);
      const error = await decryptError(ring.decrypt(tampered, "msg_1"));
      expect(error.message).not.toContain(plaintext);
      expect(error.message).not.toContain(K1.slice(0, 8));
    }
  });

  it("names the reason for header damage", async () => {
    const blob = await ring.encrypt("secret", "msg_1");
    const withByte = (index: number, value: number) => {
      const copy = Uint8Array.from(blob);
      copy[index] = value;
      return copy;
    };
    expect((await decryptError(ring.decrypt(withByte(0, 2), "msg_1"))).reason).toBe("unsupported_version");
    expect((await decryptError(ring.decrypt(withByte(1, 0), "msg_1"))).reason).toBe("malformed");
    expect((await decryptError(ring.decrypt(withByte(1, 17), "msg_1"))).reason).toBe("malformed");
    expect((await decryptError(ring.decrypt(withByte(2, 0x2e), "msg_1"))).reason).toBe("malformed");
    expect((await decryptError(ring.decrypt(withByte(3, 0x39), "msg_1"))).reason).toBe("unknown_key");
    expect((await decryptError(ring.decrypt(withByte(20, blob[20]! ^ 1), "msg_1"))).reason).toBe(
      "authentication_failed",
    );
  });

  it("rejects truncated and empty blobs as malformed", async () => {
    const blob = await ring.encrypt("", "msg_1");
    expect(blob.length).toBe(2 + 2 + 12 + 16);
    expect(await ring.decrypt(blob, "msg_1")).toBe("");
    for (let length = 0; length < blob.length; length++) {
      const error = await decryptError(ring.decrypt(blob.subarray(0, length), "msg_1"));
      expect(error.reason).toBe("malformed");
    }
    expect(() => ring.keyIdOf(new Uint8Array(0))).toThrow(DecryptError);
  });

  it("throws DecryptError for an unknown key id, naming only the id", async () => {
    const other = parseKeyring(K2_SPEC);
    const blob = await other.encrypt("secret", "msg_1");
    const error = await decryptError(ring.decrypt(blob, "msg_1"));
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("DecryptError");
    expect(error.reason).toBe("unknown_key");
    expect(error.message).toContain('"k2"');
    expect(error.message).not.toContain("secret");
    expect(error.message).not.toContain(K2.slice(0, 8));
  });

  it("fails authentication when a key id is reused for different key material", async () => {
    const blob = await ring.encrypt("secret", "msg_1");
    const impostor = parseKeyring(`k1:${K2}`);
    expect((await decryptError(impostor.decrypt(blob, "msg_1"))).reason).toBe("authentication_failed");
  });

  it("refuses lone surrogates instead of silently replacing them", async () => {
    await expect(ring.encrypt("a\uD800b", "msg_1")).rejects.toThrow(TypeError);
    await expect(ring.encrypt("\uDC00", "msg_1")).rejects.toThrow(TypeError);
    expect(await ring.decrypt(await ring.encrypt("\uD83D\uDC4B", "msg_1"), "msg_1")).toBe("👋");
  });
});

describe("rotation", () => {
  it("decrypts old blobs, encrypts with the new key and flags what needs re-encryption", async () => {
    const before = parseKeyring(K1_SPEC);
    const after = parseKeyring(`${K2_SPEC},${K1_SPEC}`);
    const oldBlob = await before.encrypt("+995555000111", "msg_1");

    expect(after.currentKeyId).toBe("k2");
    expect(after.keyIdOf(oldBlob)).toBe("k1");
    expect(after.needsRotation(oldBlob)).toBe(true);
    expect(before.needsRotation(oldBlob)).toBe(false);
    expect(await after.decrypt(oldBlob, "msg_1")).toBe("+995555000111");

    // The re-encryption job: decrypt with whatever key, encrypt with the current one.
    const newBlob = await after.encrypt(await after.decrypt(oldBlob, "msg_1"), "msg_1");
    expect(after.keyIdOf(newBlob)).toBe("k2");
    expect(after.needsRotation(newBlob)).toBe(false);
    expect(await after.decrypt(newBlob, "msg_1")).toBe("+995555000111");

    // Once every row is re-encrypted the old key can go.
    const done = parseKeyring(K2_SPEC);
    expect(await done.decrypt(newBlob, "msg_1")).toBe("+995555000111");
    expect((await decryptError(done.decrypt(oldBlob, "msg_1"))).reason).toBe("unknown_key");
    // A ring without the new key cannot read new blobs.
    expect((await decryptError(before.decrypt(newBlob, "msg_1"))).reason).toBe("unknown_key");
  });
});

describe("fingerprint", () => {
  const ring = parseKeyring(K1_SPEC);
  const request = JSON.stringify({ to: "+995555123456", template: "otp", variables: { code: "123456" } });

  it("is <keyId>:<64 hex> and deterministic", async () => {
    const fp = await ring.fingerprint(request);
    expect(fp).toMatch(/^k1:[0-9a-f]{64}$/);
    expect(await ring.fingerprint(request)).toBe(fp);
    expect(await parseKeyring(K1_SPEC).fingerprint(request)).toBe(fp);
    expect(fp).not.toContain("995555123456");
  });

  it("is HMAC-SHA-256 under HKDF-SHA-256(key, salt = empty, info = sms/fingerprint/v1), never the raw key", async () => {
    const raw = Buffer.from(K1, "base64");
    const derived = Buffer.from(hkdfSync("sha256", raw, Buffer.alloc(0), "sms/fingerprint/v1", 32));
    const expected = createHmac("sha256", derived).update(request, "utf8").digest("hex");
    expect(await ring.fingerprint(request)).toBe(`k1:${expected}`);
    expect(expected).not.toBe(createHmac("sha256", raw).update(request, "utf8").digest("hex"));
  });

  it("equals createHmac for any data, one call after another (the kept hash states are only copied)", async () => {
    const derived = Buffer.from(
      hkdfSync("sha256", Buffer.from(K1, "base64"), Buffer.alloc(0), "sms/fingerprint/v1", 32),
    );
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "grapheme", maxLength: 300 }), async (data) => {
        const expected = createHmac("sha256", derived).update(data, "utf8").digest("hex");
        expect(await ring.fingerprint(data)).toBe(`k1:${expected}`);
        expect(await ring.fingerprint(data)).toBe(`k1:${expected}`);
        expect(await ring.verifyFingerprint(data, `k1:${expected}`)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it("depends on the data and on the key", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "binary" }), fc.string({ unit: "binary" }), async (a, b) => {
        fc.pre(a !== b);
        expect(await ring.fingerprint(a)).not.toBe(await ring.fingerprint(b));
      }),
      { numRuns: 50 },
    );
    const [, withK1] = (await ring.fingerprint(request)).split(":");
    const [, withOtherKeyNamedK1] = (await parseKeyring(`k1:${K2}`).fingerprint(request)).split(":");
    expect(withOtherKeyNamedK1).not.toBe(withK1);
  });

  it("verifies its own fingerprints and nothing else", async () => {
    const fp = await ring.fingerprint(request);
    expect(await ring.verifyFingerprint(request, fp)).toBe(true);
    expect(await ring.verifyFingerprint(`${request} `, fp)).toBe(false);
    const lastChar = fp.at(-1) === "0" ? "1" : "0";
    expect(await ring.verifyFingerprint(request, fp.slice(0, -1) + lastChar)).toBe(false);
    expect(await ring.verifyFingerprint(request, fp.toUpperCase())).toBe(false);
    expect(await ring.verifyFingerprint(request, fp.slice(3))).toBe(false);
    expect(await ring.verifyFingerprint(request, `k9:${fp.slice(3)}`)).toBe(false);
    expect(await ring.verifyFingerprint(request, `${fp}00`)).toBe(false);
    expect(await ring.verifyFingerprint(request, "")).toBe(false);
    expect(await ring.verifyFingerprint(request, ":")).toBe(false);
  });

  it("still verifies fingerprints made before a rotation while the old key is in the ring", async () => {
    const before = parseKeyring(K1_SPEC);
    const after = parseKeyring(`${K2_SPEC},${K1_SPEC}`);
    const old = await before.fingerprint(request);
    expect(await after.verifyFingerprint(request, old)).toBe(true);
    const fresh = await after.fingerprint(request);
    expect(fresh).toMatch(/^k2:/);
    expect(fresh).not.toBe(old);
    expect(await after.verifyFingerprint(request, fresh)).toBe(true);
    expect(await before.verifyFingerprint(request, fresh)).toBe(false);
    expect(await parseKeyring(K2_SPEC).verifyFingerprint(request, old)).toBe(false);
  });

  it("refuses lone surrogates (they would collide with U+FFFD)", async () => {
    await expect(ring.fingerprint("\uD800")).rejects.toThrow(TypeError);
    const replacement = await ring.fingerprint("\uFFFD");
    expect(await ring.verifyFingerprint("\uD800", replacement)).toBe(false);
    expect(await ring.verifyFingerprint("\uFFFD", replacement)).toBe(true);
  });
});

describe("compatibility", () => {
  // Sealed and fingerprinted by the WebCrypto implementation before the keyring
  // moved to node:crypto: rows already stored must still decrypt, and replays
  // must still match their stored fingerprints.
  const SPEC = "fixture:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
  const BLOB =
    "0107666978747572656c6be2e85d4c4f0d46f3ebdb4cd9adba04dcba50d04d88eff56dc9c2608749e16d7e6976aed13988920dd994cda20e6609dcf8d72265f13e0cf4f331fefce7ced69d07d927722aca3fee80b236c445e452be557e3a3a5d348870";
  const FINGERPRINT = "fixture:a6d2e4a1c41eb5737066346a3fc0badb45743760568d8eb27eedd4a705e306a5";
  const bytes = Uint8Array.from(BLOB.match(/../g) ?? [], (pair) => Number.parseInt(pair, 16));

  it("decrypts a blob sealed before and reproduces its fingerprint", async () => {
    const keyring = parseKeyring(SPEC);
    expect(await keyring.decrypt(bytes, "msg_fixture")).toBe(
      "Your verification code is 482913. Do not share it with anyone.",
    );
    const request = '["+995555123456","verification_code",[["code","482913"]],"en"]';
    expect(await keyring.fingerprint(request)).toBe(FINGERPRINT);
    expect(await keyring.verifyFingerprint(request, FINGERPRINT)).toBe(true);
    await expect(keyring.decrypt(bytes, "msg_other")).rejects.toMatchObject({
      reason: "authentication_failed",
    });
  });
});
