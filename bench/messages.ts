// Benchmark of the message routes: send (a unique Idempotency-Key per request),
// idempotent replay, and read. On demand only, never in CI:
//
//   cd /work/main && node scripts/bootstrap.mjs bench messages [options]
//
// It creates a fresh PostgreSQL database (from TEST_POSTGRES_URL, default
// postgresql://postgres@127.0.0.1:5432/postgres), starts the Deno server on it
// with limits high enough not to interfere, creates a test key, drives load
// with wrk (or autocannon when wrk is not installed), prints one JSON summary
// per scenario, then stops the server and drops the database.
//
// Options (all optional):
//   --duration=20       seconds per scenario (after a 3 s warm-up)
//   --connections=64    concurrent connections
//   --scenarios=send,replay,read
//   --tool=wrk|autocannon
//   --pool=20           DATABASE_POOL_SIZE of the server
//   --log-level=info    LOG_LEVEL of the server (its output is discarded)
//   --inspect=127.0.0.1:9229  start the server with the V8 inspector (for a CPU profile)
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createPostgresTestDatabase, testPostgresAdminUrl } from "@sms/db/testing";
import pg from "pg";
import { DENO_RUN_FLAGS } from "../scripts/deno.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const API_DIR = join(ROOT, "apps", "api");
const DENO = Deno.execPath();

const args = Object.fromEntries(
  Deno.args
    .filter((arg) => arg.startsWith("--"))
    .map((arg) => {
      const [name, value = "true"] = arg.slice(2).split("=");
      return [name, value];
    }),
);
const DURATION_S = Number(args.duration ?? 20);
const CONNECTIONS = Number(args.connections ?? 64);
const SCENARIOS = String(args.scenarios ?? "send,replay,read").split(",");
const POOL = String(args.pool ?? 20);
const LOG_LEVEL = String(args["log-level"] ?? "info");

function hasWrk(): boolean {
  try {
    return (
      new Deno.Command("wrk", { args: ["--version"], stdout: "null", stderr: "null" }).outputSync().code <= 1
    );
  } catch {
    return false;
  }
}
const TOOL = String(args.tool ?? (hasWrk() ? "wrk" : "autocannon"));

type Scenario = {
  name: string;
  method: "GET" | "POST";
  path: string;
  headers: Record<string, string>;
  body?: string;
  uniqueKey?: boolean;
};
type Result = {
  scenario: string;
  tool: string;
  connections: number;
  duration_s: number;
  requests: number;
  requests_per_s: number;
  non_2xx: number;
  errors: number;
  latency_ms: { avg: number; p50: number; p90: number; p99: number; max: number };
  /** CPU time per request of the API process and of its PostgreSQL backends (independent of other load). */
  cpu_ms_per_request?: { api: number; postgres: number };
};

async function freePort(): Promise<number> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** utime + stime of processes, in milliseconds (Linux /proc, read with cat: Deno guards /proc). */
function cpuMs(pids: number[]): number {
  if (pids.length === 0) return 0;
  const output = new Deno.Command("cat", {
    args: pids.map((pid) => `/proc/${pid}/stat`),
    stderr: "null",
  }).outputSync();
  let total = 0;
  for (const stat of new TextDecoder().decode(output.stdout).split("\n").filter(Boolean)) {
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    total += ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // USER_HZ is 100 on Linux
  }
  return total;
}

