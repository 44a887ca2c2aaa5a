// What the benchmark scripts share: where things are, their `--name=value`
// arguments, a free loopback port, waiting for a process to answer, the
// API started as its own Deno process the way production runs it, and the
// CPU time and memory of processes (the service, its PostgreSQL backends).
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
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

/** The middle value (the mean of the two middle ones for an even count); 0 for none. */
export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

/** Minimum, median (support's median, the middle two averaged) and maximum of `values` in whole ms. */
export const msStats = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    min_ms: Math.round(sorted[0] ?? 0),
    median_ms: Math.round(median(sorted)),
    max_ms: Math.round(sorted.at(-1) ?? 0),
    runs: sorted.length,
  };
};

/** The benches' ordinary send: POST /v1/messages, a verification code to `to` under a fresh Idempotency-Key. */
export function sendCode(
  baseUrl: string,
  apiKey: string,
  to: string,
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(`${baseUrl}/v1/messages`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${apiKey}`,
      "Content-Type": "application/json",
      "Idempotency-Key": crypto.randomUUID(),
    },
    body: JSON.stringify({ to, template: "verification_code", variables: { code: "482913" }, locale: "en" }),
    ...(signal ? { signal } : {}),
  });
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

/** What becomes of a server process's standard output (see startServerProcess). */
export type ServerOutput = "discarded" | "piped" | { file: string };

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
 * caller reads both streams) or `{ file }` (stdout appended to that file: the
 * service's log lines, and what V8 flags such as `--trace-gc` print).
 */
export async function startServerProcess(options: {
  /** `deno run` arguments after DENO_RUN_FLAGS: the script and its own arguments. */
  args: string[];
  cwd: string;
  env: Record<string, string>;
  ready: () => Promise<boolean>;
  what: string;
  output?: ServerOutput;
}): Promise<Omit<ServerProcess, "baseUrl">> {
  const piped = options.output === "piped";
  const file = typeof options.output === "object" ? options.output.file : null;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...DENO_RUN_FLAGS, ...options.args],
    cwd: options.cwd,
    env: options.env,
    stdin: "null",
    stdout: piped || file ? "piped" : "null",
    stderr: "piped",
  }).spawn();
  const copied = file
    ? child.stdout.pipeTo((await Deno.open(file, { write: true, create: true, append: true })).writable)
    : null;
  await waitUntil(options.ready, `${options.what} did not become ready`);
  return {
    pid: child.pid,
    child,
    async stop() {
      child.kill("SIGTERM");
      if (!piped) await child.stderr.cancel();
      await child.status;
      await copied;
    },
  };
}

/** `apps/api/src/main.ts` on a free port with API_ENV and `env`, once its `/readyz` answers 200. */
export async function startApi(options: {
  env: Record<string, string>;
  /** `deno run` arguments before the script (e.g. --inspect). */
  denoArgs?: string[];
  output?: ServerOutput;
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

/** CPU time (user + system, ms) of each of `pids` that is still running (Linux /proc, read with cat: Deno guards /proc). */
export function cpuByPid(pids: number[]): Map<number, number> {
  const times = new Map<number, number>();
  for (const pid of pids) {
    const output = new Deno.Command("cat", { args: [`/proc/${pid}/stat`], stderr: "null" }).outputSync();
    const stat = new TextDecoder().decode(output.stdout);
    if (!stat) continue; // gone
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    times.set(pid, ((Number(fields[11]) + Number(fields[12])) * 1000) / 100); // USER_HZ is 100 on Linux
  }
  return times;
}

/**
 * CPU time spent between two samples by the processes in `after`: a process
 * that started in between counts in full. One that exited in between is lost
 * (its time cannot be read any more), so the figure is a lower bound; the
 * PostgreSQL backends are listed again after the run to keep that rare.
 */
export function cpuSpent(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

/** The machine's CPU time so far (/proc/stat, in USER_HZ ticks): all of it, and the part not idle. */
export function machineCpu(): { busy: number; total: number } {
  const output = new Deno.Command("cat", { args: ["/proc/stat"], stderr: "null" }).outputSync();
  const fields =
    new TextDecoder().decode(output.stdout).split("\n")[0]?.trim().split(/\s+/).slice(1, 9).map(Number) ?? [];
  const total = fields.reduce((sum, value) => sum + value, 0);
  // idle and iowait are the time no process ran; steal (time the host gave elsewhere) counts as busy.
  return { busy: total - (fields[3] ?? 0) - (fields[4] ?? 0), total };
}

/** Resident memory of a process, in MB (Linux /proc, read with cat: Deno guards /proc). */
export function rssMb(pid: number): number {
  const output = new Deno.Command("cat", { args: [`/proc/${pid}/status`], stderr: "null" }).outputSync();
  const line = new TextDecoder()
    .decode(output.stdout)
    .split("\n")
    .find((candidate) => candidate.startsWith("VmRSS:"));
  return Math.round(Number(line?.match(/(\d+)/)?.[1] ?? 0) / 1024);
}

/**
 * Waits until nothing runs in `databaseUrl`'s database (no active session, no autovacuum worker) for
 * `quietMs`, at most `maxMs`: the previous window's aftermath (a server's last log batches, the
 * autovacuum its rows set off) is not measured in the next one. The milliseconds waited.
 */
export async function untilDatabaseQuiet(
  adminUrl: string,
  databaseUrl: string,
  { quietMs = 500, maxMs = 20_000 }: { quietMs?: number; maxMs?: number } = {},
): Promise<number> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  const started = performance.now();
  try {
    const name = new URL(databaseUrl).pathname.slice(1);
    let quietSince = performance.now();
    while (performance.now() - started < maxMs) {
      const { rows } = await client.query(
        `SELECT count(*)::int AS busy FROM pg_stat_activity
         WHERE datname = $1 AND pid <> pg_backend_pid()
           AND (state = 'active' OR backend_type = 'autovacuum worker')`,
        [name],
      );
      if ((rows[0] as { busy: number }).busy > 0) quietSince = performance.now();
      else if (performance.now() - quietSince >= quietMs) break;
      await sleep(100);
    }
    return Math.round(performance.now() - started);
  } finally {
    await client.end();
  }
}

/**
 * Checkpoints the PostgreSQL server has started so far (timed and requested: pg_stat_bgwriter), and with
 * `force` first one more, at once (CHECKPOINT): a window that follows starts with PostgreSQL's dirty pages
 * written, not halfway to the checkpoint its WAL calls for (bench/log/2026-11-29.md#a-checkpoint-in-some-windows-2026-11-29).
 */
export async function checkpoints(adminUrl: string, { force = false } = {}): Promise<number> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    if (force) await client.query("CHECKPOINT");
    const { rows } = await client.query(
      "SELECT (checkpoints_timed + checkpoints_req)::int AS n FROM pg_stat_bgwriter",
    );
    return (rows[0] as { n: number }).n;
  } finally {
    await client.end();
  }
}

/** The PostgreSQL backends serving a database (for their CPU time). */
export async function backendPids(adminUrl: string, databaseUrl: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const name = new URL(databaseUrl).pathname.slice(1);
    const { rows } = await client.query("SELECT pid FROM pg_stat_activity WHERE datname = $1", [name]);
    return rows.map((row: { pid: number }) => row.pid);
  } finally {
    await client.end();
  }
}
