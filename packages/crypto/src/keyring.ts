// The message keyring: AES-256-GCM encryption at rest and keyed fingerprints.
//
// node:crypto (in Node and in Deno alike), not WebCrypto: WebCrypto's calls
// are asynchronous ops, and on the send path (two encryptions and a
// fingerprint per message) they cost about five times the CPU of these
// synchronous ones. Keys are held as native KeyObjects built once from the
// spec, whose bytes are then zeroed; the blob format and the fingerprints are
// unchanged (a test decrypts a blob sealed by the earlier WebCrypto version).
//
// HMAC-SHA-256 is computed from two SHA-256 states kept after the key's inner
// and outer pads (RFC 2104, section 4), copied for each fingerprint: the same
// MAC as createHmac, without the key schedule createHmac redoes on every call
// (2-3x the CPU in Deno; a replayed send verifies one fingerprint, a new one
// makes one or two).
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createSecretKey,
  type Hash,
  hkdfSync,
  type KeyObject,
} from "node:crypto";
import { base64ToBytes, bytesToBase64 } from "./encoding.ts";
import { timingSafeEqual } from "./secret.ts";

// Ciphertext blob, version 1 (all lengths in bytes):
//
//   offset  length  field
//   0       1       version = 0x01
//   1       1       L = key id length (1-16)
//   2       L       key id, ASCII [A-Za-z0-9_-]
//   2+L     12      nonce (random per encryption)
//   14+L    n+16    AES-256-GCM ciphertext of the UTF-8 plaintext (n bytes), then the 16-byte tag
//
// GCM additional data = blob[0 .. 2+L) (the header) followed by UTF-8(aad), so
// the version and key id are authenticated as well as the caller's aad.

const BLOB_VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,16}$/;
const FINGERPRINT_INFO = "sms/fingerprint/v1";
const FINGERPRINT_HEX = /^[0-9a-f]{64}$/;
/** In `u` mode a surrogate range matches only unpaired surrogates. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** A malformed `MESSAGE_ENCRYPTION_KEYS`. The message never contains key material. */
export class KeyringError extends Error {
  override name = "KeyringError";
}

export type DecryptErrorReason =
  | "malformed"
  | "unsupported_version"
  | "unknown_key"
  | "authentication_failed";

