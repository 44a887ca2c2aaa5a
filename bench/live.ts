// The live path under a slow provider (issue 26): live sends waiting on a
// fake uBill that answers every send in 200 ms and then in 2 s, and the
// status check waiting on one that answers every delivery report in 2 s,
// each while test sends run beside them. On demand only, never in CI:
//
//   npm run bench -- live [--duration=20] [--live-connections=256] [--test-connections=32] [--test-pace-ms=0]
//                         [--delays=200,2000] [--report-delay-ms=2000] [--backlog=2000] [--pool=10]
//                         [--ubill-in-flight=32] [--ubill-queue-timeout-ms=10000]
//                         [--scenarios=alone,live,status] [--rounds=2] [--profile] [--warmup=15]
//                         [--v8-flags=…] [--server-output=FILE] [--control=true]
//
// One fresh PostgreSQL database (TEST_POSTGRES_URL), one fake uBill in this
// process, the service as its own Deno process (main.ts, production mode,
// the default pool) with its internal listener, a test key (POST
// /v1/test-keys) and a live key with paid credits (written in SQL). Load
// comes from wrk: test sends to one number, live sends each to a new number
// (so no per-recipient counter row is shared), a unique Idempotency-Key per
// request. Scenarios, each printed as one JSON line, ratios first:
//
//   test_alone       test sends alone (--test-connections), after the warm-up: the status check's
//                    reference
//   live_<delay>ms   --live-connections live sends against uBill answering in <delay> ms, with
//                    the test sends beside them once the live ones are all waiting. Live throughput
//                    is the sends uBill received per second in the measured windows, against
//                    min(connections, UBILL_MAX_IN_FLIGHT) / delay (the service's places at uBill,
//                    --ubill-in-flight, default the service's 32). The test sends' p99 is compared
//                    with their p99 alone in the same rounds: --rounds=2 pairs of windows (alone and
//                    beside the live sends), each pair in the other order from the one before, each
//                    window --duration / --rounds s, or 15 delays if longer (30 s at 2 s: the live
//                    connections move in waves one delay apart). cpu_ms_per_send: the service's and its
//                    PostgreSQL backends' CPU time in the live windows per send, live and test
//   --control=true   a third window in each round: the same live work against a uBill that answers at
//                    once (one connection per place, each pausing the delay between its sends), so that
//                    what the slow provider costs the test sends (test_p99_vs_instant) is told apart from
//                    what the live sends' own work costs them (instant.test_p99_ratio)
//   status_check     the service restarted with JOBS_ENABLED=true (the status check in the same
//                    process as the sends, its default), --backlog due live messages seeded, uBill
//                    answering reports in --report-delay-ms; test sends beside it. Throughput is the
//                    reports asked per second against STATUS_CHECK_CONCURRENCY / delay. Its own
//                    test_alone_jobs run (same process, nothing due yet) is the reference
//
// Every run samples the service's metrics every 250 ms: the most requests seen
// waiting for a database connection (sms_db_pool_connections{state="waiting"}),
// the most pool connections in use, and the most resident memory.
import { apiKeyPrefix, newApiKey, newId, parseKeyring, sha256Hex } from "@sms/crypto";
import { createPostgresTestDatabase, testPostgresAdminUrl } from "@sms/db/testing";
import { startFakeUbill } from "@sms/provider-ubill/testing";
import pg from "pg";
import { type Histograms, histogramDelta, quantile, scrapeMetrics } from "./metrics-scrape.ts";
import { profiled } from "./profile.ts";
import {
  API_ENV,
  backendPids,
  benchArgs,
  checkpoints,
  cpuByPid,
  cpuSpent,
  freePort,
  machineCpu,
  median,
  type ServerProcess,
  sleep,
  startApi,
  waitUntil,
} from "./support.ts";
import { luaString, runWrk, type WrkFigures, wrkScript } from "./wrk.ts";

const args = benchArgs();
const DURATION_S = Number(args.duration ?? 20);
/**
 * Seconds of test sends before each reference run of test sends alone (after the start, and after the
 * status check's restart): the JIT, the pool, and the test sends' answers, which run prepared after 5 000
 * executions (about 10 s at 500 a second). A shorter warm-up leaves the reference slow and the ratios low.
 */
const WARMUP_S = Number(args.warmup ?? 15);
const LIVE_CONNECTIONS = Number(args["live-connections"] ?? 256);
const TEST_CONNECTIONS = Number(args["test-connections"] ?? 32);
/**
 * Each test connection waits this long between its requests (wrk's delay()): 0 saturates the machine
 * with test sends (every extra CPU cycle the live sends take shows in their p99); a pace offers a
 * moderate load, the integrator's login page beside a slow provider.
 */
const TEST_PACE_MS = Number(args["test-pace-ms"] ?? 0);
const DELAYS_MS = String(args.delays ?? "200,2000")
  .split(",")
  .map((delay) => Number(delay));
/**
 * Pairs of windows per delay, test sends alone and beside the live sends, each pair in the other order
 * from the one before; each window --duration / --rounds seconds (or longer: windowLength).
 */
const ROUNDS = Math.max(1, Math.round(Number(args.rounds ?? 2)));
const WINDOW_S = DURATION_S / ROUNDS;
/**
 * A live window (and the alone window paired with it) lasts at least this many of uBill's delays. With uBill
 * answering in exactly the delay, the live connections move in waves one delay apart, and the window counts
 * whole waves: at 2 s a 10 s window held four or five, so one wave more or less moved the count by about 20 %
 * (bench/log/2026-11-28.md#the-write-ahead-in-one-statement-2026-11-28-morning). With 15, by at most about 7 %.
 */
