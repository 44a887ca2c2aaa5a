// Run by src/cross-runtime.test.ts under Deno (`deno run`, no permissions).
// Reads a JSON request on stdin: decrypts the blob Node made, encrypts one for
// Node to decrypt, and reports fingerprint, hash and id so Node can compare.

import { isId, newId, parseKeyring, sha256Hex } from "../src/index.ts";

export type CrossRuntimeRequest = {
  spec: string;
  aad: string;
  /** base64 of a blob encrypted by Node. */
  blob: string;
  /** What Deno should encrypt for Node. */
  plaintext: string;
};

export type CrossRuntimeResponse = {
  runtime: string;
  decrypted: string;
  /** base64 of a blob encrypted by Deno. */
  blob: string;
  fingerprint: string;
  sha256: string;
  id: string;
};

type DenoGlobal = { version: { deno: string }; stdin: { readable: ReadableStream<Uint8Array> } };

const deno = (globalThis as unknown as { Deno?: DenoGlobal }).Deno;
if (deno === undefined) throw new Error("this script must run under Deno");

const toBase64 = (bytes: Uint8Array) => btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(""));
const fromBase64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

const request = JSON.parse(await new Response(deno.stdin.readable).text()) as CrossRuntimeRequest;
const keyring = parseKeyring(request.spec);
const id = newId("msg");

const response: CrossRuntimeResponse = {
  runtime: `deno ${deno.version.deno}`,
  decrypted: await keyring.decrypt(fromBase64(request.blob), request.aad),
  blob: toBase64(await keyring.encrypt(request.plaintext, request.aad)),
  fingerprint: await keyring.fingerprint(request.plaintext),
  sha256: await sha256Hex(request.plaintext),
  id: isId("msg", id) ? id : "invalid",
};
console.log(JSON.stringify(response));
