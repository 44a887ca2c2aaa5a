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
//   --duration=20       seconds per scenario (after the warm-up)
//   --warmup=3          seconds of load on each server before a scenario's measured run (JIT, pool,
//                       caches; the test sends' answers run prepared after 5 000 executions)
//   --connections=64    concurrent connections; a list (32,256) runs every scenario at each
//   --scenarios=send,replay,read
//   --tool=wrk|autocannon
//   --pool=20           DATABASE_POOL_SIZE of the server
//   --log-level=info    LOG_LEVEL of the server (its output is discarded)
//   --server-output=FILE  append the service's standard output to FILE instead (its log lines, and
//                       what V8 prints for e.g. --v8-flags=…,--trace-gc,--trace-gc-nvp)
//   --inspect=127.0.0.1:9229  start the server with the V8 inspector (for a CPU profile)
//   --baseline          also start bench/raw-baseline.ts (Deno.serve + pg, the least a request can
//                       cost) on the same database, alternate rounds between the two, and report
//                       the service's throughput and p99 as ratios of the baseline's. For send, a
//                       second, minimal baseline runs too (MINIMAL=1: key lookup, one transaction
//                       with two inserts, one commit; no read of the idempotency record first),
//                       and the ratios are given against both
//   --phases            run the service with its internal listener and report, from its metrics,
//                       each step's latency (sms_request_phase_duration_seconds: authenticate and a
//                       send's prepare, write_ahead, submit, record), the event loop's delays and
//                       the most requests seen waiting for a database connection
//   --v8-flags=…        the service's V8 flags instead of scripts/deno.mjs's (an experiment)
//   --env=A=1,B=2       extra environment for the service (an experiment; it overrides the bench's own
//                       settings, LOG_LEVEL and DATABASE_POOL_SIZE included)
//   --compare-env=A=1   with --baseline: a second service with this environment too (e.g.
//                       REQUEST_LOG_ENABLED=false), in the same alternating rounds, reported as
//                       `variant` with its own ratios
//   --compare-root=DIR  with --baseline: a second service from another checkout of this repository
//                       (its apps/api, with its own dependencies installed: e.g. a clone at an
//                       earlier commit), in the same alternating rounds, reported as `variant`
//   --compare-v8-flags=…  with --baseline: a second service with these V8 flags (this checkout's code),
//                       in the same alternating rounds, reported as `variant`
//   --rounds=3          rounds per server and scenario with --baseline (each --duration/rounds s);
//                       each round starts with the next server in turn
//   --months=0          before the run, this many earlier months of message partitions, each with
//                       --month-rows=2000 messages of another project (as a database a few years old
//                       holds them: a read by id that is not bounded by its id's time probes each)
//   --profile           take a V8 CPU profile of the service during each scenario's measured run and
//                       print the functions with the most self time (implies the inspector)
import { createRequire } from "node:module";
import { join } from "node:path";
import { newId } from "@sms/crypto";
import { createDatabase } from "@sms/db";
import { createPostgresTestDatabase, testPostgresAdminUrl } from "@sms/db/testing";
import { createStore, ensureMonth } from "@sms/domain";
import pg from "pg";
import { type Histograms, histogramDelta, quantile, scrapeMetrics } from "./metrics-scrape.ts";
import { profiled } from "./profile.ts";
import {
  answersOk,
  backendPids,
  benchArgs,
  checkpoints,
  cpuByPid,
  cpuSpent,
  freePort,
  median,
  ROOT,
  rssMb,
  type ServerProcess,
  sleep,
  startApi,
  startServerProcess,
  untilDatabaseQuiet,
} from "./support.ts";
import { luaString, runWrk, wrkScript } from "./wrk.ts";

const args = benchArgs();
const DURATION_S = Number(args.duration ?? 20);
const WARMUP_S = Number(args.warmup ?? 3);
const CONNECTION_LEVELS = String(args.connections ?? 64)
  .split(",")
  .map((level) => Number(level));
