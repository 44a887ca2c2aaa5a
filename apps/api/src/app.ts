// The composition root: turns configuration into a running application (the
// database, the providers, the keyring, the logger, the HTTP handler and the
// periodic jobs). main.ts serves it with Deno; tests call it in-process.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { createCookieSealer, generateKeySpec, type Keyring, parseKeyring } from "@sms/crypto";
import { createDatabase, type Database } from "@sms/db";
import {
  type Clock,
  createApiKeyAuthenticator,
  createStore,
  messageBacklog,
  type SmsProvider,
  type Store,
  systemClock,
} from "@sms/domain";
import { createSimulatorProvider } from "@sms/provider-sim";
import { createUbillProvider } from "@sms/provider-ubill";
import type { DestinationStream } from "pino";
import type { AppDeps } from "./deps.ts";
import type { Config } from "./env.ts";
import { docsRoutes } from "./http/docs.ts";
import { createGateway, type Handler } from "./http/gateway.ts";
import { buildOpenApiDocument } from "./http/openapi.ts";
import { periodicJobs } from "./jobs/jobs.ts";
import { type Job, type Scheduler, startScheduler } from "./jobs/scheduler.ts";
import { type AppLogger, createLogger } from "./logger.ts";
import { createMetrics, type Metrics } from "./metrics.ts";
import { generateCookieSecret } from "./pages/claim/claim-cookies.ts";
import { claimPageRoutes } from "./pages/claim/claim-page.ts";
import { identityProvidersFromConfig } from "./pages/claim/identity-providers.ts";
import { dashboardPages } from "./pages/dashboard/dashboard-page.ts";
import { appRouter } from "./router.ts";
import { apiServices } from "./services.ts";

export type App = {
  handler: Handler;
  deps: AppDeps;
  config: Config;
  /** The database and its store (tests and tools reach the rows through these). */
  db: Database;
  store: Store;
  keyring: Keyring;
  logger: AppLogger;
  providers: { test: SmsProvider; live: SmsProvider | null };
  metrics: Metrics;
  /** The periodic jobs this instance runs (status check, recovery, purges). */
  jobs: Job[];
  startJobs(): Scheduler;
  close(): Promise<void>;
};

export type AppOverrides = {
  clock?: Clock;
  logDestination?: DestinationStream;
  /** An already-open database (tests); it is not closed by app.close(). */
  db?: Database;
};

/**
 * The message-encryption keyring. Production must configure it; elsewhere a
 * key is generated once into the data directory (or kept in memory for an
 * in-memory database), with a warning.
 */
async function loadKeyring(config: Config, warn: (msg: string) => void): Promise<Keyring> {
  if (config.messageEncryptionKeys) return parseKeyring(config.messageEncryptionKeys);
  if (config.database.pgliteDataDir === "memory://" || config.nodeEnv === "test") {
    warn("MESSAGE_ENCRYPTION_KEYS is not set: using a throw-away in-memory key (development only)");
    return parseKeyring(generateKeySpec("dev"));
  }
  const file = resolve(dirname(resolve(config.database.pgliteDataDir)), "message-encryption-keys");
  try {
    return parseKeyring((await readFile(file, "utf8")).trim());
  } catch (error) {
    if ((error as { code?: string }).code !== "ENOENT") throw error;
  }
  await mkdir(dirname(file), { recursive: true });
  try {
    // "wx": if another process created the file meanwhile, use its key rather
    // than overwrite it (rows it encrypted would become unreadable).
    await writeFile(file, `${generateKeySpec("dev")}\n`, { mode: 0o600, flag: "wx" });
    warn(
      `MESSAGE_ENCRYPTION_KEYS is not set: generated a development key in ${file} (never do this in production)`,
    );
  } catch (error) {
    if ((error as { code?: string }).code !== "EEXIST") throw error;
  }
  return parseKeyring((await readFile(file, "utf8")).trim());
}

export async function createApp(config: Config, overrides: AppOverrides = {}): Promise<App> {
  const logger = createLogger({ level: config.logLevel, destination: overrides.logDestination });
  const clock = overrides.clock ?? systemClock;
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
  if (!overrides.db) {
    const { applied } = await db.migrate();
    if (applied.length > 0) logger.info({ applied }, "database migrated");
  }
  const store = createStore(db);

  const metrics = createMetrics({
    backlog: () => messageBacklog({ store }, { now: clock.now() }),
    pool: () => db.poolStats(),
  });
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
  const services = apiServices({ store, keyring, clock, logger, providers, brands: ubill, config });

  const deps: AppDeps = {
    services,
    auth: createApiKeyAuthenticator({ store, clock, cacheTtlMs: config.apiKeyCacheTtlMs }),
    clock,
    logger,
    metrics,
    databaseReachable: () => db.ping(),
  };

  // The claim pages and the dashboard share the identity providers, the
  // sign-in callback and the cookie sealer (one secret).
  let cookieSecret = config.claims.cookieSecret;
  if (!cookieSecret) {
    logger.warn(
      {},
      "CLAIM_COOKIE_SECRET is not set: using a throw-away in-memory secret (development only; sign-ins and dashboard sessions do not survive a restart or cross instances)",
    );
    cookieSecret = generateCookieSecret();
  }
  const sealer = await createCookieSealer(cookieSecret);
  const identityProviders = identityProvidersFromConfig(config.claims);
  if (config.dashboard.devSignIn) {
    logger.warn(
      {},
      "development sign-in is on: anyone can sign in to the claim pages and the dashboard as anyone",
    );
  }
  const dashboard = await dashboardPages({
    deps,
    clock,
    logger,
    config,
    sealer,
    providers: identityProviders,
    brandsConfigured: live !== null,
  });

  const document = buildOpenApiDocument(appRouter, config.publicBaseUrl);
  const handler = createGateway({
    router: appRouter,
    deps,
    extraRoutes: [
      ...(await docsRoutes(document)),
      ...(await claimPageRoutes(
        { services: services.claims, clock, logger, config },
        { providers: identityProviders, sealer, dashboard: dashboard.hooks },
      )),
      ...dashboard.routes,
    ],
    trustProxy: config.http.trustProxy,
    maxBodyBytes: config.http.maxBodyBytes,
    onFinished: (request) =>
      metrics.request(request.route, request.method, request.status, request.seconds, request.code),
  });

  const jobs = periodicJobs(services.rounds, config);

  let closed = false;
  return {
    handler,
    deps,
    config,
    db,
    store,
    keyring,
    logger,
    providers,
    metrics,
    jobs,
    startJobs: () => startScheduler(jobs, logger, metrics.jobRound),
    async close() {
      if (closed) return;
      closed = true;
      if (!overrides.db) await db.close();
      logger.flush();
    },
  };
}
