// Start-up time: from process start to the first `/readyz` 200, for a first
// run on embedded PGlite (an empty data directory: initdb and every
// migration), a later run on that directory, and a run on an existing
// PostgreSQL database; then --cold-runs starts on that database, each with an
// empty module cache (a new DENO_DIR: a new checkout or container), counting
// those not ready within --cold-deadline-ms (the require(esm) hang,
// docs/operations.md "Start-up"). On demand only:
//
//   node scripts/bootstrap.mjs bench startup [--runs=5] [--cold-runs=10] [--cold-deadline-ms=20000]
import { join } from "node:path";
import { createPostgresTestDatabase } from "@sms/db/testing";
import { DENO_RUN_FLAGS } from "../scripts/deno.mjs";
import { API_DIR, benchArgs, freePort, msStats } from "./support.ts";

const args = benchArgs();
const RUNS = Number(args.runs ?? 5);
const COLD_RUNS = Number(args["cold-runs"] ?? 10);
const COLD_DEADLINE_MS = Number(args["cold-deadline-ms"] ?? 20_000);

/**
 * Milliseconds from spawning `main.ts` to its first 200 on /readyz, or null when not ready within
 * `deadlineMs`; the process is then stopped.
 */
async function readyWithin(env: Record<string, string>, deadlineMs: number): Promise<number | null> {
  const port = freePort();
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...DENO_RUN_FLAGS, "src/main.ts"],
    cwd: API_DIR,
    env: { PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn", JOBS_ENABLED: "false", ...env },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    for (;;) {
      try {
        const response = await fetch(`http://127.0.0.1:${port}/readyz`);
        await response.body?.cancel();
        if (response.status === 200) return performance.now() - started;
      } catch {
        // not listening yet
      }
      if (performance.now() - started > deadlineMs) return null;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    child.kill("SIGTERM");
    await child.status;
  }
}

/** readyWithin's milliseconds for a start that must succeed (within 120 s). */
async function startOnce(env: Record<string, string>): Promise<number> {
  const ms = await readyWithin(env, 120_000);
  if (ms === null) throw new Error("not ready within 120 s");
  return ms;
}

const stats = msStats;

const first: number[] = [];
const later: number[] = [];
for (let run = 0; run < RUNS; run++) {
  const dir = await Deno.makeTempDir({ prefix: "sms-startup-" });
  const env = { PGLITE_DATA_DIR: join(dir, "pglite") };
  try {
    first.push(await startOnce(env));
    later.push(await startOnce(env));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
console.log(JSON.stringify({ scenario: "pglite_first_run", ...stats(first) }));
console.log(JSON.stringify({ scenario: "pglite_existing", ...stats(later) }));

const database = await createPostgresTestDatabase();
try {
  const postgres: number[] = [];
  await startOnce({ DATABASE_URL: database.databaseUrl }); // migrates once
  for (let run = 0; run < RUNS; run++) postgres.push(await startOnce({ DATABASE_URL: database.databaseUrl }));
  console.log(JSON.stringify({ scenario: "postgres_existing", ...stats(postgres) }));
  const cold: number[] = [];
  let notReady = 0;
  for (let run = 0; run < COLD_RUNS; run++) {
    const denoDir = await Deno.makeTempDir({ prefix: "sms-startup-deno-dir-" });
    try {
      const ms = await readyWithin(
        { DATABASE_URL: database.databaseUrl, DENO_DIR: denoDir },
        COLD_DEADLINE_MS,
      );
      if (ms === null) notReady++;
      else cold.push(ms);
    } finally {
      await Deno.remove(denoDir, { recursive: true });
    }
  }
  console.log(
    JSON.stringify({
      scenario: "postgres_cold_module_cache",
      not_ready_within_deadline: notReady,
      deadline_ms: COLD_DEADLINE_MS,
      ...stats(cold),
    }),
  );
} finally {
  await database.drop();
}