/** A blob that cannot be decrypted. The message never contains key material or plaintext. */
export class DecryptError extends Error {
  override name = "DecryptError";
  readonly reason: DecryptErrorReason;
  constructor(reason: DecryptErrorReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

export type Keyring = {
  /** The id of the key that encrypts (the first in the spec). */
  readonly currentKeyId: string;
  /** Every key id, encrypting key first. */
  readonly keyIds: readonly string[];
  /** AES-256-GCM with a fresh nonce; `aad` (the row's id) must be given again to decrypt. */
  encrypt(plaintext: string, aad: string): Promise<Uint8Array<ArrayBuffer>>;
  /** Decrypts with the key named in the blob. Throws DecryptError. */
  decrypt(blob: Uint8Array, aad: string): Promise<string>;
  /** The key id stored in a blob. Throws DecryptError on a malformed blob. */
  keyIdOf(blob: Uint8Array): string;
  /** True when the blob was not encrypted with the current key. */
  needsRotation(blob: Uint8Array): boolean;
  /** `<keyId>:<hex HMAC-SHA-256>` under a key derived (HKDF) from the current key. */
  fingerprint(data: string): Promise<string>;
  /** Recomputes with the key the fingerprint names; false for an unknown key id. */
  verifyFingerprint(data: string, fingerprint: string): Promise<boolean>;
};

type KeyEntry = {
  id: string;
  /** Version byte, id length, id: the blob header for this key. */
  header: Uint8Array<ArrayBuffer>;
  /** AES-256-GCM key. */
  aes: KeyObject;
  /**
   * HMAC-SHA-256 under the key derived with HKDF (info FINGERPRINT_INFO) from
   * the same bytes: SHA-256 states that have absorbed the key XOR ipad (inner)
   * and XOR opad (outer). Never updated themselves, only copied.
   */
  hmacInner: Hash;
  hmacOuter: Hash;
};

/** SHA-256's block size, and HMAC's pads (RFC 2104). */
const SHA256_BLOCK_BYTES = 64;
const IPAD = 0x36;
const OPAD = 0x5c;

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

function specError(message: string): KeyringError {
  return new KeyringError(
    `MESSAGE_ENCRYPTION_KEYS: ${message} (expected comma-separated <id>:<base64 of 32 bytes> entries)`,
  );
}

function keyEntry(id: string, raw: Uint8Array<ArrayBuffer>): KeyEntry {
  const header = new Uint8Array(2 + id.length);
  header[0] = BLOB_VERSION;
  header[1] = id.length;
  header.set(encoder.encode(id), 2);
  const aes = createSecretKey(raw);
  const hmacKey = new Uint8Array(
    hkdfSync("sha256", raw, new Uint8Array(0), encoder.encode(FINGERPRINT_INFO), KEY_BYTES),
  );
  // The key (32 bytes) is shorter than a block: each pad is the key, zero-filled, XOR the pad byte.
  const pad = new Uint8Array(SHA256_BLOCK_BYTES);
  pad.set(hmacKey);
  for (let i = 0; i < SHA256_BLOCK_BYTES; i++) pad[i]! ^= IPAD;
  const hmacInner = createHash("sha256").update(pad);
  for (let i = 0; i < SHA256_BLOCK_BYTES; i++) pad[i]! ^= IPAD ^ OPAD;
  const hmacOuter = createHash("sha256").update(pad);
  // The KeyObject and the hash states hold their own copies: the bytes are no longer needed.
  raw.fill(0);
  hmacKey.fill(0);
  pad.fill(0);
  return { id, header, aes, hmacInner, hmacOuter };
}

/**
 * Parses `MESSAGE_ENCRYPTION_KEYS`: `<id>:<base64 key>[,<id>:<base64 key>…]`.
 * The first key encrypts; every key decrypts. Keys are imported lazily, once.
 */
export function parseKeyring(spec: string): Keyring {
  if (typeof spec !== "string" || spec.trim() === "") throw specError("no keys given");
  const entries: KeyEntry[] = [];
  const byId = new Map<string, KeyEntry>();
  for (const [index, rawEntry] of spec.split(",").entries()) {
    const n = index + 1;
    const entry = rawEntry.trim();
    if (entry === "") throw specError(`entry ${n} is empty`);
    const colon = entry.indexOf(":");
    if (colon < 0) throw specError(`entry ${n} has no ":" between key id and key`);
    const id = entry.slice(0, colon);
    // Only an id that passed the pattern is ever quoted in a message.
    if (!KEY_ID_PATTERN.test(id)) {
      throw specError(`entry ${n}: key id must be 1-16 characters of A-Z, a-z, 0-9, "_" or "-"`);
    }
    if (byId.has(id)) throw specError(`duplicate key id "${id}" (entry ${n})`);
    const raw = base64ToBytes(entry.slice(colon + 1));
    if (raw === null) throw specError(`key "${id}" (entry ${n}) is not valid base64`);
    if (raw.length !== KEY_BYTES) {
      throw specError(
        `key "${id}" (entry ${n}) must decode to exactly ${KEY_BYTES} bytes, not ${raw.length}`,
      );
    }
    const keyEntryValue = keyEntry(id, raw);
    entries.push(keyEntryValue);
    byId.set(id, keyEntryValue);
  }
  const current = entries[0]!;

  function readHeader(blob: Uint8Array): {
    entry: KeyEntry | undefined;
    keyId: string;
    headerLength: number;
  } {
    if (!(blob instanceof Uint8Array) || blob.length < 2) {
      throw new DecryptError("malformed", "ciphertext is malformed (too short)");
    }
    if (blob[0] !== BLOB_VERSION) {
      throw new DecryptError("unsupported_version", `ciphertext version ${blob[0]} is not supported`);
    }
    const idLength = blob[1]!;
    const headerLength = 2 + idLength;
    if (idLength < 1 || idLength > 16 || blob.length < headerLength + NONCE_BYTES + TAG_BYTES) {
      throw new DecryptError("malformed", "ciphertext is malformed (bad length)");
    }
    const keyId = String.fromCharCode(...blob.subarray(2, headerLength));
    if (!KEY_ID_PATTERN.test(keyId))
      throw new DecryptError("malformed", "ciphertext is malformed (bad key id)");
    return { entry: byId.get(keyId), keyId, headerLength };
  }

  function additionalData(header: Uint8Array, aad: string): Uint8Array<ArrayBuffer> {
    if (typeof aad !== "string") throw new TypeError("aad must be a string");
    const aadBytes = encoder.encode(aad);
    const out = new Uint8Array(header.length + aadBytes.length);
    out.set(header);
    out.set(aadBytes, header.length);
    return out;
  }

  function wellFormed(text: string, what: string): Uint8Array<ArrayBuffer> {
    if (typeof text !== "string") throw new TypeError(`${what} must be a string`);
    // TextEncoder would silently turn a lone surrogate into U+FFFD: refuse
    // rather than store (or fingerprint) something other than what was given.
    if (LONE_SURROGATE.test(text)) throw new TypeError(`${what} is not well-formed Unicode (lone surrogate)`);
    return encoder.encode(text);
  }

  function hmacHex(entry: KeyEntry, data: Uint8Array<ArrayBuffer>): string {
    const inner = entry.hmacInner.copy().update(data).digest();
    return entry.hmacOuter.copy().update(inner).digest("hex");
  }

  const keyring: Keyring = {
    currentKeyId: current.id,
    keyIds: Object.freeze(entries.map((e) => e.id)),

    async encrypt(plaintext, aad) {
      const data = wellFormed(plaintext, "plaintext");
      const additional = additionalData(current.header, aad);
      const nonce = crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
      const cipher = createCipheriv("aes-256-gcm", current.aes, nonce, { authTagLength: TAG_BYTES });
      cipher.setAAD(additional);
      const head = cipher.update(data);
      const tail = cipher.final();
      const tag = cipher.getAuthTag();
      const offset = current.header.length + NONCE_BYTES;
      const blob = new Uint8Array(offset + head.length + tail.length + TAG_BYTES);
      blob.set(current.header);
      blob.set(nonce, current.header.length);
      blob.set(head, offset);
      blob.set(tail, offset + head.length);
      blob.set(tag, offset + head.length + tail.length);
      return blob;
    },

    async decrypt(blob, aad) {
      const { entry, keyId, headerLength } = readHeader(blob);
      if (entry === undefined) {
        throw new DecryptError("unknown_key", `ciphertext key id "${keyId}" is not in the keyring`);
      }
      const additional = additionalData(blob.subarray(0, headerLength), aad);
      const nonce = blob.subarray(headerLength, headerLength + NONCE_BYTES);
      const sealed = blob.subarray(headerLength + NONCE_BYTES, blob.length - TAG_BYTES);
      const tag = blob.subarray(blob.length - TAG_BYTES);
      let plain: Uint8Array;
      try {
        const decipher = createDecipheriv("aes-256-gcm", entry.aes, nonce, { authTagLength: TAG_BYTES });
        decipher.setAAD(additional);
        decipher.setAuthTag(tag);
        const head = decipher.update(sealed);
        const tail = decipher.final();
        plain = new Uint8Array(head.length + tail.length);
        plain.set(head);
        plain.set(tail, head.length);
      } catch {
        throw new DecryptError(
          "authentication_failed",
          "ciphertext failed authentication (tampered, or decrypted with the wrong aad)",
        );
      }
      try {
        return decoder.decode(plain);
      } catch {
        throw new DecryptError("malformed", "decrypted data is not UTF-8 text");
      }
    },

    keyIdOf(blob) {
      return readHeader(blob).keyId;
    },

    needsRotation(blob) {
      return readHeader(blob).keyId !== current.id;
    },

    async fingerprint(data) {
      return `${current.id}:${hmacHex(current, wellFormed(data, "fingerprint data"))}`;
    },

    async verifyFingerprint(data, fingerprint) {
      if (typeof data !== "string" || typeof fingerprint !== "string") return false;
      const colon = fingerprint.indexOf(":");
      if (colon < 0) return false;
      const entry = byId.get(fingerprint.slice(0, colon));
      const mac = fingerprint.slice(colon + 1);
      if (entry === undefined || !FINGERPRINT_HEX.test(mac) || LONE_SURROGATE.test(data)) return false;
      return timingSafeEqual(mac, hmacHex(entry, encoder.encode(data)));
    },
  };
  return Object.freeze(keyring);
}

/** A fresh spec entry, `<id>:<base64 of 32 random bytes>`, e.g. for a development key. */
export function generateKeySpec(id = "k1"): string {
  if (!KEY_ID_PATTERN.test(id))
    throw new KeyringError('key id must be 1-16 characters of A-Z, a-z, 0-9, "_" or "-"');
  return `${id}:${bytesToBase64(crypto.getRandomValues(new Uint8Array(KEY_BYTES)))}`;
}
