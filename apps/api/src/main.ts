// The Deno entry point: `deno run … apps/api/src/main.ts [--role=api|worker]`.
//   api (default)  serves HTTP on PORT (and the internal listener on
//                  INTERNAL_PORT when set; in development PORT + 1 by
//                  default, config/), and runs the periodic jobs unless
//                  JOBS_ENABLED=false
//   worker         runs only the periodic jobs (and the internal listener, for
//                  /metrics, when INTERNAL_PORT is set)
// The listeners start after the first attempt to reach the database (3 s at
// most), whether or not it answered (app.ts); the jobs start once it does.
// SIGTERM/SIGINT: stop the jobs at once (a running round finishes); answer
// /readyz with 503 and, behind a load balancer, keep serving for
// SHUTDOWN_READINESS_DELAY_SECONDS (default 0) so its health check takes the
// instance out first; then stop accepting, finish in-flight requests, close
// the database and exit 0. What is still open SHUTDOWN_TIMEOUT_SECONDS after
// that is closed and the process exits 1. A second signal does that at once.
import process from "node:process";
import { parseKeyring } from "@sms/crypto";
import { createApp } from "./app.ts";
import { type Config, ConfigError, parseEnv } from "./config/index.ts";
import { generateInternalToken, readOrCreateDevelopmentFile } from "./development-files.ts";
import { type HttpServer, INTERNAL_MAX_CONNECTIONS, serveHttp } from "./http/server.ts";
import { startSummary } from "./start-summary.ts";

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

const role = process.argv.find((arg) => arg.startsWith("--role="))?.slice("--role=".length) ?? "api";
if (role !== "api" && role !== "worker") fail(`Unknown --role=${role}: use api or worker`);

let config: Config;
try {
  // Development, the API role: the internal listener on PORT + 1 by default, its token read from (or
  // generated into) .data/internal-token. A worker beside it keeps the explicit settings (no second
  // listener on the same port).
  config = parseEnv(
    process.env,
    role === "api"
      ? { developmentToken: (file) => readOrCreateDevelopmentFile(file, generateInternalToken).value }
      : {},
  );
} catch (error) {
  fail(error instanceof ConfigError ? error.message : `Invalid configuration: ${(error as Error).message}`);
}
/** Start-up failed: one line naming the error, then exit. */
const startupFailed = (error: Error) =>
  fail(`Start-up failed: ${error.name}: ${error.message.split("\n")[0]}`);

// A keyring that cannot be read is refused before the summary, in its one line: the summary promises a
// service that is starting.
if (config.messageEncryptionKeys) {
  try {
    parseKeyring(config.messageEncryptionKeys);
  } catch (error) {
    startupFailed(error as Error);
  }
}
// Development only: a few human lines before the JSON ones (start-summary.ts).
for (const line of startSummary(config, role)) console.error(line);

const app = await createApp(config).catch(startupFailed);
const log = app.deps.logger;
let stopping = false;
let forced = false;
app.databaseReady.catch((error: Error) => {
  if (stopping) return;
  log.flush();
  startupFailed(error);
});

const jobs = role === "worker" || config.jobsEnabled ? app.startJobs() : null;
const servers: HttpServer[] = [];
// From here on a signal shuts down (the functions below are hoisted).
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.addSignalListener(signal, () => void shutdown(signal));
}

// Listen once the first attempt to reach the database is over (normally: the
// database is migrated and nobody sees a "not reached yet" answer), but after
// a few seconds at most: /healthz must answer while the database is down.
await Promise.race([app.databaseAttempted, new Promise((resolve) => setTimeout(resolve, 3000))]);

