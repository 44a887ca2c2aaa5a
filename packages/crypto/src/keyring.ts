import { base64ToBytes, bytesToBase64, bytesToHex } from "./encoding.ts";
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

type ImportedKeys = { aes: CryptoKey; hmac: CryptoKey };

type KeyEntry = {
  id: string;
  /** Version byte, id length, id: the blob header for this key. */
  header: Uint8Array<ArrayBuffer>;
  /** Imports the CryptoKeys on first use, then returns the same ones. */
  keys: () => Promise<ImportedKeys>;
};

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

function specError(message: string): KeyringError {
  return new KeyringError(
    `MESSAGE_ENCRYPTION_KEYS: ${message} (expected comma-separated <id>:<base64 of 32 bytes> entries)`,
  );
}

async function importKeys(raw: Uint8Array<ArrayBuffer>): Promise<ImportedKeys> {
  const aes = await crypto.subtle.importKey("raw", raw, { name: "AES-GCM" }, false, ["encrypt", "decrypt"]);
  const ikm = await crypto.subtle.importKey("raw", raw, "HKDF", false, ["deriveKey"]);
  const hmac = await crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: encoder.encode(FINGERPRINT_INFO) },
    ikm,
    { name: "HMAC", hash: "SHA-256", length: 256 },
    false,
    ["sign"],
  );
  return { aes, hmac };
}

function keyEntry(id: string, raw: Uint8Array<ArrayBuffer>): KeyEntry {
  const header = new Uint8Array(2 + id.length);
  header[0] = BLOB_VERSION;
  header[1] = id.length;
  header.set(encoder.encode(id), 2);
  let imported: Promise<ImportedKeys> | undefined;
  return {
    id,
    header,
    keys: () => {
      // Once imported (non-extractable), the raw bytes are no longer needed.
      imported ??= importKeys(raw).finally(() => raw.fill(0));
      return imported;
    },
  };
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

  async function hmacHex(entry: KeyEntry, data: Uint8Array<ArrayBuffer>): Promise<string> {
    const { hmac } = await entry.keys();
    return bytesToHex(new Uint8Array(await crypto.subtle.sign("HMAC", hmac, data)));
  }

  const keyring: Keyring = {
    currentKeyId: current.id,
    keyIds: Object.freeze(entries.map((e) => e.id)),

    async encrypt(plaintext, aad) {
      const data = wellFormed(plaintext, "plaintext");
      const additional = additionalData(current.header, aad);
      const { aes } = await current.keys();
      const nonce = crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
      const sealed = new Uint8Array(
        await crypto.subtle.encrypt(
          { name: "AES-GCM", iv: nonce, additionalData: additional, tagLength: TAG_BYTES * 8 },
          aes,
          data,
        ),
      );
      const blob = new Uint8Array(current.header.length + NONCE_BYTES + sealed.length);
      blob.set(current.header);
      blob.set(nonce, current.header.length);
      blob.set(sealed, current.header.length + NONCE_BYTES);
      return blob;
    },

    async decrypt(blob, aad) {
      const { entry, keyId, headerLength } = readHeader(blob);
      if (entry === undefined) {
        throw new DecryptError("unknown_key", `ciphertext key id "${keyId}" is not in the keyring`);
      }
      const additional = additionalData(blob.subarray(0, headerLength), aad);
      // Copies: the caller's bytes may be a Buffer or live in a SharedArrayBuffer.
      const nonce = new Uint8Array(blob.subarray(headerLength, headerLength + NONCE_BYTES));
      const sealed = new Uint8Array(blob.subarray(headerLength + NONCE_BYTES));
      const { aes } = await entry.keys();
      let plain: ArrayBuffer;
      try {
        plain = await crypto.subtle.decrypt(
          { name: "AES-GCM", iv: nonce, additionalData: additional, tagLength: TAG_BYTES * 8 },
          aes,
          sealed,
        );
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
      return `${current.id}:${await hmacHex(current, wellFormed(data, "fingerprint data"))}`;
    },

    async verifyFingerprint(data, fingerprint) {
      if (typeof data !== "string" || typeof fingerprint !== "string") return false;
      const colon = fingerprint.indexOf(":");
      if (colon < 0) return false;
      const entry = byId.get(fingerprint.slice(0, colon));
      const mac = fingerprint.slice(colon + 1);
      if (entry === undefined || !FINGERPRINT_HEX.test(mac) || LONE_SURROGATE.test(data)) return false;
      return timingSafeEqual(mac, await hmacHex(entry, encoder.encode(data)));
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