const MIN_WAVES_PER_WINDOW = 15;
/** One window's seconds at uBill's `delayMs`: --duration / --rounds, or MIN_WAVES_PER_WINDOW delays if longer. */
const windowLength = (delayMs: number) => Math.max(WINDOW_S, (MIN_WAVES_PER_WINDOW * delayMs) / 1000);
const REPORT_DELAY_MS = Number(args["report-delay-ms"] ?? 2000);
const BACKLOG = Number(args.backlog ?? 2000);
const POOL = String(args.pool ?? 10);
const SCENARIOS = String(args.scenarios ?? "alone,live,status").split(",");
/** Live sends spread over this many projects (one key each), round robin; 1: one integrator's burst. */
const LIVE_PROJECTS = Number(args["live-projects"] ?? 1);
/** A V8 CPU profile of the service in each scenario's window (bench/profile.ts), printed to stderr. */
const PROFILE = args.profile === "true";
const INSPECTOR = PROFILE ? `127.0.0.1:${freePort()}` : "";
/**
 * The service's V8 flags instead of scripts/deno.mjs's (an experiment; `DENO_V8_FLAGS` cannot do it: the
 * `--v8-flags` every process here runs with overrides that variable).
 */
const V8_FLAGS = args["v8-flags"] ? String(args["v8-flags"]) : null;
/** Append the service's standard output (its log lines, and what e.g. `--trace-gc` prints) to this file. */
const SERVER_OUTPUT = args["server-output"] ? String(args["server-output"]) : null;
/** The service's defaults (apps/api/src/config/), stated so the ideal below is computed from them. */
const STATUS_CHECK_CONCURRENCY = 16;
const STATUS_CHECK_BATCH_SIZE = 200;
/** uBill's places for live sends (UBILL_MAX_IN_FLIGHT): the service's default unless --ubill-in-flight. */
const UBILL_MAX_IN_FLIGHT = Number(args["ubill-in-flight"] ?? 32);
/** How long a live send waits for a place (UBILL_QUEUE_TIMEOUT_MS): the service's default unless given. */
const UBILL_QUEUE_TIMEOUT_MS = Number(args["ubill-queue-timeout-ms"] ?? 10_000);
/** Time for every live connection to have a send waiting on uBill before the window opens. */
const RAMP_S = 3;
/**
 * Before every window, PostgreSQL writes its dirty pages (CHECKPOINT), so that no window starts halfway to
 * the checkpoint its WAL calls for. Without it a checkpoint fell in some windows and not in others, at
 * random, and its last sync stalled every commit of that window
 * (bench/log/2026-11-29.md#a-checkpoint-in-some-windows-2026-11-29). `--checkpoint=false` leaves PostgreSQL to
 * its own schedule. Each window's count is reported.
 */
const CHECKPOINT_BEFORE_WINDOW = args.checkpoint !== "false";
/**
 * A third window in every round: the same live work without the slow provider. As many live connections as
 * uBill has places, each pausing uBill's delay between its sends, against a uBill that answers at once: about
 * the live sends a second the places allow, with nothing waiting on uBill and no send queued for a place. The
 * test sends' p99 beside the slow uBill against theirs beside this (`test_p99_vs_instant`) is what the slow
 * provider costs them; this against alone (`instant.test_p99_ratio`) is what the live sends' own work costs.
 */
const CONTROL = args.control === "true";
/**
 * --control's live connections (default: one per place). Each send also takes the service's own time, so one
 * per place makes fewer sends a second than the places do against the slow uBill; a few more match the rate.
 */
const INSTANT_CONNECTIONS = Number(
  args["instant-connections"] ?? Math.min(LIVE_CONNECTIONS, UBILL_MAX_IN_FLIGHT),
);
/**
 * uBill's answers to sends vary by this share of the delay either way (0 to 1; each drawn evenly, the mean
 * still the delay). 0: every answer after exactly the delay, so that the places, all taken at once, stay in
 * step and answer in waves.
 */
const UBILL_SPREAD = Number(args["ubill-spread"] ?? 0);

const UBILL_KEY = "bench-ubill-secret-key-live";
const LIVE_CREDITS = 100_000_000;
const INTERNAL_TOKEN = "bench-internal-token-0123456789abcdef0123";
const FIRST_SMS_ID = 10_000_001;

const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;
const ratio = (a: number, b: number) => round(a / Math.max(1e-9, b));

/** /proc/loadavg's three figures (read with cat: Deno guards /proc). */
function loadAverage(): string {
  const output = new Deno.Command("cat", { args: ["/proc/loadavg"], stderr: "null" }).outputSync();
  return new TextDecoder().decode(output.stdout).split(" ").slice(0, 3).join(" ");
}

function commit(): string {
  const output = new Deno.Command("git", {
    args: ["rev-parse", "--short", "HEAD"],
    stderr: "null",
  }).outputSync();
  return new TextDecoder().decode(output.stdout).trim();
}

type Load = {
  name: string;
  connections: number;
  threads: number;
  /** Used in turn, request by request. */
  apiKeys: string[];
  /** Each request to a new number +9955<prefix><thread><6 digits>, or always this one. */
  recipient: { fresh: string } | { fixed: string };
  /** Milliseconds each connection waits between its requests (0: none). */
  paceMs?: number;
};

