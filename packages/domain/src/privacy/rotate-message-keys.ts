// Key rotation (docs/privacy.md): re-encrypts every stored ciphertext that is
// not under the keyring's current key. Run it after every instance has the
// new spec (`new:…,old:…`); when it reports `remaining: 0` and
// `fingerprints_on_old_keys: 0`, the old key can leave the spec.
//
// Rows are walked in id order in batches; each batch is one transaction over
// rows claimed with FOR UPDATE SKIP LOCKED, so it is safe beside the purges,
// the status check and another rotation. A row that another instance held
// locked is skipped this run and shows up in `remaining`: run again.
import { DecryptError, type Keyring } from "@sms/crypto";
import type { Store } from "../store/index.ts";
import { DEFAULT_PURGE_BATCH_SIZE } from "./retention.ts";

export type RotateMessageKeysCounts = {
  /** Messages whose ciphertexts were re-encrypted under the current key. */
  rotated: number;
  /** Messages with a ciphertext that could not be decrypted (unknown key, tampered); left as they are. */
  failed: number;
  /** Messages still holding a ciphertext under another key after this run. */
  remaining: number;
  /**
   * Unexpired idempotency records whose fingerprint was made under another key.
   * They cannot be re-keyed (the request is not stored); they expire within 24 hours.
   */
  fingerprints_on_old_keys: number;
};

export async function rotateMessageKeys(
  deps: { store: Pick<Store, "messages" | "idempotency" | "transaction">; keyring: Keyring },
  input: { batchSize?: number; now: Date },
): Promise<RotateMessageKeysCounts> {
  const { store, keyring } = deps;
  const batchSize = input.batchSize ?? DEFAULT_PURGE_BATCH_SIZE;
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new RangeError("batchSize must be a positive integer");
  const current = keyring.currentKeyId;
  const counts: RotateMessageKeysCounts = {
    rotated: 0,
    failed: 0,
    remaining: 0,
    fingerprints_on_old_keys: 0,
  };

  let afterId = "";
  for (;;) {
    const batch = await store.transaction(async (tx) => {
      const rows = await tx.messages.lockForRotation({ afterId, keyId: current, batchSize });
      for (const row of rows) {
        try {
          const [recipient, text] = await Promise.all([
            reencrypt(keyring, row.recipientCiphertext, row.id),
            reencrypt(keyring, row.textCiphertext, row.id),
          ]);
          await tx.messages.setCiphertexts(row.id, recipient, text);
          counts.rotated++;
        } catch (error) {
          if (!(error instanceof DecryptError)) throw error;
          counts.failed++;
        }
      }
      return rows;
    });
    const last = batch.at(-1);
    if (!last || batch.length < batchSize) break;
    afterId = last.id;
  }

  counts.remaining = await store.messages.countNotUnderKey(current);
  counts.fingerprints_on_old_keys = await store.idempotency.countFingerprintsNotUnderKey(current, input.now);
  return counts;
}

async function reencrypt(keyring: Keyring, blob: Uint8Array | null, messageId: string) {
  if (blob === null) return null;
  if (!keyring.needsRotation(blob)) return blob;
  return keyring.encrypt(await keyring.decrypt(blob, messageId), messageId);
}
