// The composition root: turns configuration into a running application (the
// database, the providers, the keyring, the logger, the HTTP handlers and the
// periodic jobs). main.ts serves it with Deno; tests call it in-process.
//
// The database may be down at start-up: createApp does not wait for it.
// startDatabase() keeps trying (with backoff, one log line per attempt) and
// migrates once it answers; until then /healthz, /readyz and the documents
// answer, and every other route answers 500 with Retry-After (gateway.ts).
import { createCookieSealer, generateKeySpec, type Keyring, parseKeyring } from "@sms/crypto";
import {
  createDatabase,
  type Database,
  openReadReplica,
  type ReadReplica,
  serverTimeline,
  unavailableReason,
} from "@sms/db";
import {
  type Clock,
  createApiKeyAuthenticator,
  createDatabaseClock,
  createRequestRecorder,
  createSlots,
  createStore,
  type DatabaseClock,
  ensurePartitions,
  type LivePlaces,
  messageBacklog,
  type RequestRecorder,
  resourceChanges,
  type SmsProvider,
  type Store,
  systemClock,
  systemTimer,
  type Timer,
  withReplicaReads,
} from "@sms/domain";
import { createSimulatorProvider } from "@sms/provider-sim";
import { createUbillProvider } from "@sms/provider-ubill";
import { createWeb, generateCookieSecret, identityProvidersFromConfig } from "@sms/web";
import type { DestinationStream } from "pino";
import type { Config } from "./config/index.ts";
import type { AppDeps } from "./deps.ts";
import { developmentFile, readOrCreateDevelopmentFile } from "./development-files.ts";
import { docsRoutes } from "./docs/docs.ts";
import { buildOpenApiDocument } from "./docs/openapi.ts";
import { createAuthThrottle } from "./http/auth-throttle.ts";
import { createWaitingRoom, POLL_INTERVAL_MS } from "./http/conditional-read.ts";
import { createGateway, type Handler } from "./http/gateway.ts";
import { createInternalHandler } from "./http/internal.ts";
import { periodicJobs } from "./jobs/jobs.ts";
import { type Job, type Scheduler, startScheduler } from "./jobs/scheduler.ts";
import { type AppLogger, createLogger, serializeError } from "./logger.ts";
import { mcpRoutes } from "./mcp/mcp.ts";
import { mcpOriginRule } from "./mcp/origin.ts";
import { createMetrics, type Metrics } from "./metrics.ts";
import { requestRecord } from "./request-log.ts";
import { appRouter } from "./router.ts";
import { apiServices } from "./services.ts";
import { toolsRouter } from "./tools-router.ts";
import { webPort } from "./web-port.ts";

export type App = {
  /** The public port: the REST routes of spec 1.6, documents and pages. */
  handler: Handler;
  /** The internal listener's tRPC endpoint; null unless INTERNAL_PORT is configured. */
  internalHandler: Handler | null;
  /**
   * Settles once the database has first answered and is migrated; rejects
   * when it answers but migrating fails (the process must then exit).
   */
  databaseReady: Promise<void>;
  /** Settles after the first attempt to reach the database, whatever its outcome. */
  databaseAttempted: Promise<void>;
  deps: AppDeps;
  config: Config;
  /** The database and its store (tests and tools reach the rows through these). */
  db: Database;
  store: Store;
  keyring: Keyring;
  logger: AppLogger;
  providers: { test: SmsProvider; live: SmsProvider | null };
  metrics: Metrics;
  /** The request log's writer (tests flush it to read what was recorded). */
  requestLog: RequestRecorder;
  /** The periodic jobs this instance runs (status check, recovery, purges). */
  jobs: Job[];
  /** Starts the jobs once the database is ready (at once when it already is). */
  startJobs(): Scheduler;
  /** The shutdown has begun: from now on /readyz answers 503 (everything else is still served). */
  markShuttingDown(): void;
  close(): Promise<void>;
};