/** A wrk script: a unique Idempotency-Key per request, the body built per request; prints a JSON summary. */
function loadScript(load: Load): string {
  const to =
    "fresh" in load.recipient
      ? `"+9955" .. ${luaString(load.recipient.fresh)} .. thread_id .. string.format("%06d", counter % 1000000)`
      : luaString(load.recipient.fixed);
  return wrkScript(`local keys = { ${load.apiKeys.map((key) => luaString(`Bearer ${key}`)).join(", ")} }
local headers = {
  ["Content-Type"] = "application/json",
}
local run = ${luaString(`${load.name}-${Date.now()}`)}
function request()
  counter = counter + 1
  headers["Authorization"] = keys[(counter % #keys) + 1]
  headers["Idempotency-Key"] = run .. "-" .. thread_id .. "-" .. counter
  local body = '{"to":"' .. ${to} .. '","template":"verification_code","variables":{"code":"482913"},"locale":"en"}'
  return wrk.format("POST", "/v1/messages", headers, body)
end${
    load.paceMs
      ? `
function delay()
  return ${Math.round(load.paceMs)}
end`
      : ""
  }`);
}

function runLoad(baseUrl: string, load: Load, seconds: number): Promise<WrkFigures> {
  return runWrk({
    baseUrl,
    script: loadScript(load),
    threads: load.threads,
    connections: load.connections,
    seconds,
    timeoutSeconds: 15,
  });
}

// ---------------------------------------------------------------- the setup

console.error(`bench live: load average at start ${loadAverage()}, ${navigator.hardwareConcurrency} CPUs`);
const loadAtStart = loadAverage();
const database = await createPostgresTestDatabase();
const fake = await startFakeUbill({ apiKey: UBILL_KEY, balance: 1_000_000_000, firstSmsId: FIRST_SMS_ID });
const direct = new pg.Pool({ connectionString: database.databaseUrl, max: 2 });
// Dropping the database at the end ends the pool's sessions.
direct.on("error", () => undefined);
const internalPort = freePort();
const metricsUrl = `http://127.0.0.1:${internalPort}/metrics`;

function startService(jobs: boolean): Promise<ServerProcess> {
  return startApi({
    denoArgs: [
      ...(PROFILE ? [`--inspect=${INSPECTOR}`] : []),
      ...(V8_FLAGS ? [`--v8-flags=${V8_FLAGS}`] : []),
    ],
    ...(SERVER_OUTPUT ? { output: { file: SERVER_OUTPUT } } : {}),
    env: {
      DATABASE_URL: database.databaseUrl,
      DATABASE_POOL_SIZE: POOL,
      INTERNAL_PORT: String(internalPort),
      INTERNAL_API_TOKEN: INTERNAL_TOKEN,
      LOG_LEVEL: "info",
      // Every client here is 127.0.0.1 (as every connection is the proxy's behind one): the
      // default 128 per peer would refuse most of the live connections.
      MAX_CONNECTIONS_PER_PEER: "4096",
      MAX_CONNECTIONS: "4096",
      MESSAGES_PER_MINUTE: "100000000",
      RECIPIENT_MESSAGES_PER_MINUTE: "1000000",
      RECIPIENT_MESSAGES_PER_DAY: "1000000",
      TEST_KEYS_PER_MINUTE: "1000",
      UBILL_BASE_URL: fake.baseUrl,
      UBILL_API_KEY: UBILL_KEY,
      UBILL_DEFAULT_BRAND_ID: "1",
      UBILL_MAX_IN_FLIGHT: String(UBILL_MAX_IN_FLIGHT),
      UBILL_QUEUE_TIMEOUT_MS: String(UBILL_QUEUE_TIMEOUT_MS),
      JOBS_ENABLED: jobs ? "true" : "false",
      SHUTDOWN_TIMEOUT_SECONDS: "5",
      // The seeded backlog is picked up within seconds of being written.
      STATUS_CHECK_INTERVAL_SECONDS: "2",
      STATUS_CHECK_CONCURRENCY: String(STATUS_CHECK_CONCURRENCY),
      STATUS_CHECK_BATCH_SIZE: String(STATUS_CHECK_BATCH_SIZE),
    },
  });
}

// The live keys: claimed projects with paid credits (no free-tier allowance), written directly.
const liveProjects: string[] = [];
const liveKeys: string[] = [];
for (let index = 0; index < LIVE_PROJECTS; index++) {
  const project = newId("prj");
  const key = newApiKey("live");
  await direct.query(
    "INSERT INTO projects (id, claimed_at, credit_balance, has_paid_credits) VALUES ($1, now(), $2, true)",
    [project, LIVE_CREDITS],
  );
  await direct.query(
    "INSERT INTO credit_ledger (id, project_id, kind, amount, note) VALUES ($1, $2, 'grant_paid', $3, 'bench')",
    [newId("cre"), project, LIVE_CREDITS],
  );
  await direct.query(
    "INSERT INTO api_keys (id, project_id, mode, key_hash, prefix) VALUES ($1, $2, 'live', $3, $4)",
    [newId("key"), project, await sha256Hex(key), apiKeyPrefix(key)],
  );
  liveProjects.push(project);
  liveKeys.push(key);
}
const liveProject = liveProjects[0] ?? "";

let server = await startService(false);
const keyResponse = await fetch(`${server.baseUrl}/v1/test-keys`, { method: "POST" });
if (keyResponse.status !== 201)
  throw new Error(`test key: ${keyResponse.status} ${await keyResponse.text()}`);
const testKey = ((await keyResponse.json()) as { api_key: string }).api_key;

const testLoad: Load = {
  name: "test",
  connections: TEST_CONNECTIONS,
  threads: 1,
  apiKeys: [testKey],
  recipient: { fixed: "+995555123456" },
  paceMs: TEST_PACE_MS,
};
const liveLoad = (prefix: string): Load => ({
  name: `live${prefix}`,
  connections: LIVE_CONNECTIONS,
  threads: 2,
  apiKeys: liveKeys,
  recipient: { fresh: prefix },
});
/** --control's live sends: one connection per place, each pausing `delayMs` between its sends. */
const instantLiveLoad = (prefix: string, delayMs: number): Load => ({
  ...liveLoad(prefix),
  name: `instant${prefix}`,
  connections: INSTANT_CONNECTIONS,
  paceMs: delayMs,
});

