// Prometheus metrics (prom-client), served on the internal listener only.
// Counts and durations, never message content, numbers, keys or provider ids:
// labels are route templates, statuses, codes, modes, job and provider names.
import process from "node:process";
import type { Database, ReadFallbackReason } from "@sms/db";
import {
  cacheStats,
  type KeyMode,
  type LivePlaces,
  type MessageBacklog,
  type SendPhase,
  type Slots,
  type SmsProvider,
  type SubmitOutcome,
} from "@sms/domain";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/** Seconds; from 1 ms to 30 s, the range between a cached read and a provider deadline. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Seconds; finer, from 0.25 ms to 4 s: the steps of one request and the event loop's delays. */
const PHASE_BUCKETS = [
  0.00025, 0.0005, 0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1, 2, 4,
];
/**
 * How long a scrape waits for the backlog's count (three counts over `messages`).
 * A count can wait far longer: behind the lock a partition's creation or
 * detachment takes, or on a database that does not answer. The scrape then
 * serves the last count, and every other metric, at once.
 */
const BACKLOG_DEADLINE_MS = 1_000;
/** How often the event loop's delay is sampled. */
const EVENT_LOOP_SAMPLE_MS = 20;

type PoolStats = ReturnType<Database["poolStats"]>;

/** A step of a request that is timed on its own: the API key's check, and the steps of a new send. */
export type RequestPhase = "authenticate" | `send_${SendPhase}`;