let CONNECTIONS = CONNECTION_LEVELS[0] ?? 64;
const PHASES = args.phases === "true";
const INTERNAL_TOKEN = "bench-internal-token-0123456789abcdef0123";
const envList = (text: string | undefined): Record<string, string> =>
  Object.fromEntries(
    String(text ?? "")
      .split(",")
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]),
  );
const EXTRA_ENV = envList(args.env);
const COMPARE_ENV = args["compare-env"] ? envList(args["compare-env"]) : null;
const COMPARE_ROOT = args["compare-root"] ?? null;
const SCENARIOS = String(args.scenarios ?? "send,replay,read").split(",");
const POOL = String(args.pool ?? 20);
const LOG_LEVEL = String(args["log-level"] ?? "info");
const BASELINE = args.baseline === "true";
const ROUNDS = Number(args.rounds ?? 3);
/**
 * With --baseline, PostgreSQL checkpoints before every window (`--checkpoint=false`: on its own schedule),
 * so that a checkpoint's writes and sync do not fall in some servers' windows and not others'
 * (bench/log/2026-11-29.md#a-checkpoint-in-some-windows-2026-11-29); `checkpoints_in_windows` counts the ones that did.
 */
const CHECKPOINT_BEFORE_WINDOW = args.checkpoint !== "false";
const PROFILE = args.profile === "true";
if (PROFILE && !args.inspect) args.inspect = `127.0.0.1:${freePort()}`;

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
  /** Resident memory of the process under test at the end of the run. */
  rss_mb?: number;
};

const internalPort = PHASES ? freePort() : 0;
const metricsUrl = `http://127.0.0.1:${internalPort}/metrics`;

function startServer(
  databaseUrl: string,
  variant: { env: Record<string, string>; root: string | null } | null = null,
): Promise<ServerProcess> {
  const withPhases = PHASES && variant === null;
  const variantEnv = variant?.env ?? {};
  // --compare-v8-flags: the second service alone runs with other V8 flags (the first keeps --v8-flags or scripts/deno.mjs's).
  const v8Flags = variant && args["compare-v8-flags"] ? args["compare-v8-flags"] : args["v8-flags"];
  return startApi({
    ...(args["server-output"] ? { output: { file: args["server-output"] } } : {}),
    ...(variant?.root ? { apiDir: join(variant.root, "apps", "api") } : {}),
    denoArgs: [
      ...(args.inspect ? [`--inspect=${args.inspect}`] : []),
      ...(v8Flags ? [`--v8-flags=${v8Flags}`] : []),
    ],
    env: {
      ...(withPhases ? { INTERNAL_PORT: String(internalPort), INTERNAL_API_TOKEN: INTERNAL_TOKEN } : {}),
      DATABASE_URL: databaseUrl,
      DATABASE_POOL_SIZE: POOL,
      LOG_LEVEL,
      MESSAGES_PER_MINUTE: "100000000",
      TEST_KEYS_PER_MINUTE: "1000",
      // Every wrk connection comes from 127.0.0.1: the default 128 per address would turn half of 256
      // connections away (503 and resets counted as non-2xx and socket errors), as a proxy in front would
      // without its own raise (docs/operations.md).
      MAX_CONNECTIONS_PER_PEER: "4096",
      // Send throughput only: the status check and the sweeps run in a worker.
      JOBS_ENABLED: "false",
      // Last, so that an experiment's environment overrides the settings above (e.g. LOG_LEVEL=warn).
      ...EXTRA_ENV,
      ...variantEnv,
    },
  });
}

/** bench/raw-baseline.ts on a free port, against the same database. */
async function startBaseline(databaseUrl: string, minimal = false): Promise<ServerProcess> {
  const port = freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const server = await startServerProcess({
    args: [join(ROOT, "bench", "raw-baseline.ts"), String(port), databaseUrl],
    cwd: ROOT,
    env: { POOL, DENO_NO_UPDATE_CHECK: "1", ...(minimal ? { MINIMAL: "1" } : {}) },
    // Any answer will do: the baseline has no readiness route.
    ready: () => answersOk(`${baseUrl}/`).then(() => true),
    what: "the baseline",
  });
  return { baseUrl, ...server };
}

