// SHA-256, synchronous, on node:crypto (Node and Deno alike). WebCrypto's
// digest is asynchronous: on Deno every call is an op on the blocking pool,
// which costs far more than hashing one short API key. The hot path (looking
// up an API key on every request) uses this; the result is identical to
// crypto.subtle.digest("SHA-256", …) (a property test compares them).
import { createHash } from "node:crypto";

/** SHA-256 of the UTF-8 encoding of `text`, as 64 lowercase hex characters, synchronously. */
export function sha256HexSync(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}
