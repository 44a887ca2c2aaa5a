// Proves the blob, fingerprint and hash formats are identical under Node and
// Deno: Node encrypts, Deno decrypts (and the reverse), using the Deno binary
// pinned in apps/api.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { CrossRuntimeRequest, CrossRuntimeResponse } from "../test/cross-runtime.deno.ts";
import { generateKeySpec, isId, parseKeyring, sha256Hex } from "./index.ts";

const DENO =
  process.env.DENO_BIN ?? fileURLToPath(new URL("../../../apps/api/node_modules/.bin/deno", import.meta.url));
const SCRIPT = fileURLToPath(new URL("../test/cross-runtime.deno.ts", import.meta.url));

function runDeno(input: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(DENO, ["run", "--no-config", "--no-lock", "--quiet", SCRIPT], {
      env: { ...process.env, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve(stdout);
      else reject(new Error(`deno exited with ${code}: ${stderr}`));
    });
    child.stdin.end(input);
  });
}

describe("cross-runtime (Node ⇄ Deno)", () => {
  it("finds the Deno binary", () => {
    expect(existsSync(DENO), `no Deno binary at ${DENO} (set DENO_BIN)`).toBe(true);
  });

  it("decrypts in Deno what Node encrypted, and the reverse", { timeout: 60_000 }, async () => {
    // Two keys so the k1 blob from Node also exercises decrypt-with-old-key in Deno.
    const k1 = generateKeySpec("k1");
    const spec = `${generateKeySpec("k2")},${k1}`;
    const aad = "msg_01hf7yat00abcdefghjkmnpqrs";
    const fromNode = "Node → Deno: გამარჯობა 👋🏽 🇬🇪";
    const fromDeno = "Deno → Node: თქვენი კოდია 123456 ✅";

    const nodeBlob = await parseKeyring(k1).encrypt(fromNode, aad);
    const request: CrossRuntimeRequest = {
      spec,
      aad,
      blob: Buffer.from(nodeBlob).toString("base64"),
      plaintext: fromDeno,
    };
    const response = JSON.parse(await runDeno(JSON.stringify(request))) as CrossRuntimeResponse;

    expect(response.runtime).toMatch(/^deno \d+\.\d+/);
    expect(response.decrypted).toBe(fromNode);

    const keyring = parseKeyring(spec);
    const denoBlob = Buffer.from(response.blob, "base64");
    expect(keyring.keyIdOf(denoBlob)).toBe("k2");
    expect(await keyring.decrypt(denoBlob, aad)).toBe(fromDeno);

    expect(response.fingerprint).toBe(await keyring.fingerprint(fromDeno));
    expect(await keyring.verifyFingerprint(fromDeno, response.fingerprint)).toBe(true);
    expect(response.sha256).toBe(await sha256Hex(fromDeno));
    expect(isId("msg", response.id)).toBe(true);
  });
});
