// The restore drill's phases, timed (bench/README.md "Backup and restore"):
// a pgBackRest-archived PostgreSQL cluster of its own (@sms/db/testing
// startArchivedPostgres, configured from deploy/pgbackrest/) with the service
// on it and --messages sends in it; then per run: a full backup, a
// differential one after a few more sends, a point-in-time restore into a new
// cluster (pgbackrest restore --type=time, then the cluster's start until it
// has promoted: restore_files and restore_recovery apart), and the service
// started on the restored cluster until /readyz answers 200. Each run checks
// that the restored service reads a message sent before the target. On
// demand only:
//
//   node scripts/bootstrap.mjs bench backup-restore [--runs=5] [--messages=2000]
import { startArchivedPostgres } from "@sms/db/testing";
import { DENO_RUN_FLAGS } from "../scripts/deno.mjs";
import { API_DIR, API_ENV, benchArgs, freePort, sleep, startApi, msStats, sendCode } from "./support.ts";

const args = benchArgs();
const RUNS = Number(args.runs ?? 5);
const MESSAGES = Number(args.messages ?? 2000);
const CONCURRENCY = 16;
const SERVICE_ENV = {
  JOBS_ENABLED: "false",
  MESSAGES_PER_MINUTE: "100000000",
  RECIPIENT_MESSAGES_PER_MINUTE: "100000000",
  RECIPIENT_MESSAGES_PER_DAY: "100000000",
  LOG_LEVEL: "warn",
};

type Service = { baseUrl: string; stop(): Promise<void> };

/** The service on `databaseUrl`: milliseconds from spawning it to its first /readyz 200 (polled every 10 ms). */
async function startTimed(databaseUrl: string): Promise<{ ms: number; service: Service }> {
  const port = freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...DENO_RUN_FLAGS, "src/main.ts"],
    cwd: API_DIR,
    env: { ...API_ENV, ...SERVICE_ENV, PORT: String(port), DATABASE_URL: databaseUrl },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const service = {
    baseUrl,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
    },
  };
  for (;;) {
    const ok = await fetch(`${baseUrl}/readyz`).then(
      async (response) => {
        await response.body?.cancel();
        return response.status === 200;
      },
      () => false,
    );
    if (ok) return { ms: performance.now() - started, service };
    if (performance.now() - started > 120_000) {
      await service.stop();
      throw new Error("the service on the restored cluster was not ready within 120 s");
    }
    await sleep(10);
  }
}

async function send(baseUrl: string, apiKey: string, i: number): Promise<string> {
  const response = await sendCode(baseUrl, apiKey, `+99555${String(i % 10_000_000).padStart(7, "0")}`);
  const json = (await response.json()) as { id: string };
  if (response.status !== 201) throw new Error(`send: ${response.status} ${JSON.stringify(json)}`);
  return json.id;
}

async function sendMany(baseUrl: string, apiKey: string, count: number, from: number): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, count) }, async () => {
      for (let i = next++; i < count; i = next++) ids.push(await send(baseUrl, apiKey, from + i));
    }),
  );
  return ids;
}

const stats = msStats;

const timed = async <T>(work: () => Promise<T>): Promise<[number, T]> => {
  const started = performance.now();
  const result = await work();
  return [performance.now() - started, result];
};

const archived = await startArchivedPostgres();
const phases = {
  full_backup: [] as number[],
  diff_backup: [] as number[],
  restore: [] as number[],
  restore_files: [] as number[],
  restore_recovery: [] as number[],
};
const serviceStart: number[] = [];
const sizes = { full: [] as number[], diff: [] as number[] };
try {
  const api = await startApi({ env: { ...SERVICE_ENV, DATABASE_URL: archived.url }, name: "the service" });
  try {
    const key = await fetch(`${api.baseUrl}/v1/test-keys`, { method: "POST" });
    const { api_key: apiKey } = (await key.json()) as { api_key: string };
    let sent = 0;
    await sendMany(api.baseUrl, apiKey, MESSAGES, sent);
    sent += MESSAGES;
    for (let run = 0; run < RUNS; run++) {
      const [fullMs, full] = await timed(() => archived.backup("full"));
      phases.full_backup.push(fullMs);
      const [known] = await sendMany(api.baseUrl, apiKey, 20, sent);
      sent += 20;
      const [diffMs, diff] = await timed(() => archived.backup("diff"));
      phases.diff_backup.push(diffMs);
      sizes.full.push(full.sizeBytes);
      sizes.diff.push(diff.deltaBytes);
      // A point-in-time target after the backup's stop time (whole seconds in pgBackRest's records):
      // the restore starts from the differential backup and replays the WAL archived since.
      while (Date.now() < diff.stoppedAt.getTime() + 1_500) await sleep(100);
      const target = await archived.serverTime();
      await sendMany(api.baseUrl, apiKey, 5, sent);
      sent += 5;
      await archived.archiveCurrentWal();
      const [restoreMs, restored] = await timed(() => archived.restoreToTime(target));
      phases.restore.push(restoreMs);
      phases.restore_files.push(restored.timings.restoreMs);
      phases.restore_recovery.push(restored.timings.recoveryMs);
      try {
        const { ms, service } = await startTimed(restored.url);
        serviceStart.push(ms);
        try {
          const read = await fetch(`${service.baseUrl}/v1/messages/${known}`, {
            headers: { Authorization: `Bearer ${apiKey}` },
          });
          await read.body?.cancel();
          if (read.status !== 200)
            throw new Error(`the restored service answered ${read.status} for ${known}`);
        } finally {
          await service.stop();
        }
      } finally {
        await restored.stop();
      }
    }
    console.log(
      JSON.stringify({
        messages: sent,
        database_mb: Math.round((sizes.full.at(-1) ?? 0) / 1e5) / 10,
        diff_copied_mb: Math.round((sizes.diff.at(-1) ?? 0) / 1e5) / 10,
      }),
    );
  } finally {
    await api.stop();
  }
  for (const [phase, values] of Object.entries(phases))
    console.log(JSON.stringify({ phase, ...stats(values) }));
  console.log(JSON.stringify({ phase: "service_start_to_readyz", ...stats(serviceStart) }));
} finally {
  await archived.stop();
}
