// The composition root: turns configuration into a running application (the
// database, the providers, the keyring, the logger, the HTTP handler and the
// periodic jobs). main.ts serves it with Deno; tests call it in-process.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { createDatabase, type Database } from "@sms/db";
import { generateKeySpec, parseKeyring, type Keyring } from "@sms/crypto";
import { type Clock, createApiKeyAuthenticator, systemClock } from "@sms/domain";
import { createSimulatorProvider } from "@sms/provider-sim";
import { createUbillProvider } from "@sms/provider-ubill";
import type { DestinationStream } from "pino";
import type { AppDeps } from "./deps.ts";
import type { Env } from "./env.ts";
import { parseTrustProxy } from "./http/client-address.ts";
import { docsRoutes } from "./http/docs.ts";
import { createGateway, type Handler } from "./http/gateway.ts";
import { buildOpenApiDocument } from "./http/openapi.ts";
import { periodicJobs } from "./jobs/jobs.ts";
import { type Job, type Scheduler, startScheduler } from "./jobs/scheduler.ts";
import { createLogger } from "./logger.ts";
import { claimPageRoutes } from "./pages/claim/claim-page.ts";
import { appRouter } from "./router.ts";

export type App = {
  handler: Handler;
  deps: AppDeps;
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
async function loadKeyring(env: Env, warn: (msg: string) => void): Promise<Keyring> {
  if (env.MESSAGE_ENCRYPTION_KEYS) return parseKeyring(env.MESSAGE_ENCRYPTION_KEYS);
  if (env.PGLITE_DATA_DIR === "memory://" || env.NODE_ENV === "test") {
    warn("MESSAGE_ENCRYPTION_KEYS is not set: using a throw-away in-memory key (development only)");
    return parseKeyring(generateKeySpec("dev"));
  }
  const file = resolve(dirname(resolve(env.PGLITE_DATA_DIR)), "message-encryption-keys");
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

export async function createApp(env: Env, overrides: AppOverrides = {}): Promise<App> {
  const logger = createLogger({ level: env.LOG_LEVEL, destination: overrides.logDestination });
  const clock = overrides.clock ?? systemClock;
  const keyring = await loadKeyring(env, (msg) => logger.warn({}, msg));

  const db =
    overrides.db ??
    (await createDatabase({
      databaseUrl: env.DATABASE_URL,
      pgliteDataDir: env.PGLITE_DATA_DIR,
      poolSize: env.DATABASE_POOL_SIZE,
      logger,
    }));
  if (!overrides.db) {
    const { applied } = await db.migrate();
    if (applied.length > 0) logger.info({ applied }, "database migrated");
  }

  const live =
    env.UBILL_BASE_URL && env.UBILL_API_KEY && env.UBILL_DEFAULT_BRAND_ID
      ? createUbillProvider({
          baseUrl: env.UBILL_BASE_URL,
          apiKey: env.UBILL_API_KEY,
          defaultBrandId: env.UBILL_DEFAULT_BRAND_ID,
          submitTimeoutMs: env.UBILL_SUBMIT_TIMEOUT_MS,
          statusTimeoutMs: env.UBILL_STATUS_TIMEOUT_MS,
          logger,
        })
      : null;

  if (!live) {
    logger.warn({}, "UBILL_* is not configured: live keys answer 503 provider_unavailable (test keys are unaffected)");
  }

  const deps: AppDeps = {
    env,
    db,
    prisma: db.prisma,
    clock,
    logger,
    keyring,
    providers: {
      test: createSimulatorProvider({ clock, deliveryDelayMs: env.SIMULATOR_DELIVERY_DELAY_MS }),
      live,
    },
    auth: createApiKeyAuthenticator({ prisma: db.prisma, clock, cacheTtlMs: env.API_KEY_CACHE_TTL_MS }),
  };

  const document = buildOpenApiDocument(appRouter, env.PUBLIC_BASE_URL);
  const handler = createGateway({
    router: appRouter,
    deps,
    extraRoutes: [...(await docsRoutes(document)), ...(await claimPageRoutes(deps))],
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    maxBodyBytes: env.MAX_BODY_BYTES,
  });

  const jobs = periodicJobs(deps);

  let closed = false;
  return {
    handler,
    deps,
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