// ---------------------------------------------------------------- observing the service

type Observed = {
  pool_waiting_max: number;
  /** Live sends queued for one of their database slots (sms_live_send_slots), when the service has them. */
  live_slots_waiting_max: number;
  /** Live sends queued for a place at uBill (sms_ubill_places), and the most places in use. */
  ubill_places_waiting_max: number;
  ubill_places_in_use_max: number;
  pool_in_use_max: number;
  pool_size: number;
  rss_mb_max: number;
  histograms: Histograms;
  counters: Map<string, number>;
  /** What the service's PostgreSQL backends were doing, summed over samples every 100 ms. */
  backends: Record<string, number>;
  /** The share of the machine's CPU time that was not idle (steal included), 0 to 1. */
  machine_busy: number;
  /** Cores this process used (the fake uBill, the samplers): load the service's own figures leave out. */
  bench_cores: number;
  /** Checkpoints PostgreSQL started in the window (the whole server's: pg_stat_bgwriter). */
  checkpoints: number;
};

/** The most each of these gauges showed in a window. */
const GAUGE_MAXIMA = {
  pool_waiting_max: 'sms_db_pool_connections{state="waiting"}',
  live_slots_waiting_max: 'sms_live_send_slots{state="waiting"}',
  ubill_places_waiting_max: 'sms_ubill_places{state="waiting"}',
  ubill_places_in_use_max: 'sms_ubill_places{state="in_use"}',
} as const;
type GaugeMaximum = keyof typeof GAUGE_MAXIMA;

/** Nothing seen yet. */
function noneObserved(): Observed {
  return {
    pool_waiting_max: 0,
    live_slots_waiting_max: 0,
    ubill_places_waiting_max: 0,
    ubill_places_in_use_max: 0,
    pool_in_use_max: 0,
    pool_size: 0,
    rss_mb_max: 0,
    histograms: new Map(),
    counters: new Map(),
    backends: {},
    machine_busy: 0,
    bench_cores: 0,
    checkpoints: 0,
  };
}

/** Checkpoints the PostgreSQL server has started so far. */
const checkpointsSoFar = () => checkpoints(testPostgresAdminUrl());

/** A checkpoint now, before a window (CHECKPOINT_BEFORE_WINDOW); nothing with --checkpoint=false. */
async function checkpointFirst(): Promise<void> {
  if (CHECKPOINT_BEFORE_WINDOW) await checkpoints(testPostgresAdminUrl(), { force: true });
}

/** The service's metrics every 250 ms while `work` runs. */
async function observed<T>(work: () => Promise<T>): Promise<{ result: T; seen: Observed }> {
  const before = await scrapeMetrics(metricsUrl, INTERNAL_TOKEN);
  const checkpointsBefore = await checkpointsSoFar();
  const machineBefore = machineCpu();
  const benchBefore = cpuByPid([Deno.pid]);
  const startedAt = performance.now();
  const seen = noneObserved();
  let running = true;
  // Lock waits on one row show as Lock:transactionid / Lock:tuple; "idle in transaction" is a
  // transaction holding its locks while the service prepares its next statement.
  const waits = new Map<string, number>();
  const waitSampler = (async () => {
    let samples = 0;
    while (running) {
      const { rows } = await direct.query<{ what: string; n: number }>(
        `SELECT CASE WHEN state = 'active' THEN coalesce(wait_event_type || ':' || wait_event, 'running')
                     ELSE state END AS what, count(*)::int AS n
         FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
         GROUP BY 1`,
      );
      for (const row of rows) waits.set(row.what, (waits.get(row.what) ?? 0) + row.n);
      samples++;
      await sleep(100);
    }
    for (const [what, n] of waits) seen.backends[what] = round(n / Math.max(1, samples), 1);
  })();
  const sampler = (async () => {
    while (running) {
      const now = await scrapeMetrics(metricsUrl, INTERNAL_TOKEN).catch(() => null);
      if (now) {
        const gauge = (name: string) => now.gauges.get(name) ?? 0;
        const total = gauge('sms_db_pool_connections{state="total"}');
        for (const [field, name] of Object.entries(GAUGE_MAXIMA) as Array<[GaugeMaximum, string]>)
          seen[field] = Math.max(seen[field], gauge(name));
        seen.pool_in_use_max = Math.max(
          seen.pool_in_use_max,
          total - gauge('sms_db_pool_connections{state="idle"}'),
        );
        seen.pool_size = Math.max(seen.pool_size, total);
        seen.rss_mb_max = Math.max(
          seen.rss_mb_max,
          Math.round(gauge("process_resident_memory_bytes") / 2 ** 20),
        );
      }
      await sleep(250);
    }
  })();
  const result = await work();
  const machineAfter = machineCpu();
  seen.machine_busy = round(
    (machineAfter.busy - machineBefore.busy) / Math.max(1, machineAfter.total - machineBefore.total),
  );
  seen.bench_cores = round(
    cpuSpent(benchBefore, cpuByPid([Deno.pid])) / Math.max(1, performance.now() - startedAt),
  );
  running = false;
  await sampler;
  await waitSampler;
  const after = await scrapeMetrics(metricsUrl, INTERNAL_TOKEN);
  seen.checkpoints = (await checkpointsSoFar()) - checkpointsBefore;
  seen.histograms = histogramDelta(before.histograms, after.histograms);
  for (const [name, value] of after.gauges) seen.counters.set(name, value - (before.gauges.get(name) ?? 0));
  return { result, seen };
}