/** The PostgreSQL backends serving a database (for their CPU time). */
async function backendPids(adminUrl: string, databaseUrl: string): Promise<number[]> {
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

async function startServer(
  databaseUrl: string,
): Promise<{ baseUrl: string; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  const child = new Deno.Command(DENO, {
    args: ["run", ...DENO_RUN_FLAGS, ...(args.inspect ? [`--inspect=${args.inspect}`] : []), "src/main.ts"],
    cwd: API_DIR,
    env: {
      NODE_ENV: "production",
      CLAIM_COOKIE_SECRET: "bench-claim-cookie-secret-0123456789abcdef",
      DATABASE_URL: databaseUrl,
      DATABASE_POOL_SIZE: POOL,
      MESSAGE_ENCRYPTION_KEYS: "bench:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL,
      MESSAGES_PER_MINUTE: "100000000",
      TEST_KEYS_PER_MINUTE: "1000",
      // Send throughput only: the status check and the sweeps run in a worker.
      JOBS_ENABLED: "false",
      DENO_NO_UPDATE_CHECK: "1",
    },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${baseUrl}/readyz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error("the server did not become ready within 60 s");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    baseUrl,
    pid: child.pid,
    async stop() {
      child.kill("SIGTERM");
      await child.stderr.cancel();
      await child.status;
    },
  };
}

function luaString(text: string): string {
  return `"${text.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

/** A wrk script: fixed request, or a unique Idempotency-Key per request; prints a JSON summary. */
function wrkScript(scenario: Scenario): string {
  const headers = Object.entries(scenario.headers)
    .map(([name, value]) => `  [${luaString(name)}] = ${luaString(value)},`)
    .join("\n");
  return `
local counter = 0
thread_id = 0
local threads = {}
function setup(thread)
  thread:set("thread_id", #threads + 1)
  table.insert(threads, thread)
end
local headers = {
${headers}
}
local body = ${scenario.body === undefined ? "nil" : luaString(scenario.body)}
local run = ${luaString(String(Date.now()))}
function request()
  ${scenario.uniqueKey ? 'counter = counter + 1\n  headers["Idempotency-Key"] = "bench-" .. run .. "-" .. thread_id .. "-" .. counter' : ""}
  return wrk.format(${luaString(scenario.method)}, ${luaString(scenario.path)}, headers, body)
end
function done(summary, latency, requests)
  io.write(string.format('BENCH_JSON {"requests":%d,"duration_us":%d,"non_2xx":%d,"errors":%d,"avg":%f,"p50":%d,"p90":%d,"p99":%d,"max":%d}\\n',
    summary.requests, summary.duration, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency.mean, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
`;
}

async function runWrk(baseUrl: string, scenario: Scenario, seconds: number): Promise<Result> {
  const script = await Deno.makeTempFile({ suffix: ".lua" });
  await Deno.writeTextFile(script, wrkScript(scenario));
  try {
    const output = await new Deno.Command("wrk", {
      args: [
        "-t",
        "2",
        "-c",
        String(CONNECTIONS),
        "-d",
        `${seconds}s`,
        "--timeout",
        "10s",
        "-s",
        script,
        baseUrl,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(output.stdout);
    const line = text.split("\n").find((candidate) => candidate.startsWith("BENCH_JSON "));
    if (!line)
      throw new Error(`wrk printed no summary:\n${text}\n${new TextDecoder().decode(output.stderr)}`);
    const raw = JSON.parse(line.slice("BENCH_JSON ".length));
    const ms = (us: number) => Math.round(us / 10) / 100;
    return {
      scenario: scenario.name,
      tool: "wrk",
      connections: CONNECTIONS,
      duration_s: seconds,
      requests: raw.requests,
      requests_per_s: Math.round(raw.requests / (raw.duration_us / 1e6)),
      non_2xx: raw.non_2xx,
      errors: raw.errors,
      latency_ms: {
        avg: ms(raw.avg),
        p50: ms(raw.p50),
        p90: ms(raw.p90),
        p99: ms(raw.p99),
        max: ms(raw.max),
      },
    };
  } finally {
    await Deno.remove(script);
  }
}

async function runAutocannon(baseUrl: string, scenario: Scenario, seconds: number): Promise<Result> {
  const require = createRequire(import.meta.url);
  const autocannon = require("autocannon");
  let counter = 0;
  const run = Date.now();
  const result = await autocannon({
    url: `${baseUrl}${scenario.path}`,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [
      {
        method: scenario.method,
        body: scenario.body,
        setupRequest: (request: { headers: Record<string, string> }) => {
          request.headers = { ...scenario.headers };
          if (scenario.uniqueKey) request.headers["Idempotency-Key"] = `bench-${run}-${++counter}`;
          return request;
        },
      },
    ],
  });
  return {
    scenario: scenario.name,
    tool: "autocannon",
    connections: CONNECTIONS,
    duration_s: seconds,
    requests: result.requests.total,
    requests_per_s: Math.round(result.requests.average),
    non_2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    latency_ms: {
      avg: result.latency.average,
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
    },
  };
}

const drive = (baseUrl: string, scenario: Scenario, seconds: number) =>
  TOOL === "wrk" ? runWrk(baseUrl, scenario, seconds) : runAutocannon(baseUrl, scenario, seconds);

const database = await createPostgresTestDatabase();
let server: Awaited<ReturnType<typeof startServer>> | undefined;
try {
  server = await startServer(database.databaseUrl);
  const key = await fetch(`${server.baseUrl}/v1/test-keys`, { method: "POST" });
  if (key.status !== 201) throw new Error(`creating a test key failed: ${key.status} ${await key.text()}`);
  const { api_key: apiKey } = (await key.json()) as { api_key: string };
  const body = JSON.stringify({
    to: "+995555123456",
    template: "verification_code",
    variables: { code: "482913" },
    locale: "en",
  });
  const sendHeaders = { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" };

  const first = await fetch(`${server.baseUrl}/v1/messages`, {
    method: "POST",
    headers: { ...sendHeaders, "Idempotency-Key": "bench-replay" },
    body,
  });
  if (first.status !== 201) throw new Error(`the first send failed: ${first.status} ${await first.text()}`);
  const { id: messageId } = (await first.json()) as { id: string };

  const scenarios: Record<string, Scenario> = {
    send: { name: "send", method: "POST", path: "/v1/messages", headers: sendHeaders, body, uniqueKey: true },
    replay: {
      name: "replay",
      method: "POST",
      path: "/v1/messages",
      headers: { ...sendHeaders, "Idempotency-Key": "bench-replay" },
      body,
    },
    read: {
      name: "read",
      method: "GET",
      path: `/v1/messages/${messageId}`,
      headers: { Authorization: `Bearer ${apiKey}` },
    },
  };

  console.error(
    `bench: ${TOOL}, ${CONNECTIONS} connections, ${DURATION_S} s per scenario, pool ${POOL}, LOG_LEVEL=${LOG_LEVEL}, ${navigator.hardwareConcurrency} CPUs`,
  );
  for (const name of SCENARIOS) {
    const scenario = scenarios[name];
    if (!scenario) throw new Error(`unknown scenario ${name}`);
    await drive(server.baseUrl, scenario, 3); // warm-up (JIT, pool, caches)
    const backends = await backendPids(testPostgresAdminUrl(), database.databaseUrl);
    const before = { api: cpuMs([server.pid]), postgres: cpuMs(backends) };
    const result = await drive(server.baseUrl, scenario, DURATION_S);
    const after = { api: cpuMs([server.pid]), postgres: cpuMs(backends) };
    const per = (ms: number) => Math.round((ms / Math.max(1, result.requests)) * 1000) / 1000;
    result.cpu_ms_per_request = {
      api: per(after.api - before.api),
      postgres: per(after.postgres - before.postgres),
    };
    console.log(JSON.stringify(result));
  }
} finally {
  await server?.stop();
  await database.drop();
}