/** A wrk script: fixed request, or a unique Idempotency-Key per request; prints a JSON summary. */
function scenarioScript(scenario: Scenario): string {
  const headers = Object.entries(scenario.headers)
    .map(([name, value]) => `  [${luaString(name)}] = ${luaString(value)},`)
    .join("\n");
  return wrkScript(`local headers = {
${headers}
}
local body = ${scenario.body === undefined ? "nil" : luaString(scenario.body)}
local run = ${luaString(String(Date.now()))}
function request()
  ${scenario.uniqueKey ? 'counter = counter + 1\n  headers["Idempotency-Key"] = "bench-" .. run .. "-" .. thread_id .. "-" .. counter' : ""}
  return wrk.format(${luaString(scenario.method)}, ${luaString(scenario.path)}, headers, body)
end`);
}

async function runWrkScenario(baseUrl: string, scenario: Scenario, seconds: number): Promise<Result> {
  const figures = await runWrk({
    baseUrl,
    script: scenarioScript(scenario),
    threads: 2,
    connections: CONNECTIONS,
    seconds,
    timeoutSeconds: 10,
  });
  return { scenario: scenario.name, tool: "wrk", connections: CONNECTIONS, duration_s: seconds, ...figures };
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

/** `months` months before this one, each a partition of messages with `rows` messages (and their events) in it. */
async function earlierMonths(databaseUrl: string, months: number, rows: number): Promise<void> {
  const db = await createDatabase({
    databaseUrl,
    poolSize: 2,
    logger: { info() {}, warn() {}, error() {} },
    queryTimeoutMs: 600_000,
  });
  try {
    await db.migrate();
    const store = createStore(db);
    const projectId = newId("prj");
    await db.query("INSERT INTO projects (id, created_at, updated_at) VALUES ($1, now(), now())", [
      projectId,
    ]);
    const now = new Date();
    for (let back = 1; back <= months; back++) {
      const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1));
      await ensureMonth({ store }, month);
      await db.query(
        `WITH made AS (
           INSERT INTO messages (id, project_id, mode, recipient_masked, template, locale, sender, segments,
                                 encoding, provider, status, created_at, updated_at)
           SELECT 'msg_' || $3 || '_' || lpad(g::text, 8, '0'), $1, 'test', '+9955••••••12', 'verification_code',
                  'en', 'SMSGE', 1, 'gsm7', 'simulator', 'delivered', t, t
           FROM generate_series(1, $2::int) g,
                LATERAL (SELECT CAST($4 AS timestamptz) + (g % 3888) * interval '10 minutes' AS t) at
           RETURNING id, created_at)
         INSERT INTO message_events (message_id, status, created_at, message_created_at)
         SELECT id, 'delivered', created_at, created_at FROM made`,
        [projectId, rows, month.toISOString().slice(0, 7).replace("-", ""), month],
      );
    }
    await db.query("ANALYZE messages");
    await db.query("ANALYZE message_events");
  } finally {
    await db.close();
  }
}

const drive = (baseUrl: string, scenario: Scenario, seconds: number) =>
  TOOL === "wrk" ? runWrkScenario(baseUrl, scenario, seconds) : runAutocannon(baseUrl, scenario, seconds);

