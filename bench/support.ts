// What the benchmark scripts share: where things are, their `--name=value`
// arguments, a free loopback port, waiting for a process to answer, and the
// API started as its own Deno process the way production runs it.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DENO_RUN_FLAGS } from "../scripts/deno.mjs";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
export const API_DIR = join(ROOT, "apps", "api");

/** The script's `--name=value` arguments (`--flag` alone is "true"). */
export function benchArgs(): Record<string, string> {
  return Object.fromEntries(
    Deno.args
      .filter((arg) => arg.startsWith("--"))
      .map((arg) => {
        const [name = "", ...value] = arg.slice(2).split("=");
        return [name, value.length ? value.join("=") : "true"];
      }),
  );
}

/** A loopback port nothing listens on right now. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `ready` (a throw counts as not yet) until it is true, for at most `timeoutMs`. */
export async function waitUntil(
  ready: () => Promise<boolean>,
  what: string,
  { timeoutMs = 60_000, pauseMs = 200 } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await ready().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs / 1000} s`);
    await sleep(pauseMs);
  }
}

/** True once `url` answers 200 (the body is discarded). */
export async function answersOk(url: string): Promise<boolean> {
  const response = await fetch(url);
  await response.body?.cancel();
  return response.ok;
}

/** The settings every benchmark's API process needs in production mode. */
export const API_ENV = {
  NODE_ENV: "production",
  CLAIM_COOKIE_SECRET: "bench-claim-cookie-secret-0123456789abcdef",
  MESSAGE_ENCRYPTION_KEYS: "bench:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
  HOST: "127.0.0.1",
  DENO_NO_UPDATE_CHECK: "1",
} as const satisfies Record<string, string>;

export type ServerProcess = {
  baseUrl: string;
  pid: number;
  child: Deno.ChildProcess;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
};

/**
 * A Deno script as a server process, once `ready` says so. Its stdout is
 * discarded and its stderr drained on stop, unless `output` is "piped" (the
 * caller reads both streams).
 */
export async function startServerProcess(options: {
  /** `deno run` arguments after DENO_RUN_FLAGS: the script and its own arguments. */
  args: string[];
  cwd: string;
  env: Record<string, string>;
  ready: () => Promise<boolean>;
  what: string;
  output?: "discarded" | "piped";
}): Promise<Omit<ServerProcess, "baseUrl">> {
  const piped = options.output === "piped";
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...DENO_RUN_FLAGS, ...options.args],
    cwd: options.cwd,
    env: options.env,
    stdin: "null",
    stdout: piped ? "piped" : "null",
    stderr: "piped",
  }).spawn();
  await waitUntil(options.ready, `${options.what} did not become ready`);
  return {
    pid: child.pid,
    child,
    async stop() {
      child.kill("SIGTERM");
      if (!piped) await child.stderr.cancel();
      await child.status;
    },
  };
}

/** `apps/api/src/main.ts` on a free port with API_ENV and `env`, once its `/readyz` answers 200. */
export async function startApi(options: {
  env: Record<string, string>;
  /** `deno run` arguments before the script (e.g. --inspect). */
  denoArgs?: string[];
  output?: "discarded" | "piped";
  name?: string;
  /** Default: a free one. */
  port?: number;
  /** The service's directory (default: this checkout's apps/api; bench messages --compare-root). */
  apiDir?: string;
}): Promise<ServerProcess> {
  const port = options.port ?? freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const server = await startServerProcess({
    args: [...(options.denoArgs ?? []), "src/main.ts"],
    cwd: options.apiDir ?? API_DIR,
    env: { ...API_ENV, PORT: String(port), ...options.env },
    ready: () => answersOk(`${baseUrl}/readyz`),
    what: options.name ?? "the server",
    output: options.output,
  });
  return { baseUrl, ...server };
}
