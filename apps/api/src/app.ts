// The composition root: turns configuration into a running application (the
// database, the providers, the keyring, the logger, the HTTP handler and the
// periodic jobs). main.ts serves it with Deno; tests call it in-process.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { generateKeySpec, type Keyring, parseKeyring } from "@sms/crypto";
import { createDatabase, type Database } from "@sms/db";
import {
  type Clock,
  createApiKeyAuthenticator,
  createStore,
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
import { claimPageRoutes } from "./pages/claim/claim-page.ts";
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

  const live = config.ubill ? createUbillProvider({ ...config.ubill, logger }) : null;
  if (!live) {
    logger.warn(
      {},
      "UBILL_* is not configured: live keys answer 503 provider_unavailable (test keys are unaffected)",
    );
  }
  const providers = {
    test: createSimulatorProvider({ clock, deliveryDelayMs: config.messages.simulatorDelayMs }),
    live,
  };
  const services = apiServices({ store, keyring, clock, logger, providers, config });

  const deps: AppDeps = {
    services,
    auth: createApiKeyAuthenticator({ store, clock, cacheTtlMs: config.apiKeyCacheTtlMs }),
    clock,
    logger,
    databaseReachable: () => db.ping(),
  };

  const document = buildOpenApiDocument(appRouter, config.publicBaseUrl);
  const handler = createGateway({
    router: appRouter,
    deps,
    extraRoutes: [
      ...(await docsRoutes(document)),
      ...(await claimPageRoutes({ services: services.claims, clock, logger, config })),
    ],
    trustProxy: config.http.trustProxy,
    maxBodyBytes: config.http.maxBodyBytes,
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
    jobs,
    startJobs: () => startScheduler(jobs, logger),
    async close() {
      if (closed) return;
      closed = true;
      if (!overrides.db) await db.close();
      logger.flush();
    },
  };
}
