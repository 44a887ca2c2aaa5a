// The adapter's classification under Deno (the service's runtime), where fetch
// fails differently from Node's undici: runs test/deno-classification.ts with
// the workspace's Deno and checks it reaches the same verdicts.

import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { denoBinary, denoRunArgs } from "../../../scripts/deno.mjs";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const deno = denoBinary();
const script = fileURLToPath(new URL("../test/deno-classification.ts", import.meta.url));

type DenoResult = {
  runtime: string;
  submits: Record<string, { kind: string; problem: string | null }>;
  statuses: string[];
  sendsPerNumber: Record<string, number>;
  keyLeaked: boolean;
};

function runUnderDeno(): Promise<DenoResult> {
  return new Promise((resolve, reject) => {
    execFile(
      deno,
      denoRunArgs(script),
      {
        cwd: packageDir,
        timeout: 60_000,
        env: { ...process.env, DENO_NO_UPDATE_CHECK: "1", DENO_NO_PROMPT: "1", NO_COLOR: "1" },
      },
      (error, stdout, stderr) => {
        if (error) {
          reject(new Error(`deno failed: ${error.message}\n${stderr}`));
          return;
        }
        const line = stdout.trim().split("\n").at(-1) ?? "";
        resolve(JSON.parse(line) as DenoResult);
      },
    );
  });
}

describe("under Deno", () => {
  it("classifies accept / refused / slow / dropped like under Node", { timeout: 70_000 }, async () => {
    const result = await runUnderDeno();
    expect(result.runtime).toBe("deno");
    // The same verdicts, and the same reasons for them, as the Node tests reach.
    expect(result.submits).toEqual({
      accept: { kind: "accepted", problem: null },
      refused: { kind: "unreachable", problem: "connection_refused" },
      slow: { kind: "indeterminate", problem: "timeout" },
      dropped: { kind: "indeterminate", problem: "connection_dropped" },
      unauthorized: { kind: "rejected", problem: null },
      garbage: { kind: "indeterminate", problem: "unreadable_answer" },
      truncated: { kind: "indeterminate", problem: "connection_dropped" },
      serverError: { kind: "indeterminate", problem: "server_error" },
      droppedAfterReuse: { kind: "indeterminate", problem: "connection_dropped" },
    });
    expect(result.statuses).toEqual(["pending", "delivered", "error", "error"]);
    // Each scripted number reached the fake exactly once; the refused one never did.
    expect(result.sendsPerNumber).toEqual({
      "995599000001": 1,
      "995599000004": 1,
      "995599000005": 1,
      "995599000006": 1,
      "995599000007": 1,
      "995599000008": 1,
      "995599000009": 1,
      "995599000010": 1,
    });
    expect(result.keyLeaked).toBe(false);
  });
});