/**
 * Several windows' observations as one: the largest of each maximum, the histograms and counters
 * summed, the backends' averages averaged (the windows are of one length).
 */
function mergeObserved(windows: Observed[]): Observed {
  const merged = noneObserved();
  for (const seen of windows) {
    merged.machine_busy += seen.machine_busy / windows.length;
    merged.bench_cores += seen.bench_cores / windows.length;
    merged.checkpoints += seen.checkpoints;
    for (const field of Object.keys(GAUGE_MAXIMA) as GaugeMaximum[])
      merged[field] = Math.max(merged[field], seen[field]);
    merged.pool_in_use_max = Math.max(merged.pool_in_use_max, seen.pool_in_use_max);
    merged.pool_size = Math.max(merged.pool_size, seen.pool_size);
    merged.rss_mb_max = Math.max(merged.rss_mb_max, seen.rss_mb_max);
    for (const [name, buckets] of seen.histograms) {
      const sum = merged.histograms.get(name) ?? new Map<number, number>();
      for (const [le, count] of buckets) sum.set(le, (sum.get(le) ?? 0) + count);
      merged.histograms.set(name, sum);
    }
    for (const [name, value] of seen.counters)
      merged.counters.set(name, (merged.counters.get(name) ?? 0) + value);
    for (const [what, n] of Object.entries(seen.backends)) {
      merged.backends[what] = (merged.backends[what] ?? 0) + n / windows.length;
    }
  }
  for (const what of Object.keys(merged.backends))
    merged.backends[what] = round(merged.backends[what] ?? 0, 1);
  merged.machine_busy = round(merged.machine_busy);
  merged.bench_cores = round(merged.bench_cores);
  return merged;
}

/**
 * p50/p99 (ms) of the histograms whose name starts with one of `prefixes`, and their mean (ms) from the
 * histograms' own sums and counts (`counters`: what each series added in the window).
 */
function latencies({ histograms, counters }: Pick<Observed, "histograms" | "counters">, prefixes: string[]) {
  /** The series `name`'s `_sum` or `_count` (name is `metric{labels}` or `metric`). */
  const added = (name: string, suffix: string) =>
    counters.get(name.replace(/^(\w+)/, `$1${suffix}`)) ?? Number.NaN;
  return Object.fromEntries(
    [...histograms.entries()]
      .filter(
        ([name, buckets]) => prefixes.some((p) => name.startsWith(p)) && (buckets.get(Infinity) ?? 0) > 0,
      )
      .map(([name, buckets]) => [
        name
          .replace(
            /^sms_request_phase_duration_seconds\{phase="([^"]+)"(?:,mode="([^"]+)")?\}$/,
            (_, phase, mode) => (mode ? `phase:${phase}:${mode}` : `phase:${phase}`),
          )
          .replace(/^sms_provider_call_duration_seconds\{(.*)\}$/, "provider:$1")
          .replace(/^sms_event_loop_delay_seconds$/, "event_loop_delay")
          .replace(/"/g, ""),
        {
          count: buckets.get(Infinity) ?? 0,
          p50_ms: round(quantile(buckets, 0.5) * 1000, 1),
          p99_ms: round(quantile(buckets, 0.99) * 1000, 1),
          mean_ms: round((added(name, "_sum") / added(name, "_count")) * 1000, 1),
        },
      ]),
  );
}

/** wrk's figures over one or more runs: the median of each, the worst maximum, errors summed. */
const wrkSummary = (results: WrkFigures[]) => ({
  requests_per_s: round(median(results.map((result) => result.requests_per_s)), 1),
  p50_ms: median(results.map((result) => result.latency_ms.p50)),
  p99_ms: median(results.map((result) => result.latency_ms.p99)),
  max_ms: Math.max(...results.map((result) => result.latency_ms.max)),
  non_2xx: results.reduce((sum, result) => sum + result.non_2xx, 0),
  errors: results.reduce((sum, result) => sum + result.errors, 0),
  ...(results.length > 1 ? { per_round_p99_ms: results.map((result) => result.latency_ms.p99) } : {}),
});

const poolFigures = (seen: Observed) => ({
  pool_waiting_max: seen.pool_waiting_max,
  live_slots_waiting_max: seen.live_slots_waiting_max,
  ubill_places_waiting_max: seen.ubill_places_waiting_max,
  ubill_places_in_use_max: seen.ubill_places_in_use_max,
  pool_in_use_max: seen.pool_in_use_max,
  pool_size: seen.pool_size,
  rss_mb_max: seen.rss_mb_max,
  machine_busy: seen.machine_busy,
  bench_cores: seen.bench_cores,
  // The service's PostgreSQL backends by state / wait event, on average over the window.
  backends: seen.backends,
  // POST /v1/messages answers in the window by status (both keys), from the service's own count.
  send_statuses: Object.fromEntries(
    [...seen.counters]
      .filter(
        ([name, value]) =>
          name.startsWith("sms_http_requests_total{") &&
          name.includes('route="/v1/messages"') &&
          name.includes('method="POST"') &&
          value > 0,
      )
      .map(([name, value]) => [/status="(\d+)"/.exec(name)?.[1] ?? name, value]),
  ),
});

/** A measured window, profiled with --profile when it has a name to print. */
function measuredWindow<T>(name: string | null, work: () => Promise<T>): Promise<T> {
  if (!PROFILE || name === null) return work();
  console.error(`bench live: profile of ${name}`);
  return profiled(INSPECTOR, work);
}