export type AppOverrides = {
  /** The clock every decision uses, instead of the database's (tests: a manual clock). */
  clock?: Clock;
  /** This instance's own wall clock (default: the system's); a test skews one instance with it. */
  localClock?: Clock;
  logDestination?: DestinationStream;
  /** An already-open, migrated database (tests); it is not closed by app.close(). */
  db?: Database;
  /** Real waiting (the MCP wait_for_message tool's polling); tests record the waits instead. */
  timer?: Timer;
};

/** The database's address for logs: host, port and name, never the credentials. */
function describeDatabase(config: Config): string {
  if (!config.database.url) return `pglite:${config.database.pgliteDataDir}`;
  try {
    const url = new URL(config.database.url);
    return `${url.hostname}:${url.port || "5432"}${url.pathname}`;
  } catch {
    return "postgresql";
  }
}

/** A short reason for a failed connection attempt: a code such as ECONNREFUSED, never a URL. */
function failureReason(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && code.length > 0) return code;
  const message = error instanceof Error ? (error.message.split("\n")[0] ?? "") : String(error);
  return message.replace(/\w+:\/\/\S+/g, "[url]").slice(0, 120);
}

const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 5_000;

/**
 * Migrates the database as soon as it answers: tries at once, then again with
 * backoff (250 ms doubling up to 5 s), logging each failed attempt. A
 * migration that fails while the database answers is not retried: the
 * returned promise rejects. `stop()` ends the retries (shutdown).
 */
function startDatabase(
  db: Database,
  logger: AppLogger,
  where: string,
): { ready: Promise<void>; attempted: Promise<void>; stop(): void } {
  let stopped = false;
  let wake: (() => void) | undefined;
  let attempted: () => void = () => {};
  const firstAttempt = new Promise<void>((resolve) => {
    attempted = resolve;
  });
  const ready = (async () => {
    for (let attempt = 1; ; attempt++) {
      try {
        const { applied } = await db.migrate();
        attempted();
        if (applied.length > 0) logger.info({ applied }, "database migrated");
        if (attempt > 1) logger.info({ database: where, attempts: attempt }, "database reached");
        return;
      } catch (error) {
        if (stopped) throw new Error("stopped before the database was reached");
        // A migration that failed while the database answers is not retried;
        // a connection that could not be opened (or broke) is, even if the
        // database answers a moment later.
        const reason = unavailableReason(error);
        const connection = reason === "connect_failed" || reason === "connection_lost";
        if (!connection && (await db.ping())) throw error;
        attempted();
        const retryInMs = Math.min(FIRST_RETRY_MS * 2 ** (attempt - 1), MAX_RETRY_MS);
        logger.warn(
          { database: where, attempt, reason: failureReason(error), retry_in_ms: retryInMs },
          "database unreachable at start-up; retrying",
        );
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, retryInMs);
        });
        if (stopped) throw new Error("stopped before the database was reached");
      }
    }
  })();
  ready.catch(() => attempted());
  return {
    ready,
    attempted: firstAttempt,
    stop() {
      stopped = true;
      wake?.();
    },
  };
}

/**
 * A development secret that production must configure (`variable`): kept in
 * memory for an in-memory database or under NODE_ENV=test; otherwise
 * generated once into a file (0600) beside the data directory and reused on
 * every start, with a warning, so that rows and sessions survive a restart.
 */
async function developmentSecret(
  config: Config,
  options: { variable: string; file: string; generate: () => string; what: string },
  warn: (msg: string) => void,
): Promise<string> {
  if (config.database.pgliteDataDir === "memory://" || config.nodeEnv === "test") {
    warn(`${options.variable} is not set: using a throw-away in-memory ${options.what} (development only)`);
    return options.generate();
  }
  const file = developmentFile(config.database.pgliteDataDir, options.file);
  const { value, created } = readOrCreateDevelopmentFile(file, options.generate);
  if (created) {
    warn(
      `${options.variable} is not set: generated a development ${options.what} in ${file} (never do this in production)`,
    );
  }
  return value;
}