export function createMetrics(sources: {
  /** Messages due for a status check, still queued, and unknown (read at scrape time). */
  backlog(): Promise<MessageBacklog>;
  /** The database pool's connections (null for PGlite). */
  pool(): PoolStats;
  /** Live sends' share of the pool (send-message.ts), when there is one. */
  liveSlots?(): Pick<Slots, "size" | "inUse" | "waiting">;
  /** uBill's places for live sends (send-message.ts), when uBill is configured. */
  liveSubmissions?(): LivePlaces | undefined;
  /** The read routes' turns (http/gateway.ts, inTurn), when there are any. */
  readTurns?(): Pick<Slots, "size" | "inUse" | "waiting">;
  /** Requests held by `Prefer: wait` now, and whether change notifications arrive (http/conditional-read.ts). */
  waiting?(): { held: number; listening: boolean };
  /** Whether reads skip the read replica right now (null: no DATABASE_READ_URL). */
  replicaBypassed?: () => boolean | null;
  /** Whether reads skip the read replica because it is further behind than the read-your-writes window (null: no DATABASE_READ_URL). */
  replicaBehind?: () => boolean | null;
  /** What GET /readyz answers: the database answers and takes writes (read at scrape time). */
  ready?(): Promise<boolean>;
  /** The primary's WAL timeline (PostgreSQL; null on a standby): a promotion moves it on. */
  timeline?(): Promise<number | null>;
  /** The read replica's replay lag in seconds (null: no replica, or not a standby). */
  replicaLag?(): Promise<number | null>;
}) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // prom-client reads these three from /proc/self/status, which Deno does not
  // let it read: they would be 0 forever. The resident set comes from the
  // runtime instead; the other two are left out rather than reported wrong.
  //
  // Its event-loop lag gauges (nodejs_eventloop_lag_*) are left out too: they
  // read the runtime's monitorEventLoopDelay histogram, and under load Deno's
  // takes 8-10 ms to compute its standard deviation and 1-2 ms for its mean,
  // on the event loop, at every scrape
  // (bench/log/2026-11-27.md#the-scrapes-own-pause-prom-clients-event-loop-lag-gauges-2026-11-27-later).
  // The service measures the same delay itself, cheaply:
  // sms_event_loop_delay_seconds.
  const eventLoopLag = registry
    .getMetricsAsArray()
    .map((metric) => metric.name)
    .filter((name) => name.startsWith("nodejs_eventloop_lag_"));
  for (const name of [
    "process_resident_memory_bytes",
    "process_virtual_memory_bytes",
    "process_heap_bytes",
    ...eventLoopLag,
  ]) {
    registry.removeSingleMetric(name);
  }
  new Gauge({
    name: "process_resident_memory_bytes",
    help: "Resident memory size in bytes.",
    registers: [registry],
    collect() {
      this.set(process.memoryUsage().rss);
    },
  });

  // The in-process caches (packages/domain/src/cache.ts), by namespace, read at scrape time.
  new Gauge({
    name: "sms_cache_entries",
    help: "Entries held by each in-process cache (answered keys, API keys, the auth throttle, project refusals, statement texts).",
    labelNames: ["namespace"] as const,
    registers: [registry],
    collect() {
      for (const stats of cacheStats()) this.set({ namespace: stats.namespace }, stats.size);
    },
  });
  for (const [name, field, help] of [
    ["sms_cache_hits_total", "hits", "Reads of an in-process cache that found a fresh entry."],
    [
      "sms_cache_misses_total",
      "misses",
      "Reads of an in-process cache that found nothing fresh (expired ones included).",
    ],
    [
      "sms_cache_evictions_total",
      "evicted",
      "Entries an in-process cache pushed out for newer ones (its maximum).",
    ],
    [
      "sms_cache_loads_total",
      "loads",
      "Loads an in-process cache ran (single flight: one per key at a time).",
    ],
    [
      "sms_cache_load_joins_total",
      "joined",
      "Reads that joined a load already running for their key instead of running another.",
    ],
  ] as const) {
    new Counter({
      name,
      help,
      labelNames: ["namespace"] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const stats of cacheStats()) this.inc({ namespace: stats.namespace }, stats[field]);
      },
    });
  }

  const requests = new Counter({
    name: "sms_http_requests_total",
    help: "HTTP requests by route template, method and status.",
    labelNames: ["route", "method", "status"] as const,
    registers: [registry],
  });
  const requestDuration = new Histogram({
    name: "sms_http_request_duration_seconds",
    help: "HTTP request duration by route template and method.",
    labelNames: ["route", "method"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const errors = new Counter({
    name: "sms_http_errors_total",
    help: "Error answers by their envelope's code (provider_unavailable, internal_error, …) and route template.",
    labelNames: ["code", "route"] as const,
    registers: [registry],
  });
  const sends = new Counter({
    name: "sms_sends_total",
    help: "POST /v1/messages by key mode and outcome (submitted, failed, unknown, replayed, or the refusal code).",
    labelNames: ["mode", "outcome"] as const,
    registers: [registry],
  });
  const verifications = new Counter({
    name: "sms_verifications_total",
    help: "Verifications by key mode and event: started, approved, expired, failed (send_failed at start), canceled, max_attempts_reached.",
    labelNames: ["mode", "event"] as const,
    registers: [registry],
  });
  const refusals = new Counter({
    name: "sms_limit_refusals_total",
    help: "Requests refused by a limit, by code (rate_limited, daily_limit_reached) and route template.",
    labelNames: ["code", "route"] as const,
    registers: [registry],
  });
  const providerCalls = new Counter({
    name: "sms_provider_calls_total",
    help: "Calls to an SMS provider by provider, operation and outcome.",
    labelNames: ["provider", "operation", "outcome"] as const,
    registers: [registry],
  });
  const providerDuration = new Histogram({
    name: "sms_provider_call_duration_seconds",
    help: "Duration of calls to an SMS provider by provider and operation.",
    labelNames: ["provider", "operation"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const phases = new Histogram({
    name: "sms_request_phase_duration_seconds",
    help: "Duration of one step of a request: authenticate (the API key), and a new send's prepare, queue (a live send's wait for a place at uBill), write_ahead, submit and record, by the key's mode (a test send asks the simulator first and writes in one statement, its record).",
    labelNames: ["phase", "mode"] as const,
    buckets: PHASE_BUCKETS,
    registers: [registry],
  });
  const eventLoopDelay = new Histogram({
    name: "sms_event_loop_delay_seconds",
    help: `How late a timer due every ${EVENT_LOOP_SAMPLE_MS} ms fired: time the event loop spent blocked (CPU work, garbage collection).`,
    buckets: PHASE_BUCKETS,
    registers: [registry],
  });
  let expected = performance.now() + EVENT_LOOP_SAMPLE_MS;
  const eventLoopSampler = setInterval(() => {
    const now = performance.now();
    eventLoopDelay.observe(Math.max(0, now - expected) / 1000);
    expected = now + EVENT_LOOP_SAMPLE_MS;
  }, EVENT_LOOP_SAMPLE_MS);
  unrefTimer(eventLoopSampler);
  const jobDuration = new Histogram({
    name: "sms_job_round_duration_seconds",
    help: "Duration of one round of a periodic job.",
    labelNames: ["job"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const backlogCounts = latestCount(sources.backlog, BACKLOG_DEADLINE_MS);
  const jobRows = new Counter({
    name: "sms_job_rows_total",
    help: "Rows a periodic job's rounds claimed or changed, by job and count name.",
    labelNames: ["job", "count"] as const,
    registers: [registry],
  });
  const jobFailures = new Counter({
    name: "sms_job_round_failures_total",
    help: "Rounds of a periodic job that failed.",
    labelNames: ["job"] as const,
    registers: [registry],
  });
  new Gauge({
    name: "sms_messages_backlog",
    help: "Messages due for a status check (state=due), still queued (state=queued), and unknown (state=unknown).",
    labelNames: ["state"] as const,
    registers: [registry],
    async collect() {
      const backlog = await backlogCounts.read();
      if (!backlog) return;
      this.set({ state: "due" }, backlog.due);
      this.set({ state: "queued" }, backlog.queued);
      this.set({ state: "unknown" }, backlog.unknown);
    },
  });
  new Gauge({
    name: "sms_messages_backlog_age_seconds",
    help: "Seconds since the counts in sms_messages_backlog were made: about 0 when this scrape made them; more when the count did not finish in time (the table locked, the database slow or away) and the last one is served.",
    registers: [registry],
    async collect() {
      // The same count as the backlog's gauge (prom-client collects every metric at once).
      await backlogCounts.read();
      this.set(backlogCounts.ageSeconds());
    },
  });
  new Gauge({
    name: "sms_messages_backlog_oldest_due_seconds",
    help: "How long the oldest message due for a status check has been due (0 when none is): the status-check job's delay. From the same count as sms_messages_backlog.",
    registers: [registry],
    async collect() {
      const backlog = await backlogCounts.read();
      if (backlog) this.set(backlog.oldestDueSeconds);
    },
  });
  new Gauge({
    name: "sms_ready",
    help: "1 while GET /readyz answers ready (the database answers and takes writes), else 0; read at scrape time.",
    registers: [registry],
    async collect() {
      if (sources.ready) this.set((await sources.ready()) ? 1 : 0);
    },
  });
  const timeline = sources.timeline && latestCount(sources.timeline, BACKLOG_DEADLINE_MS);
  new Gauge({
    name: "sms_db_timeline",
    help: 'The WAL timeline of the PostgreSQL primary (server="primary"): it goes up when a standby is promoted (a failover, or a restore to a point in time). Not served on PGlite, nor before it was first read.',
    labelNames: ["server"] as const,
    registers: [registry],
    async collect() {
      const value = await timeline?.read();
      if (typeof value === "number") this.set({ server: "primary" }, value);
    },
  });
  const replicaLag = sources.replicaLag && latestCount(sources.replicaLag, BACKLOG_DEADLINE_MS);
  new Gauge({
    name: "sms_db_replica_lag_seconds",
    help: 'How far the read replica\'s (server="replica") replay is behind the primary, in seconds (0: it has replayed what the primary had written), asked of the replica at scrape time. Only with DATABASE_READ_URL.',
    labelNames: ["server"] as const,
    registers: [registry],
    async collect() {
      const value = await replicaLag?.read();
      if (typeof value === "number") this.set({ server: "replica" }, value);
    },
  });
  new Gauge({
    name: "sms_db_pool_connections",
    help: "Database pool connections by state (total, idle, waiting: requests queued for one).",
    labelNames: ["state"] as const,
    registers: [registry],
    collect() {
      const stats = sources.pool();
      if (!stats) return;
      this.set({ state: "total" }, stats.total);
      this.set({ state: "idle" }, stats.idle);
      this.set({ state: "waiting" }, stats.waiting);
    },
  });

  slotsGauge(
    registry,
    "sms_live_send_slots",
    "Live sends' database slots for their write-ahead transactions (a share of the pool): size, in_use, and waiting (live sends queued for one, holding no connection).",
    () => sources.liveSlots?.(),
  );
  statesGauge(
    registry,
    "sms_ubill_places",
    "Live sends' places at uBill (UBILL_MAX_IN_FLIGHT), each held for one call: size, in_use (calls at uBill), ready (sends written ahead, waiting for a place) and waiting (live sends not yet admitted, holding nothing). A send that waits UBILL_QUEUE_TIMEOUT_MS in all is answered 503.",
    () => {
      const now = sources.liveSubmissions?.();
      return (
        now && {
          size: now.places.size,
          in_use: now.places.inUse,
          ready: now.places.waiting,
          waiting: now.admitted.waiting,
        }
      );
    },
  );
  slotsGauge(
    registry,
    "sms_read_turns",
    "Turns of the read routes (a message or a verification by id), as many as the pool's connections: size, in_use, and waiting (reads queued for one, before their procedure starts).",
    () => sources.readTurns?.(),
  );
  const readFallbacks = new Counter({
    name: "sms_db_read_fallbacks_total",
    help: "Reads meant for the read replica that ran on the primary, by reason (replica_error: the replica failed or is being skipped; not_found_recent: read-your-writes; replica_behind: the replica lacks writes older than DATABASE_READ_FALLBACK_WINDOW_MS).",
    labelNames: ["reason"] as const,
    registers: [registry],
  });
  new Gauge({
    name: "sms_waiting_requests",
    help: "Requests held by `Prefer: wait` right now (at most MAX_WAITING_REQUESTS).",
    registers: [registry],
    collect() {
      const waiting = sources.waiting?.();
      if (waiting) this.set(waiting.held);
    },
  });
  new Gauge({
    name: "sms_change_notifications_listening",
    help: "1 while this instance's LISTEN session for change notifications is up (PostgreSQL), else 0: held requests poll.",
    registers: [registry],
    collect() {
      const waiting = sources.waiting?.();
      if (waiting) this.set(waiting.listening ? 1 : 0);
    },
  });
  new Gauge({
    name: "sms_db_read_replica_bypassed",
    help: "1 while reads skip the read replica after it failed to answer (they go to the primary), else 0 (always 0 without DATABASE_READ_URL).",
    registers: [registry],
    collect() {
      const bypassed = sources.replicaBypassed?.() ?? null;
      if (bypassed !== null) this.set(bypassed ? 1 : 0);
    },
  });
  new Gauge({
    name: "sms_db_read_replica_behind",
    help: "1 while reads skip the read replica because it lacks writes older than DATABASE_READ_FALLBACK_WINDOW_MS (they go to the primary until it has caught up), else 0 (always 0 without DATABASE_READ_URL).",
    registers: [registry],
    collect() {
      const behind = sources.replicaBehind?.() ?? null;
      if (behind !== null) this.set(behind ? 1 : 0);
    },
  });

  return {
    registry,
    /** One read that went to the primary instead of the replica. */
    readFallback(reason: ReadFallbackReason) {
      readFallbacks.inc({ reason });
    },
    /** One finished HTTP request (the access log's facts). */
    /** One answered request; `seconds` null for a request held by `Prefer: wait` (its time is the hold's). */
    request(route: string, method: string, status: number, seconds: number | null, code?: string) {
      requests.inc({ route, method, status: String(status) });
      if (seconds !== null) requestDuration.observe({ route, method }, seconds);
      if (code) errors.inc({ code, route });
      if (status === 429 && code) refusals.inc({ code, route });
    },
    /** One timed step of a request (RequestPhase), in milliseconds; a send's steps with the key's mode. */
    phase(phase: RequestPhase, ms: number, mode?: KeyMode) {
      phases.observe(mode ? { phase, mode } : { phase }, ms / 1000);
    },
    /** Stops the event loop's sampler (the process ends, or a test's app is closed). */
    stop() {
      clearInterval(eventLoopSampler);
    },
    send(mode: string, outcome: string) {
      sends.inc({ mode, outcome });
    },
    /** A verification's event (never its code): started, approved, expired, failed, canceled, max_attempts_reached. */
    verification(mode: string, event: VerificationEvent, count = 1) {
      if (count > 0) verifications.inc({ mode, event }, count);
    },
    jobRound(job: string, seconds: number, counts: Record<string, number> | null) {
      jobDuration.observe({ job }, seconds);
      if (!counts) {
        jobFailures.inc({ job });
        return;
      }
      for (const [count, value] of Object.entries(counts)) if (value > 0) jobRows.inc({ job, count }, value);
    },
    /** `provider` with every call timed and counted. */
    instrument(provider: SmsProvider): SmsProvider {
      const timed = async <T>(operation: string, outcomeOf: (value: T) => string, call: () => Promise<T>) => {
        const started = performance.now();
        try {
          const value = await call();
          providerCalls.inc({ provider: provider.name, operation, outcome: outcomeOf(value) });
          return value;
        } catch (error) {
          providerCalls.inc({ provider: provider.name, operation, outcome: "threw" });
          throw error;
        } finally {
          providerDuration.observe(
            { provider: provider.name, operation },
            (performance.now() - started) / 1000,
          );
        }
      };
      return {
        ...provider,
        submit: (request) =>
          timed(
            "submit",
            (outcome: SubmitOutcome) => outcome.kind,
            () => provider.submit(request),
          ),
        checkStatus: (query) =>
          timed(
            "status",
            (report) => report.kind,
            () => provider.checkStatus(query),
          ),
      };
    },
    /** The exposition, for GET /metrics. */
    async response(): Promise<Response> {
      return new Response(await registry.metrics(), { headers: { "Content-Type": registry.contentType } });
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** A timer that never keeps the process alive: Deno's ids are numbers (Deno.unrefTimer), Node's are objects. */
function unrefTimer(timer: unknown): void {
  const deno = (globalThis as { Deno?: { unrefTimer(id: number): void } }).Deno;
  if (typeof timer === "number") deno?.unrefTimer(timer);
  else (timer as { unref?(): void }).unref?.();
}

export type VerificationEvent =
  | "started"
  | "approved"
  | "expired"
  | "failed"
  | "canceled"
  | "max_attempts_reached";

/** A gauge with one `state` label: the value of each state `states()` gives at scrape time (none: not set). */
function statesGauge(
  registry: Registry,
  name: string,
  help: string,
  states: () => Record<string, number> | undefined,
): void {
  new Gauge({
    name,
    help,
    labelNames: ["state"] as const,
    registers: [registry],
    collect() {
      for (const [state, value] of Object.entries(states() ?? {})) this.set({ state }, value);
    },
  });
}

/** A gauge of `slots()`'s size, in_use and waiting, read when scraped (nothing while there are none). */
function slotsGauge(
  registry: Registry,
  name: string,
  help: string,
  slots: () => Pick<Slots, "size" | "inUse" | "waiting"> | undefined,
): void {
  statesGauge(registry, name, help, () => {
    const now = slots();
    return now && { size: now.size, in_use: now.inUse, waiting: now.waiting };
  });
}

/**
 * The newest of `count()`'s results, for a gauge read at scrape time. A read
 * waits for a count for at most `deadlineMs`, then returns the last one that
 * finished (null before the first); a count still running is waited for again
 * by the next read, never started twice, so a stuck count holds at most one
 * connection. A count that fails leaves the last one in place. `ageSeconds`
 * tells how old the served one is.
 */
export function latestCount<T>(count: () => Promise<T>, deadlineMs: number) {
  const started = performance.now();
  let latest: { value: T; at: number } | null = null;
  let running: Promise<void> | null = null;
  return {
    async read(): Promise<T | null> {
      running ??= Promise.resolve()
        .then(count)
        .then(
          (value) => {
            latest = { value, at: performance.now() };
          },
          () => {},
        )
        .finally(() => {
          running = null;
        });
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        running,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, deadlineMs);
        }),
      ]);
      clearTimeout(timer);
      return latest?.value ?? null;
    },
    ageSeconds(): number {
      return (performance.now() - (latest?.at ?? started)) / 1000;
    },
  };
}