/** CPU time so far (ms) of the service's process and of its database's PostgreSQL backends. */
async function cpuSample(): Promise<{ api: Map<number, number>; postgres: Map<number, number> }> {
  return {
    api: cpuByPid([server.pid]),
    postgres: cpuByPid(await backendPids(testPostgresAdminUrl(), database.databaseUrl)),
  };
}

/** A window of test sends alone (`seconds`, one round's window by default), with the service's metrics. */
async function aloneWindow(
  profileAs: string | null,
  seconds = WINDOW_S,
): Promise<{ test: WrkFigures; seen: Observed }> {
  await checkpointFirst();
  const { result: test, seen } = await observed(() =>
    measuredWindow(profileAs, () => runLoad(server.baseUrl, testLoad, seconds)),
  );
  return { test, seen };
}

/** Test sends alone after the warm-up, printed as a scenario of its own: the status check's reference. */
async function testAlone(name: string): Promise<WrkFigures> {
  await runLoad(server.baseUrl, testLoad, WARMUP_S); // warm-up (JIT, pool, prepared statements)
  const { test: result, seen } = await aloneWindow(name, DURATION_S);
  console.log(
    JSON.stringify({
      scenario: name,
      test: { connections: TEST_CONNECTIONS, pace_ms: TEST_PACE_MS, ...wrkSummary([result]) },
      ...poolFigures(seen),
      latencies: latencies(seen, ["sms_request_phase_duration_seconds", "sms_event_loop_delay_seconds"]),
    }),
  );
  return result;
}

/** One window of live sends: the test sends beside them, and what uBill and the service did meanwhile. */
type LiveWindow = {
  test: WrkFigures;
  seen: Observed;
  seconds: number;
  /** Sends uBill received in the window. */
  submitted: number;
  /** CPU time (ms) in the window: the service's, its PostgreSQL backends'. */
  cpu: { api: number; postgres: number };
  /** wrk's own figures for the live sends: the whole run, ramp included. */
  live: WrkFigures;
};

/**
 * Live sends against uBill answering in `delayMs`, and once all are waiting a window of test sends beside them.
 * `instant`: --control's window instead, the live clients pausing `delayMs` between sends to a uBill that
 * answers at once.
 */
async function liveWindow(
  delayMs: number,
  prefix: string,
  profileAs: string | null,
  instant = false,
): Promise<LiveWindow> {
  const windowS = windowLength(delayMs);
  await checkpointFirst();
  fake.setSubmitDelay(instant ? 0 : delayMs, instant ? 0 : UBILL_SPREAD);
  const load = instant ? instantLiveLoad(prefix, delayMs) : liveLoad(prefix);
  const live = runLoad(server.baseUrl, load, RAMP_S + windowS + 2);
  await sleep(RAMP_S * 1000);
  const sendsBefore = fake.sends().length;
  const cpuBefore = await cpuSample();
  const windowStart = performance.now();
  const { result: test, seen } = await observed(() =>
    measuredWindow(profileAs, () => runLoad(server.baseUrl, testLoad, windowS)),
  );
  const seconds = (performance.now() - windowStart) / 1000;
  const submitted = fake.sends().length - sendsBefore;
  const cpuAfter = await cpuSample();
  const liveResult = await live;
  // The sends still waiting on uBill keep the delay they started with: let them finish, and the service
  // hold no live slot and have no request waiting for a connection, so that the next window (test sends
  // alone, or the next scenario) does not run beside them.
  fake.setSubmitDelay(0);
  await sleep(delayMs);
  await waitUntil(
    async () => {
      const gauges = (await scrapeMetrics(metricsUrl, INTERNAL_TOKEN)).gauges;
      return (
        (gauges.get('sms_live_send_slots{state="in_use"}') ?? 0) === 0 &&
        (gauges.get('sms_live_send_slots{state="waiting"}') ?? 0) === 0 &&
        (gauges.get('sms_ubill_places{state="in_use"}') ?? 0) === 0 &&
        (gauges.get('sms_ubill_places{state="waiting"}') ?? 0) === 0 &&
        (gauges.get('sms_db_pool_connections{state="waiting"}') ?? 0) === 0
      );
    },
    "the live sends' slots and the pool's waiters empty after a live window",
    { timeoutMs: 30_000, pauseMs: 250 },
  );
  await sleep(1000);
  return {
    test,
    seen,
    seconds,
    submitted,
    cpu: {
      api: cpuSpent(cpuBefore.api, cpuAfter.api),
      postgres: cpuSpent(cpuBefore.postgres, cpuAfter.postgres),
    },
    live: liveResult,
  };
}

/**
 * Live sends against uBill answering in `delayMs`, with test sends beside them, against test sends
 * alone: --rounds pairs of windows, each pair in the other order from the one before (alone then
 * live, live then alone, …), so that neither kind always runs first, on the emptier tables, or right
 * after the other's load.
 */