/** The message-encryption keyring: MESSAGE_ENCRYPTION_KEYS, or a development key (developmentSecret). */
async function loadKeyring(config: Config, warn: (msg: string) => void): Promise<Keyring> {
  if (config.messageEncryptionKeys) return parseKeyring(config.messageEncryptionKeys);
  const spec = await developmentSecret(
    config,
    {
      variable: "MESSAGE_ENCRYPTION_KEYS",
      file: "message-encryption-keys",
      generate: () => generateKeySpec("dev"),
      what: "key",
    },
    warn,
  );
  return parseKeyring(spec);
}

/** A scheduler that starts once `ready` resolves, unless stopped before. */
function startWhenReady(ready: Promise<void>, start: () => Scheduler): Scheduler {
  let scheduler: Scheduler | null = null;
  let stopped = false;
  const started = ready.then(() => {
    if (!stopped) scheduler = start();
    return scheduler;
  });
  started.catch(() => {});
  return {
    async stop() {
      stopped = true;
      await scheduler?.stop();
    },
    async runOnce(name) {
      const running = await started;
      if (!running) throw new Error("the jobs were stopped");
      return running.runOnce(name);
    },
  };
}

export async function createApp(config: Config, overrides: AppOverrides = {}): Promise<App> {
  const logger = createLogger({ level: config.logLevel, destination: overrides.logDestination });
  const keyring = await loadKeyring(config, (msg) => logger.warn({}, msg));

  const db =
    overrides.db ??
    (await createDatabase({
      databaseUrl: config.database.url,
      migrationUrl: config.database.migrationUrl,
      preparedStatements: config.database.preparedStatements,
      pgliteDataDir: config.database.pgliteDataDir,
      poolSize: config.database.poolSize,
      connectionTimeoutMs: config.database.connectTimeoutMs,
      statementTimeoutMs: config.database.statementTimeoutMs,
      logger,
    }));
  const starting = overrides.db
    ? { ready: Promise.resolve(), attempted: Promise.resolve(), stop() {} }
    : startDatabase(db, logger, describeDatabase(config));
  const store = createStore(db);
  // Holds of `Prefer: wait` (http/conditional-read.ts): the store's change notifications, one LISTEN
  // session for the process (none on PGlite: holds poll), and their bounds.
  const changes = resourceChanges(db, logger);
  const waitingRoom = createWaitingRoom(config.http.waiting);
  // The developer console's request log: recorded after the answer, written in batches.
  const requestLog = createRequestRecorder({ store, logger });
  // Decisions shared between instances are made on the database's time
  // (packages/domain/src/database-clock.ts), read when the database is reached
  // and every 10 s after; a test may pass its own clock instead.
  const databaseClock = overrides.clock
    ? null
    : createDatabaseClock({ store, local: overrides.localClock ?? systemClock, logger });
  const clock: Clock = overrides.clock ?? (databaseClock as DatabaseClock);
  let started = false;
  let shuttingDown = false;
  // This month's partitions and the next two (docs/scaling.md#messages-partitioned-by-month),
  // made right after the database is reached; requests do not wait for them
  // (the migration made this month's, and the DEFAULT partitions take any row meanwhile).
  let partitionsEnsured: Promise<unknown> = Promise.resolve();
  const databaseReady = starting.ready.then(async () => {
    await databaseClock?.sync();
    databaseClock?.start();
    started = true;
    partitionsEnsured = ensurePartitions({ store }, { now: clock.now() }).catch((error: unknown) =>
      logger.warn({ err: serializeError(error) }, "could not create this month's partitions at start-up"),
    );
    await partitionsEnsured;
  });
  // Observed by main.ts; never an unhandled rejection in tests that do not wait.
  databaseReady.catch(() => {});
  const databaseStarted = () => started;

  // Live sends' share of the pool (send-message.ts): half of it, so that a burst of live sends waiting
  // on a slow provider never leaves test sends, reads and the jobs without a connection.
  const liveSlots = createSlots(Math.max(1, Math.floor(config.database.poolSize / 2)));
  // The read routes' turns (http/gateway.ts, inTurn): one per connection of the pool they read from (the
  // replica's has the same size), so that reads waiting under load hold nothing but their request.
  const readTurns = createSlots(config.database.poolSize);
  // uBill's places (send-message.ts): at most UBILL_MAX_IN_FLIGHT calls at uBill from this process. Beside
  // them, as many sends as there are live slots (at most one per place) may be written ahead, ready for the
  // next free place: a slow uBill ties up at most that many live sends, and with them at most that share
  // of the CPU; the rest wait in memory, holding nothing.
  const liveSubmissions: LivePlaces | undefined = config.ubill
    ? {
        places: createSlots(config.ubill.maxInFlight),
        admitted: createSlots(config.ubill.maxInFlight + Math.min(config.ubill.maxInFlight, liveSlots.size)),
        waitMs: config.ubill.queueTimeoutMs,
      }
    : undefined;
  let replica: ReadReplica | null = null;
  const metrics = createMetrics({
    backlog: () => messageBacklog({ store }, { now: clock.now() }),
    pool: () => db.poolStats(),
    liveSlots: () => liveSlots,
    liveSubmissions: () => liveSubmissions,
    readTurns: () => readTurns,
    waiting: () => ({ held: waitingRoom.waiting(), listening: changes.listening() }),
    replicaBypassed: () => replica?.bypassed() ?? null,
    replicaBehind: () => replica?.behind() ?? null,
    // The same answer as GET /readyz (deps.databaseReachable).
    ready: async () => started && (await db.ping()),
    ...(db.kind === "postgres" ? { timeline: () => serverTimeline(db) } : {}),
    replicaLag: async () => (replica ? replica.lagSeconds() : null),
  });
  // DATABASE_READ_URL: the reads that may lag go to a replica (docs/scaling.md);
  // without it (and on PGlite) they are the primary's like everything else.
  const read = config.database.read;
  if (read) {
    replica = await openReadReplica({
      replicaUrl: read.url,
      primary: db,
      retryAfterMs: read.retryAfterMs,
      // Past the read-your-writes window a row the replica lacks would be "not found": skip it then.
      maxLagMs: read.recentWindowMs,
      preparedStatements: config.database.preparedStatements,
      poolSize: config.database.poolSize,
      connectionTimeoutMs: config.database.connectTimeoutMs,
      statementTimeoutMs: config.database.statementTimeoutMs,
      logger,
      onFallback: (reason) => metrics.readFallback(reason),
    });
  }
  const reads =
    replica && read
      ? withReplicaReads(store, {
          replica,
          recentWindowMs: read.recentWindowMs,
          // Ids carry the wall time of the instance that minted them (newId), not the decision clock.
          now: () => Date.now(),
          onFallback: (reason) => metrics.readFallback(reason),
        })
      : store;
  const ubill = config.ubill ? createUbillProvider({ ...config.ubill, logger }) : null;
  const live = ubill ? metrics.instrument(ubill) : null;
  if (!live) {
    logger.warn(
      {},
      "UBILL_* is not configured: live keys answer 503 provider_unavailable (test keys are unaffected)",
    );
  }
  const providers = {
    test: metrics.instrument(
      createSimulatorProvider({ clock, deliveryDelayMs: config.messages.simulatorDelayMs }),
    ),
    live,
  };
  const services = apiServices({
    store,
    reads,
    keyring,
    clock,
    logger,
    providers,
    brands: ubill,
    config,
    observeSend: (phase, ms, mode) => metrics.phase(`send_${phase}`, ms, mode),
    liveSlots,
    liveSubmissions,
  });
  const authenticator = createApiKeyAuthenticator({ store, clock, cacheTtlMs: config.apiKeyCacheTtlMs });

  const deps: AppDeps = {
    services,
    auth: {
      ...authenticator,
      async authenticate(authorization, hashed) {
        const started = performance.now();
        try {
          return await authenticator.authenticate(authorization, hashed);
        } finally {
          metrics.phase("authenticate", performance.now() - started);
        }
      },
    },
    authThrottle: createAuthThrottle({ clock, maxFailuresPerMinute: config.authFailuresPerMinute }),
    clock,
    logger,
    metrics,
    databaseReachable: async () => started && (await db.ping()),
    shuttingDown: () => shuttingDown,
  };

  // The pages (@sms/web: the claim flow and the dashboard) share the identity
  // providers, the sign-in callback and the cookie sealer (one secret).
  const cookieSecret =
    config.claims.cookieSecret ??
    (await developmentSecret(
      config,
      {
        variable: "CLAIM_COOKIE_SECRET",
        file: "cookie-secret",
        generate: generateCookieSecret,
        what: "cookie secret",
      },
      (msg) => logger.warn({}, msg),
    ));
  const sealer = await createCookieSealer(cookieSecret);
  const identityProviders = identityProvidersFromConfig(config.claims);
  if (config.dashboard.devSignIn) {
    logger.warn(
      {},
      "development sign-in is on: anyone can sign in to the claim pages and the dashboard as anyone",
    );
  }
  const web = await createWeb(
    webPort({ deps, config, sealer, identityProviders, brandsConfigured: live !== null }),
  );

  const document = buildOpenApiDocument(appRouter, config.publicBaseUrl);
  const conditionalReads = { changes, room: waitingRoom, pollIntervalMs: POLL_INTERVAL_MS };
  const handler = createGateway({
    router: appRouter,
    deps,
    extraRoutes: [
      ...(await docsRoutes(document)),
      ...mcpRoutes({
        deps,
        publicBaseUrl: config.publicBaseUrl,
        maxBodyBytes: config.http.maxBodyBytes,
        timer: overrides.timer ?? systemTimer,
        origin: mcpOriginRule(config.publicBaseUrl, config.mcpAllowedOrigins),
        conditionalReads,
      }),
      ...web.routes,
    ],
    trustProxy: config.http.trustProxy,
    maxBodyBytes: config.http.maxBodyBytes,
    strictTransportSecurity: config.publicBaseUrl.startsWith("https://"),
    onFinished: (request) =>
      metrics.request(
        request.route,
        request.method,
        request.status,
        request.held ? null : request.seconds,
        request.code,
      ),
    onAnswered: (state, finished, response) => {
      if (!config.requestLogEnabled) return;
      const record = requestRecord(state, finished, response, clock.now());
      if (record) requestLog.record(record);
    },
    databaseStarted,
    readTurns: { slots: readTurns, timeoutMs: config.database.connectTimeoutMs },
    pageErrors: web.errors,
    conditionalReads,
  });
  const internalHandler = config.internal
    ? createInternalHandler({
        router: toolsRouter,
        deps,
        token: config.internal.token,
        maxBodyBytes: config.http.maxBodyBytes,
        databaseStarted,
        metrics: () => metrics.response(),
      })
    : null;

  const jobs = periodicJobs(services.rounds, config);

  let closed = false;
  return {
    handler,
    internalHandler,
    databaseReady,
    databaseAttempted: starting.attempted,
    deps,
    config,
    db,
    store,
    keyring,
    logger,
    providers,
    metrics,
    requestLog,
    jobs,
    startJobs: () => startWhenReady(databaseReady, () => startScheduler(jobs, logger, metrics.jobRound)),
    markShuttingDown() {
      shuttingDown = true;
      // Held requests answer now (304), and none is held from here on: the drain does not wait for them.
      waitingRoom.close();
    },
    async close() {
      if (closed) return;
      closed = true;
      starting.stop();
      await partitionsEnsured;
      await requestLog.close();
      databaseClock?.stop();
      metrics.stop();
      await replica?.close();
      waitingRoom.close();
      await changes.close();
      if (!overrides.db) await db.close();
      logger.flush();
    },
  };
}