const database = await createPostgresTestDatabase();
const MONTHS = Number(args.months ?? 0);
const MONTH_ROWS = Number(args["month-rows"] ?? 2000);
if (MONTHS > 0) await earlierMonths(database.databaseUrl, MONTHS, MONTH_ROWS);
let server: ServerProcess | undefined;
let baseline: ServerProcess | undefined;
let minimal: ServerProcess | undefined;
let variant: ServerProcess | undefined;
try {
  server = await startServer(database.databaseUrl);
  if (BASELINE && (COMPARE_ENV || COMPARE_ROOT || args["compare-v8-flags"])) {
    variant = await startServer(database.databaseUrl, { env: COMPARE_ENV ?? {}, root: COMPARE_ROOT });
  }
  if (BASELINE) baseline = await startBaseline(database.databaseUrl);
  if (BASELINE && SCENARIOS.includes("send")) minimal = await startBaseline(database.databaseUrl, true);
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
    `bench: ${TOOL}, ${CONNECTION_LEVELS.join(",")} connections, ${DURATION_S} s per scenario, pool ${POOL}, LOG_LEVEL=${LOG_LEVEL}, ${navigator.hardwareConcurrency} CPUs`,
  );
  /** The service's metrics over `work`: each phase's histogram, and the most requests seen waiting for a connection. */
  const observed = async <T>(
    work: () => Promise<T>,
  ): Promise<{ result: T; phases: Histograms; poolWaitingMax: number }> => {
    if (!PHASES) return { result: await work(), phases: new Map(), poolWaitingMax: 0 };
    const before = await scrapeMetrics(metricsUrl, INTERNAL_TOKEN);
    let poolWaitingMax = 0;
    let running = true;
    const sampler = (async () => {
      while (running) {
        const now = await scrapeMetrics(metricsUrl, INTERNAL_TOKEN).catch(() => null);
        poolWaitingMax = Math.max(
          poolWaitingMax,
          now?.gauges.get('sms_db_pool_connections{state="waiting"}') ?? 0,
        );
        await sleep(250);
      }
    })();
    // What the service's PostgreSQL backends wait on (pg_stat_activity, every 100 ms): lock waits
    // on one row show as Lock:transactionid / Lock:tuple.
    const admin = new pg.Client({ connectionString: testPostgresAdminUrl() });
    await admin.connect();
    const waits = new Map<string, number>();
    const waitSampler = (async () => {
      while (running) {
        const { rows } = await admin.query(
          "SELECT coalesce(wait_event_type || ':' || wait_event, 'cpu') AS wait, count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND state = 'active' AND pid <> pg_backend_pid() GROUP BY 1",
          [new URL(database.databaseUrl).pathname.slice(1)],
        );
        for (const row of rows as Array<{ wait: string; n: number }>)
          waits.set(row.wait, (waits.get(row.wait) ?? 0) + row.n);
        waits.set("(samples)", (waits.get("(samples)") ?? 0) + 1);
        await sleep(100);
      }
    })();
    const result = await work();
    running = false;
    await sampler;
    await waitSampler;
    await admin.end();
    const after = await scrapeMetrics(metricsUrl, INTERNAL_TOKEN);
    const phases = histogramDelta(before.histograms, after.histograms);
    console.error(
      `db waits (active backends summed over samples): ${JSON.stringify(Object.fromEntries(waits))}`,
    );
    return { result, phases, poolWaitingMax };
  };
  /** p50/p99 (ms) of each phase over all of a scenario's service rounds. */
  const phaseSummary = (all: Histograms[]) => {
    const merged: Histograms = new Map();
    for (const histograms of all) {
      for (const [name, buckets] of histograms) {
        const into = merged.get(name) ?? new Map<number, number>();
        for (const [le, count] of buckets) into.set(le, (into.get(le) ?? 0) + count);
        merged.set(name, into);
      }
    }
    return Object.fromEntries(
      [...merged.entries()]
        .filter(([name]) => name.startsWith("sms_request_phase") || name.startsWith("sms_event_loop"))
        .map(([name, buckets]) => [
          name
            .replace(/^sms_request_phase_duration_seconds\{phase="([^"]+)"(?:,mode="[^"]+")?\}$/, "$1")
            .replace(/^sms_event_loop_delay_seconds$/, "event_loop_delay"),
          {
            count: buckets.get(Number.POSITIVE_INFINITY) ?? 0,
            p50_ms: Math.round(quantile(buckets, 0.5) * 1e4) / 10,
            p99_ms: Math.round(quantile(buckets, 0.99) * 1e4) / 10,
            p999_ms: Math.round(quantile(buckets, 0.999) * 1e4) / 10,
          },
        ]),
    );
  };
  /** One measured run against `target`, with the CPU time its process and PostgreSQL spent per request. */
  const measure = async (target: { baseUrl: string; pid: number }, scenario: Scenario, seconds: number) => {
    const backends = () => backendPids(testPostgresAdminUrl(), database.databaseUrl);
    const before = { api: cpuByPid([target.pid]), postgres: cpuByPid(await backends()) };
    const result = await drive(target.baseUrl, scenario, seconds);
    const after = { api: cpuByPid([target.pid]), postgres: cpuByPid(await backends()) };
    const per = (ms: number) => Math.round((ms / Math.max(1, result.requests)) * 1000) / 1000;
    result.cpu_ms_per_request = {
      api: per(cpuSpent(before.api, after.api)),
      postgres: per(cpuSpent(before.postgres, after.postgres)),
    };
    result.rss_mb = rssMb(target.pid);
    return result;
  };

  for (const level of CONNECTION_LEVELS)
    for (const name of SCENARIOS) {
      CONNECTIONS = level;
      const scenario = scenarios[name];
      if (!scenario) throw new Error(`unknown scenario ${name}`);
      await drive(server.baseUrl, scenario, WARMUP_S); // warm-up (JIT, pool, caches, prepared statements)
      if (!baseline) {
        const run = () => measure(server as { baseUrl: string; pid: number }, scenario, DURATION_S);
        const seen = await observed(() => (PROFILE ? profiled(args.inspect ?? "", run) : run()));
        console.log(
          JSON.stringify({
            ...seen.result,
            ...(PHASES ? { phases: phaseSummary([seen.phases]), pool_waiting_max: seen.poolWaitingMax } : {}),
          }),
        );
        continue;
      }
      await drive(baseline.baseUrl, scenario, WARMUP_S);
      const minimalHere = name === "send" ? minimal : undefined;
      if (minimalHere) await drive(minimalHere.baseUrl, scenario, WARMUP_S);
      if (variant) await drive(variant.baseUrl, scenario, WARMUP_S);
      // Alternate short rounds, so all see the same machine load.
      const seconds = Math.max(2, Math.round(DURATION_S / ROUNDS));
      const rounds: { service: Result[]; baseline: Result[]; minimal: Result[]; variant: Result[] } = {
        service: [],
        baseline: [],
        minimal: [],
        variant: [],
      };
      const settledMs: number[] = [];
      const phaseRounds: Histograms[] = [];
      let poolWaitingMax = 0;
      // Each round starts with the next server (service, baseline, minimal, variant, rotated): a server
      // measured right after another one's load finds that load's aftermath (its last log writes, the
      // autovacuum its rows set off): in a fixed order the second service came out 5-10 % ahead of the
      // first whichever settings each had (bench/log/2026-11-27.md#rounds-in-turn-2026-11-27-late). With --rounds a multiple of
      // the number of servers, each takes every place equally often.
      const others: Array<[ServerProcess, Result[]]> = [[baseline, rounds.baseline]];
      if (minimalHere) others.push([minimalHere, rounds.minimal]);
      if (variant) others.push([variant, rounds.variant]);
      const inRound: Array<() => Promise<void>> = [
        async () => {
          const seen = await observed(() => measure(server as ServerProcess, scenario, seconds));
          rounds.service.push(seen.result);
          phaseRounds.push(seen.phases);
          poolWaitingMax = Math.max(poolWaitingMax, seen.poolWaitingMax);
        },
        ...others.map(([target, into]) => async () => {
          into.push(await measure(target, scenario, seconds));
        }),
      ];
      // Every other pass of rounds runs the servers in the opposite order, so each one follows each other
      // one (whose aftermath it may meet) as often as the others do, not always the same one; and before
      // every window the database is let go quiet (bench/log/2026-11-28.md#who-follows-whom-2026-11-28).
      const count = inRound.length;
      let checkpointsInWindows = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const backwards = Math.floor(round / count) % 2 === 1;
        for (let i = 0; i < count; i++) {
          settledMs.push(await untilDatabaseQuiet(testPostgresAdminUrl(), database.databaseUrl));
          const before = await checkpoints(testPostgresAdminUrl(), { force: CHECKPOINT_BEFORE_WINDOW });
          await inRound[(((backwards ? round - i : round + i) % count) + count) % count]!();
          checkpointsInWindows += (await checkpoints(testPostgresAdminUrl())) - before;
        }
      }
      const summary = (results: Result[]) => ({
        requests_per_s: median(results.map((r) => r.requests_per_s)),
        p50_ms: median(results.map((r) => r.latency_ms.p50)),
        p99_ms: median(results.map((r) => r.latency_ms.p99)),
        non_2xx: results.reduce((sum, r) => sum + r.non_2xx, 0),
        errors: results.reduce((sum, r) => sum + r.errors, 0),
        cpu_ms_per_request: {
          api: median(results.map((r) => r.cpu_ms_per_request?.api ?? 0)),
          postgres: median(results.map((r) => r.cpu_ms_per_request?.postgres ?? 0)),
        },
        rss_mb_per_round: results.map((r) => r.rss_mb ?? 0),
      });
      const service = summary(rounds.service);
      const raw = summary(rounds.baseline);
      const least = rounds.minimal.length ? summary(rounds.minimal) : null;
      const other = rounds.variant.length ? summary(rounds.variant) : null;
      const ratio = (a: number, b: number) => Math.round((a / Math.max(1e-9, b)) * 100) / 100;
      console.log(
        JSON.stringify({
          scenario: name,
          connections: CONNECTIONS,
          throughput_ratio: ratio(service.requests_per_s, raw.requests_per_s),
          p99_ratio: ratio(service.p99_ms, raw.p99_ms),
          ...(least
            ? {
                minimal_throughput_ratio: ratio(service.requests_per_s, least.requests_per_s),
                minimal_p99_ratio: ratio(service.p99_ms, least.p99_ms),
              }
            : {}),
          rounds: ROUNDS,
          seconds_per_round: seconds,
          service,
          baseline: raw,
          ...(least ? { minimal_baseline: least } : {}),
          ...(other
            ? {
                variant: {
                  ...(COMPARE_ENV ? { env: COMPARE_ENV } : {}),
                  ...(COMPARE_ROOT ? { root: COMPARE_ROOT } : {}),
                  throughput_ratio: ratio(other.requests_per_s, raw.requests_per_s),
                  p99_ratio: ratio(other.p99_ms, raw.p99_ms),
                  ...other,
                },
              }
            : {}),
          ...(PHASES ? { phases: phaseSummary(phaseRounds), pool_waiting_max: poolWaitingMax } : {}),
          per_round_rps: {
            service: rounds.service.map((r) => r.requests_per_s),
            baseline: rounds.baseline.map((r) => r.requests_per_s),
            ...(least ? { minimal_baseline: rounds.minimal.map((r) => r.requests_per_s) } : {}),
            ...(other ? { variant: rounds.variant.map((r) => r.requests_per_s) } : {}),
          },
          settled_ms_max: Math.max(0, ...settledMs),
          checkpoint_before_window: CHECKPOINT_BEFORE_WINDOW,
          checkpoints_in_windows: checkpointsInWindows,
          per_round_p99_ms: {
            service: rounds.service.map((r) => r.latency_ms.p99),
            baseline: rounds.baseline.map((r) => r.latency_ms.p99),
            ...(least ? { minimal_baseline: rounds.minimal.map((r) => r.latency_ms.p99) } : {}),
            ...(other ? { variant: rounds.variant.map((r) => r.latency_ms.p99) } : {}),
          },
        }),
      );
    }
} finally {
  await server?.stop();
  await baseline?.stop();
  await minimal?.stop();
  await variant?.stop();
  await database.drop();
}