async function liveUnder(delayMs: number, prefix: string, instantPrefix: string) {
  // What uBill's latency allows with the live sends' concurrency: the clients' connections, bounded by the
  // service's places at uBill.
  const ideal = Math.min(LIVE_CONNECTIONS, UBILL_MAX_IN_FLIGHT) / (delayMs / 1000);
  const alone: Array<{ test: WrkFigures; seen: Observed }> = [];
  const beside: LiveWindow[] = [];
  const instant: LiveWindow[] = [];
  const order: string[] = [];
  // Two kinds of window alternate (alone, live; live, alone; …); with --control three take turns in
  // rotation (alone, live, instant; live, instant, alone; instant, alone, live; …).
  const kinds = CONTROL ? ["alone", "live", "instant"] : ["alone", "live"];
  for (let index = 0; index < ROUNDS; index++) {
    const shift = index % kinds.length;
    for (const kind of [...kinds.slice(shift), ...kinds.slice(0, shift)]) {
      order.push(kind);
      if (kind === "alone")
        alone.push(await aloneWindow(index === 0 ? `test_alone_${delayMs}ms` : null, windowLength(delayMs)));
      else if (kind === "live")
        beside.push(await liveWindow(delayMs, prefix, index === 0 ? `live_${delayMs}ms` : null));
      else
        instant.push(
          await liveWindow(delayMs, instantPrefix, index === 0 ? `instant_${delayMs}ms` : null, true),
        );
    }
  }
  const { seen, seconds: windowSeconds, submitted, test, cpuPerSend } = liveFigures(beside);
  const aloneSeen = mergeObserved(alone.map((window) => window.seen));
  const reference = wrkSummary(alone.map((window) => window.test));
  const live = beside.map((window) => window.live);
  const liveThroughput = submitted / Math.max(1e-9, windowSeconds);
  console.log(
    JSON.stringify({
      scenario: `live_${delayMs}ms`,
      live_throughput_ratio: ratio(liveThroughput, ideal),
      // The median of the test sends' p99 beside the live sends, against the median of theirs alone
      // in the same rounds.
      test_p99_ratio: ratio(test.p99_ms, reference.p99_ms),
      rounds: ROUNDS,
      order: order.join(","),
      checkpoint_before_window: CHECKPOINT_BEFORE_WINDOW,
      // Checkpoints PostgreSQL started in each window, in the order of per_round_p99_ms.
      per_round_checkpoints: {
        beside: beside.map((window) => window.seen.checkpoints),
        alone: alone.map((window) => window.seen.checkpoints),
      },
      ...poolFigures(seen),
      // The service's and its PostgreSQL backends' CPU time in the live windows, per send (live and test
      // alike: with the test sends paced far apart, --test-pace-ms=1000, nearly all of it is the live sends').
      cpu_ms_per_send: cpuPerSend,
      live: {
        connections: LIVE_CONNECTIONS,
        ubill_max_in_flight: UBILL_MAX_IN_FLIGHT,
        ubill_queue_timeout_ms: UBILL_QUEUE_TIMEOUT_MS,
        projects: LIVE_PROJECTS,
        ubill_delay_ms: delayMs,
        ubill_spread: UBILL_SPREAD,
        ideal_per_s: round(ideal, 1),
        submitted_per_s: round(liveThroughput, 1),
        window_s: round(windowSeconds, 1),
        per_round_submitted_per_s: beside.map((window) => round(window.submitted / window.seconds, 1)),
        // wrk's own figures cover each whole live run, ramp included.
        ...wrkSummary(live),
        // The service's count of live sends in the windows, by outcome.
        outcomes: Object.fromEntries(
          [...seen.counters]
            .filter(([name, value]) => name.startsWith('sms_sends_total{mode="live"') && value > 0)
            .map(([name, value]) => [/outcome="([^"]+)"/.exec(name)?.[1] ?? name, value]),
        ),
      },
      test: { connections: TEST_CONNECTIONS, pace_ms: TEST_PACE_MS, ...test },
      ...(CONTROL ? controlFigures(instant, test, reference, delayMs) : {}),
      test_alone: {
        ...reference,
        pool_waiting_max: aloneSeen.pool_waiting_max,
        machine_busy: aloneSeen.machine_busy,
        bench_cores: aloneSeen.bench_cores,
        latencies: latencies(aloneSeen, [
          "sms_request_phase_duration_seconds",
          "sms_event_loop_delay_seconds",
        ]),
      },
      latencies: latencies(seen, LIVE_LATENCIES),
    }),
  );
}

/** The latencies a window with live sends reports: each step of a send, uBill's calls, the event loop. */
const LIVE_LATENCIES = [
  "sms_request_phase_duration_seconds",
  "sms_provider_call_duration_seconds",
  "sms_event_loop_delay_seconds",
];

/**
 * Live windows (one kind, in rounds) taken together: what the service showed, their seconds, the sends uBill
 * received, the test sends' figures, and the service's and its PostgreSQL backends' CPU time per send (live
 * and test alike).
 */
function liveFigures(windows: LiveWindow[]) {
  const seconds = windows.reduce((sum, window) => sum + window.seconds, 0);
  const submitted = windows.reduce((sum, window) => sum + window.submitted, 0);
  const sends = submitted + windows.reduce((sum, window) => sum + window.test.requests, 0);
  const perSend = (ms: number) => round(ms / Math.max(1, sends), 3);
  return {
    seen: mergeObserved(windows.map((window) => window.seen)),
    seconds,
    submitted,
    test: wrkSummary(windows.map((window) => window.test)),
    cpuPerSend: {
      api: perSend(windows.reduce((sum, window) => sum + window.cpu.api, 0)),
      postgres: perSend(windows.reduce((sum, window) => sum + window.cpu.postgres, 0)),
      sends,
    },
  };
}

type Summary = ReturnType<typeof wrkSummary>;

/**
 * --control's figures: the test sends beside the same live work against an instant uBill, against theirs
 * beside the slow one (`test_p99_vs_instant`) and alone (`instant.test_p99_ratio`).
 */
