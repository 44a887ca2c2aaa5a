// Runs the Python client's unittest suites (packages/client-python) with
// `python3` and reads unittest's summary, so that a vitest file fails when a
// Python test fails, errors, is skipped, or when fewer tests ran than the
// module defines.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { API_DIR } from "../harness.ts";

export const CLIENT_PYTHON_DIR = join(API_DIR, "..", "..", "packages", "client-python");

export type UnittestRun = {
  /** python3's exit code (null if it was killed). */
  code: number | null;
  /** Everything it wrote (unittest reports on standard error). */
  output: string;
  /** "Ran N tests": N, or null when unittest never got that far. */
  ran: number | null;
  /** The closing verdict line: "OK", "OK (skipped=1)", "FAILED (failures=1)". */
  verdict: string | null;
};

/** How many `test_…` methods a module of packages/client-python/tests defines. */
export function definedTests(module: string): number {
  const text = readFileSync(join(CLIENT_PYTHON_DIR, "tests", module), "utf8");
  return text.match(/^ {4}def test_\w+\(/gm)?.length ?? 0;
}

/**
 * `python3 -m unittest discover -s tests -p <pattern> -v` in packages/client-python, asynchronously (a
 * synchronous spawn would stop this process reading a server's output, and a server blocked on a full pipe
 * would hang the run).
 */
export function runUnittest(pattern: string, env: Record<string, string> = {}): Promise<UnittestRun> {
  return new Promise((resolve, reject) => {
    const child = spawn("python3", ["-m", "unittest", "discover", "-s", "tests", "-p", pattern, "-v"], {
      cwd: CLIENT_PYTHON_DIR,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        // No __pycache__ in the checkout; output as it happens.
        PYTHONDONTWRITEBYTECODE: "1",
        PYTHONUNBUFFERED: "1",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
    });
    child.once("error", reject);
    child.once("close", (code) => {
      const ran = /^Ran (\d+) tests? in /m.exec(output)?.[1];
      const verdict = /^(OK|FAILED)\b.*$/m.exec(output.slice(output.lastIndexOf("\nRan ")))?.[0] ?? null;
      resolve({ code, output, ran: ran === undefined ? null : Number(ran), verdict });
    });
  });
}
