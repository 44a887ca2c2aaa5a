// The Deno entry point: `deno run … apps/api/src/main.ts [--role=api|worker]`.
//   api (default)  serves HTTP on PORT, and runs the periodic jobs unless JOBS_ENABLED=false
//   worker         runs only the periodic jobs
// SIGTERM/SIGINT: stop accepting, finish in-flight requests, stop the jobs,
// close the database.
import process from "node:process";
import { createApp } from "./app.ts";
import { type Config, ConfigError, parseEnv } from "./env.ts";

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

const role = process.argv.find((arg) => arg.startsWith("--role="))?.slice("--role=".length) ?? "api";
if (role !== "api" && role !== "worker") fail(`Unknown --role=${role}: use api or worker`);

let config: Config;
try {
  config = parseEnv(process.env);
} catch (error) {
  fail(error instanceof ConfigError ? error.message : `Invalid configuration: ${(error as Error).message}`);
}

const app = await createApp(config).catch((error: Error) =>
  fail(`Start-up failed: ${error.name}: ${error.message.split("\n")[0]}`),
);
const log = app.deps.logger;

const jobs = role === "worker" || config.jobsEnabled ? app.startJobs() : null;

const shutdownController = new AbortController();
const server =
  role === "api"
    ? Deno.serve(
        {
          port: config.port,
          hostname: config.host,
          signal: shutdownController.signal,
          onListen: ({ hostname, port }) =>
            log.info(
              { hostname, port, role, database: app.db.kind },
              `listening on http://${hostname}:${port}`,
            ),
        },
        (request, info) =>
          app.handler(request, {
            remoteAddress: info.remoteAddr.transport === "tcp" ? info.remoteAddr.hostname : "127.0.0.1",
          }),
      )
    : null;
if (!server) log.info({ role, database: app.db.kind }, "worker started");

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, "shutting down");
  if (server) {
    await server.shutdown();
  }
  await jobs?.stop();
  await app.close();
  log.info({}, "stopped");
  log.flush();
  setTimeout(() => process.exit(0), 50);
}

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.addSignalListener(signal, () => void shutdown(signal));
}
