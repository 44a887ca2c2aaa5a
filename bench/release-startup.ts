// The release's start-up: from spawning `bin/sms-api` (unpacked from
// dist/sms-api-<version>-linux-x64.tar.gz into an empty directory) to its
// first `/readyz` 200, on a database that already holds data: migrated, one
// project and --messages sent messages. On PGlite (its data directory) and on
// PostgreSQL (a new database), each --runs times with the module cache of the
// previous start (a restart), then --runs times with an empty one (a new
// DENO_DIR: the first start of a newly unpacked release). --checkout also
// starts the checkout's apps/api/src/main.ts the same way on the same data,
// alternating with the release's restarts (what the release itself adds). On demand only:
//
//   npm run release && node scripts/bootstrap.mjs bench release-startup [--runs=5] [--messages=2000] [--checkout]
import { join } from "node:path";
import { createPostgresTestDatabase } from "@sms/db/testing";
import { DENO_RUN_FLAGS } from "../scripts/deno.mjs";
import { API_DIR, API_ENV, benchArgs, freePort, median, ROOT } from "./support.ts";

const args = benchArgs();
const RUNS = Number(args.runs ?? 5);
const MESSAGES = Number(args.messages ?? 2000);
const CHECKOUT = args.checkout === "true";

const { version } = JSON.parse(await Deno.readTextFile(join(ROOT, "apps", "api", "package.json")));
const tarball = args.tarball ?? join(ROOT, "dist", `sms-api-${version}-linux-x64.tar.gz`);
const work = await Deno.makeTempDir({ prefix: "sms-release-startup-" });
const release = join(work, "sms-api");
await Deno.mkdir(release);
const untar = await new Deno.Command("tar", { args: ["-xzf", tarball, "-C", release] }).output();
if (!untar.success) throw new Error(`cannot unpack ${tarball} (run npm run release first)`);

type Started = { port: number; ms: number | null; stop(): Promise<void> };

/** bin/sms-api with `env` alone; resolves once /readyz is 200 (ms from the spawn), or null after 120 s. */
async function start(
  env: Record<string, string>,
  from: "release" | "checkout" = "release",
): Promise<Started> {
  const port = freePort();
  const began = performance.now();
  const [command, commandArgs, cwd] =
    from === "release"
      ? [join(release, "bin", "sms-api"), [], work]
      : [Deno.execPath(), ["run", ...DENO_RUN_FLAGS, "src/main.ts"], API_DIR];
  const child = new Deno.Command(command, {
    args: commandArgs,
    cwd,
    clearEnv: true,
    env: {
      PATH: "/nonexistent",
      HOST: "127.0.0.1",
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      LOG_LEVEL: "warn",
      JOBS_ENABLED: "false",
      ...env,
    },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const stop = async () => {
    child.kill("SIGTERM");
    await child.status;
  };
  for (;;) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/readyz`);
      await response.body?.cancel();
      if (response.status === 200) return { port, ms: performance.now() - began, stop };
    } catch {
      // not listening yet
    }
    if (performance.now() - began > 120_000) return { port, ms: null, stop };
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A first start (it migrates), a test key and MESSAGES sends, 16 at a time, then stopped. */
async function seed(env: Record<string, string>): Promise<number> {
  const server = await start({
    ...env,
    MESSAGES_PER_MINUTE: "100000000",
    RECIPIENT_MESSAGES_PER_MINUTE: "100000000",
  });
  try {
    if (server.ms === null) throw new Error("the seeding start was not ready within 120 s");
    const base = `http://127.0.0.1:${server.port}`;
    const key = (await (await fetch(`${base}/v1/test-keys`, { method: "POST" })).json()) as {
      api_key: string;
    };
    let sent = 0;
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < MESSAGES) {
          const n = next++;
          const response = await fetch(`${base}/v1/messages`, {
            method: "POST",
            headers: {
              Authorization: `Bearer ${key.api_key}`,
              "Content-Type": "application/json",
              "Idempotency-Key": crypto.randomUUID(),
            },
            body: JSON.stringify({
              to: `+99555${String(1_000_000 + n).slice(-7)}`,
              template: "verification_code",
              variables: { code: "482913" },
              locale: "en",
            }),
          });
          await response.body?.cancel();
          if (response.status === 201) sent++;
        }
      }),
    );
    return sent;
  } finally {
    await server.stop();
  }
}

const summary = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    median_ms: Math.round(median(sorted)),
    min_ms: Math.round(sorted[0] ?? 0),
    max_ms: Math.round(sorted.at(-1) ?? 0),
    runs: sorted.length,
  };
};

async function measure(scenario: string, env: Record<string, string>) {
  const sent = await seed(env);
  const warm: number[] = [];
  const checkout: number[] = [];
  const cold: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    for (const from of CHECKOUT ? (["release", "checkout"] as const) : (["release"] as const)) {
      const server = await start(env, from);
      await server.stop();
      if (server.ms === null) throw new Error(`${scenario}: ${from} not ready within 120 s`);
      (from === "release" ? warm : checkout).push(server.ms);
    }
  }
  for (let run = 0; run < RUNS; run++) {
    const denoDir = await Deno.makeTempDir({ prefix: "sms-release-deno-dir-" });
    try {
      const server = await start({ ...env, DENO_DIR: denoDir });
      await server.stop();
      if (server.ms === null) throw new Error(`${scenario}: not ready within 120 s (empty module cache)`);
      cold.push(server.ms);
    } finally {
      await Deno.remove(denoDir, { recursive: true });
    }
  }
  console.log(
    JSON.stringify({
      scenario,
      messages: sent,
      restart: summary(warm),
      empty_module_cache: summary(cold),
      ...(CHECKOUT ? { checkout_restart: summary(checkout) } : {}),
    }),
  );
}

try {
  await measure("release_pglite", { HOME: work, PGLITE_DATA_DIR: join(work, "pglite") });
  const database = await createPostgresTestDatabase({ migrate: false });
  try {
    await measure("release_postgres", { ...API_ENV, HOME: work, DATABASE_URL: database.databaseUrl });
  } finally {
    await database.drop();
  }
} finally {
  await Deno.remove(work, { recursive: true });
}
