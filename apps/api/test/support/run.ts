// One child process run to its end, its output kept: the tests that run a
// command (the service's own entry points, bash, php, python) and read what it
// printed and how it exited. A run that outlives `timeoutMs` is killed (SIGKILL)
// and resolves with the output so far (its code then null).
import { spawn } from "node:child_process";
import process from "node:process";

export type CommandRun = { code: number | null; stdout: string; stderr: string };

/** The environment a child gets by default: PATH and HOME only, plus `env` (nothing else leaks in). */
export function childEnv(env: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env };
}

export function runCommand(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<CommandRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      resolve({ code: null, stdout, stderr });
    }, options.timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