function controlFigures(instant: LiveWindow[], test: Summary, reference: Summary, delayMs: number) {
  const { seen, seconds, submitted, test: beside, cpuPerSend } = liveFigures(instant);
  return {
    test_p99_vs_instant: ratio(test.p99_ms, beside.p99_ms),
    instant: {
      test_p99_ratio: ratio(beside.p99_ms, reference.p99_ms),
      live_connections: INSTANT_CONNECTIONS,
      live_pace_ms: delayMs,
      submitted_per_s: round(submitted / Math.max(1e-9, seconds), 1),
      per_round_submitted_per_s: instant.map((window) => round(window.submitted / window.seconds, 1)),
      per_round_checkpoints: instant.map((window) => window.seen.checkpoints),
      machine_busy: seen.machine_busy,
      bench_cores: seen.bench_cores,
      cpu_ms_per_send: cpuPerSend,
      test: { connections: TEST_CONNECTIONS, pace_ms: TEST_PACE_MS, ...beside },
      latencies: latencies(seen, LIVE_LATENCIES),
    },
  };
}

/**
 * `count` live messages `submitted` and due for a status check now, each with
 * a uBill smsID the fake reports as delivered (the recipient encrypted with
 * the service's keyring, as the status check decrypts it).
 */
async function seedBacklog(count: number): Promise<string[]> {
  const keyring = parseKeyring(API_ENV.MESSAGE_ENCRYPTION_KEYS);
  const past = new Date(Date.now() - 60_000);
  const rows = await Promise.all(
    Array.from({ length: count }, async (_, index) => {
      const id = newId("msg");
      const smsId = String(50_000_001 + index);
      const recipient = `+99558${String(index).padStart(7, "0")}`;
      fake.setReport(smsId, "1", recipient);
      return { id, smsId, ciphertext: await keyring.encrypt(recipient, id) };
    }),
  );
  await direct.query(
    `INSERT INTO messages (id, project_id, mode, recipient_masked, recipient_ciphertext, template, locale, sender,
                           segments, encoding, status, provider, provider_ref, submitted_at, next_check_at, created_at, updated_at)
     SELECT m.id, $2, 'live', '+9955••••••00', m.ciphertext, 'verification_code', 'en', 'SMSGE', 1, 'gsm7',
            'submitted', 'ubill', m.ref, $3, $3, $3, $3
     FROM unnest(CAST($1 AS text[]), CAST($4 AS text[]), CAST($5 AS bytea[])) AS m(id, ref, ciphertext)`,
    [
      rows.map((row) => row.id),
      liveProject,
      past,
      rows.map((row) => row.smsId),
      rows.map((row) => row.ciphertext),
    ],
  );
  return rows.map((row) => row.id);
}

/** The status check against slow reports, in the process serving the test sends. */
async function statusCheckUnder(reference: WrkFigures) {
  // The live scenarios' messages are settled, so only the seeded backlog is due.
  await direct.query(
    "UPDATE messages SET status = 'delivered', next_check_at = NULL WHERE status = 'submitted'",
  );
  await server.stop();
  fake.setReportDelay(REPORT_DELAY_MS);
  server = await startService(true);
  const own = await testAlone("test_alone_jobs");
  const ids = await seedBacklog(BACKLOG);
  const reports = () => fake.requests.filter((request) => request.endpoint === "report").length;
  // Wait for the status check to have its provider calls in flight.
  const deadline = Date.now() + 30_000;
  while (reports() < STATUS_CHECK_CONCURRENCY && Date.now() < deadline) await sleep(100);
  await checkpointFirst();
  await sleep(REPORT_DELAY_MS);
  const asked = reports();
  const windowStart = performance.now();
  const { result: test, seen } = await observed(() =>
    measuredWindow("status_check", () => runLoad(server.baseUrl, testLoad, DURATION_S)),
  );
  const windowSeconds = (performance.now() - windowStart) / 1000;
  const askedPerSecond = (reports() - asked) / windowSeconds;
  const ideal = STATUS_CHECK_CONCURRENCY / (REPORT_DELAY_MS / 1000);
  const { rows } = await direct.query<{ status: string; n: number }>(
    "SELECT status, count(*)::int AS n FROM messages WHERE id = ANY($1) GROUP BY status",
    [ids],
  );
  console.log(
    JSON.stringify({
      scenario: "status_check",
      status_check_throughput_ratio: ratio(askedPerSecond, ideal),
      test_p99_ratio: ratio(test.latency_ms.p99, reference.latency_ms.p99),
      test_p99_ratio_same_process: ratio(test.latency_ms.p99, own.latency_ms.p99),
      checkpoint_before_window: CHECKPOINT_BEFORE_WINDOW,
      checkpoints_in_window: seen.checkpoints,
      ...poolFigures(seen),
      status_check: {
        report_delay_ms: REPORT_DELAY_MS,
        concurrency: STATUS_CHECK_CONCURRENCY,
        batch_size: STATUS_CHECK_BATCH_SIZE,
        backlog: BACKLOG,
        ideal_per_s: ideal,
        asked_per_s: round(askedPerSecond, 1),
        window_s: round(windowSeconds, 1),
        backlog_by_status_after: Object.fromEntries(rows.map((row) => [row.status, row.n])),
      },
      test: {
        connections: TEST_CONNECTIONS,
        pace_ms: TEST_PACE_MS,
        ...wrkSummary([test]),
        reference_p99_ms: reference.latency_ms.p99,
      },
      latencies: latencies(seen, LIVE_LATENCIES),
    }),
  );
}

try {
  const reference = await testAlone("test_alone");
  if (SCENARIOS.includes("live")) {
    for (const [index, delay] of DELAYS_MS.entries())
      await liveUnder(delay, String(7 + index), String(3 + index));
  }
  if (SCENARIOS.includes("status")) await statusCheckUnder(reference);
} finally {
  await server.stop();
  await direct.end();
  await fake.close();
  await database.drop();
  console.error(
    `bench live: commit ${commit()}, ${new Date().toISOString()}, load average at start ${loadAtStart}, at end ${loadAverage()}`,
  );
}
