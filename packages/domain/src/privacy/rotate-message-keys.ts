// Key rotation (privacy issue, point 1): re-encrypts every stored ciphertext
// that is not under the keyring's current key. Run it after every instance
// has the new spec (`new:…,old:…`); when it reports `remaining: 0` and
// `fingerprints_on_old_keys: 0`, the old key can leave the spec.
//
// Rows are walked in id order in batches; each batch is one transaction over
// rows claimed with FOR UPDATE SKIP LOCKED, so it is safe beside the purges,
// the status check and another rotation. A row that another instance held
// locked is skipped this run and shows up in `remaining`: run again.
import { DecryptError, type Keyring } from "@sms/crypto";
import { Prisma, type PrismaClient } from "@sms/db";
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

type Row = { id: string; recipient_ciphertext: Uint8Array | null; text_ciphertext: Uint8Array | null };

export async function rotateMessageKeys(options: {
  prisma: PrismaClient;
  keyring: Keyring;
  batchSize?: number;
  /** For the fingerprint count (default: the current time). */
  now?: Date;
}): Promise<RotateMessageKeysCounts> {
  const { prisma, keyring } = options;
  const batchSize = options.batchSize ?? DEFAULT_PURGE_BATCH_SIZE;
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new RangeError("batchSize must be a positive integer");
  const current = keyring.currentKeyId;
  const counts: RotateMessageKeysCounts = {
    rotated: 0,
    failed: 0,
    remaining: 0,
    fingerprints_on_old_keys: 0,
  };

  let cursor = "";
  for (;;) {
    const batch = await prisma.$transaction(async (tx) => {
      // The key id sits in the blob's header (byte 1 = its length, then the
      // id in ASCII), so the rows to rotate are found without decrypting.
      const rows = await tx.$queryRaw<Row[]>`
        SELECT id, recipient_ciphertext, text_ciphertext FROM messages
        WHERE id > ${cursor} AND (${notUnder("recipient_ciphertext", current)} OR ${notUnder("text_ciphertext", current)})
        ORDER BY id
        LIMIT ${batchSize}
        FOR UPDATE SKIP LOCKED`;
      for (const row of rows) {
        try {
          const [recipient, text] = await Promise.all([
            reencrypt(keyring, row.recipient_ciphertext, row.id),
            reencrypt(keyring, row.text_ciphertext, row.id),
          ]);
          await tx.message.update({
            where: { id: row.id },
            data: { recipientCiphertext: recipient, textCiphertext: text },
          });
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
    cursor = last.id;
  }

  const [remaining] = await prisma.$queryRaw<Array<{ count: bigint | number }>>`
    SELECT count(*) AS count FROM messages
    WHERE ${notUnder("recipient_ciphertext", current)} OR ${notUnder("text_ciphertext", current)}`;
  const [oldFingerprints] = await prisma.$queryRaw<Array<{ count: bigint | number }>>`
    SELECT count(*) AS count FROM idempotency_records
    WHERE expires_at > ${options.now ?? new Date()} AND split_part(fingerprint, ':', 1) <> ${current}`;
  counts.remaining = Number(remaining?.count ?? 0);
  counts.fingerprints_on_old_keys = Number(oldFingerprints?.count ?? 0);
  return counts;
}

/**
 * SQL: `column` holds a blob whose key id is not `keyId` (a malformed blob
 * counts too, and then fails to decrypt). The column name is fixed text; the
 * key id is a parameter.
 */
function notUnder(column: "recipient_ciphertext" | "text_ciphertext", keyId: string): Prisma.Sql {
  const col = Prisma.raw(column);
  // CASE, not OR: SQL does not promise to evaluate OR's operands in order,
  // and get_byte on a too-short blob would raise.
  return Prisma.sql`(${col} IS NOT NULL AND CASE WHEN length(${col}) < 2 THEN true
    ELSE encode(substring(${col} from 3 for get_byte(${col}, 1)), 'escape') <> ${keyId} END)`;
}

async function reencrypt(keyring: Keyring, blob: Uint8Array | null, messageId: string) {
  if (blob === null) return null;
  const bytes = new Uint8Array(blob);
  if (!keyring.needsRotation(bytes)) return bytes as Uint8Array<ArrayBuffer>;
  return keyring.encrypt(await keyring.decrypt(bytes, messageId), messageId);
}