const timeouts = {
  headersTimeoutMs: config.http.headersTimeoutMs,
  bodyTimeoutMs: config.http.bodyTimeoutMs,
  bodyReadTimeoutMs: config.http.bodyReadTimeoutMs,
  bodyMinBytesPerSecond: config.http.bodyMinBytesPerSecond,
  idleTimeoutMs: config.http.idleTimeoutMs,
};
if (stopping) {
  // A signal came while the database was being reached: shutdown() ends the process.
} else if (role === "api") {
  const maxConnections = config.http.maxConnections;
  let server: HttpServer;
  try {
    server = serveHttp({
      name: "public",
      hostname: config.host,
      port: config.port,
      handler: app.handler,
      maxConnections,
      maxConnectionsPerPeer: config.http.maxConnectionsPerPeer,
      maxUnfinishedBodiesPerPeer: config.http.maxUnfinishedBodiesPerPeer,
      logger: log,
      ...timeouts,
    });
  } catch (error) {
    fail(`Cannot listen on ${config.host}:${config.port}: ${(error as Error).message}`);
  }
  servers.push(server);
  const { hostname, port } = server.addr;
  // Who can reach it: outside production the default is loopback only (the development sign-in lets anyone sign in as anyone).
  const reach = config.hostConfigured
    ? `HOST=${config.host}`
    : `${config.host} by default${config.nodeEnv === "production" ? "" : ": loopback only; set HOST (e.g. HOST=0.0.0.0) to open it"}`;
  log.info(
    {
      hostname,
      port,
      role,
      database: app.db.kind,
      max_connections: maxConnections,
      max_connections_per_peer: config.http.maxConnectionsPerPeer,
    },
    `listening on http://${hostname}:${port} (${reach})`,
  );
} else {
  log.info({ role, database: app.db.kind }, "worker started");
}
// Both roles: a worker's internal listener serves /metrics (its job rounds).
if (!stopping && config.internal && app.internalHandler) {
  let internal: HttpServer;
  try {
    internal = serveHttp({
      name: "internal",
      hostname: config.internal.host,
      port: config.internal.port,
      handler: app.internalHandler,
      maxConnections: INTERNAL_MAX_CONNECTIONS,
      maxConnectionsPerPeer: INTERNAL_MAX_CONNECTIONS,
      maxUnfinishedBodiesPerPeer: INTERNAL_MAX_CONNECTIONS,
      logger: log,
      ...timeouts,
    });
  } catch (error) {
    fail(`Cannot listen on ${config.internal.host}:${config.internal.port}: ${(error as Error).message}`);
  }
  servers.push(internal);
  log.info(
    { hostname: internal.addr.hostname, port: internal.addr.port },
    `internal listener on http://${internal.addr.hostname}:${internal.addr.port}`,
  );
}

function exit(code: number) {
  log.flush();
  setTimeout(() => process.exit(code), 50);
}

/** The deadline (or a second signal): close whatever is still open and exit 1. */
async function forceExit(reason: string) {
  if (forced) return;
  forced = true;
  const closed = servers.reduce((count, server) => count + server.closeAll(), 0);
  log.warn(
    { reason, connections_closed: closed, timeout_ms: config.shutdownTimeoutMs },
    "shutdown deadline reached: closing what remains",
  );
  // The database gets one more second; a statement stuck on it must not hold the exit.
  await Promise.race([app.close().catch(() => {}), new Promise((resolve) => setTimeout(resolve, 1000))]);
  log.info({ forced: true }, "stopped");
  exit(1);
}

async function shutdown(signal: string) {
  if (stopping) {
    void forceExit(`second ${signal}`);
    return;
  }
  stopping = true;
  app.markShuttingDown();
  const delayMs = role === "api" ? config.shutdownReadinessDelayMs : 0;
  log.info({ signal, timeout_ms: config.shutdownTimeoutMs, readiness_delay_ms: delayMs }, "shutting down");
  // No new job round from now on.
  const jobsStopped = jobs?.stop();
  // Behind a load balancer: /readyz answers 503 while everything is still
  // served, until its health check has taken this instance out; only then does
  // the listener close (a second signal cuts this short, as it does the drain).
  if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
  if (forced) return;
  const deadline = setTimeout(() => void forceExit("deadline"), config.shutdownTimeoutMs);
  // No new connection; in-flight requests finish.
  await Promise.all([jobsStopped, ...servers.map((server) => server.drain())]);
  if (forced) return;
  await app.close();
  if (forced) return;
  clearTimeout(deadline);
  log.info({}, "stopped");
  exit(0);
}
