// Start-up time: from process start to the first `/readyz` 200, for a first
// run on embedded PGlite (an empty data directory: initdb and every
// migration), a later run on that directory, and a run on an existing
// PostgreSQL database. On demand only:
//
//   node scripts/bootstrap.mjs bench startup [--runs=5]
import { join } from "node:path";
import { createPostgresTestDatabase } from "@sms/db/testing";
import { DENO_RUN_FLAGS } from "../scripts/deno.mjs";
import { API_DIR, benchArgs, freePort } from "./support.ts";

const args = benchArgs();
const RUNS = Number(args.runs ?? 5);

/** Milliseconds from spawning `main.ts` to its first 200 on /readyz; the process is then stopped. */
async function startOnce(env: Record<string, string>): Promise<number> {
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
      if (performance.now() - started > 120_000) throw new Error("not ready within 120 s");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    child.kill("SIGTERM");
    await child.status;
  }
}

const stats = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    min_ms: Math.round(sorted[0] ?? 0),
    median_ms: Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0),
    max_ms: Math.round(sorted.at(-1) ?? 0),
    runs: sorted.length,
  };
};

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
} finally {
  await database.drop();
}
