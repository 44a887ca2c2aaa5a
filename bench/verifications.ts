// Benchmark of the verification check path (issue 22): POST
// /v1/verifications/{id}/check with wrong codes (the path that writes: a row
// lock, the keyed-hash comparison, one UPDATE, in one transaction), through
// the real Deno server on PostgreSQL, against a raw single-statement
// baseline: one `UPDATE verifications SET attempts_remaining = … RETURNING`
// per check, sent straight to PostgreSQL with pg (no HTTP, no hashing, no
// lock round trip): the least a counted check can cost in the database, a
// ceiling rather than an alternative. On demand only, never in CI:
//
//   node scripts/bootstrap.mjs bench verifications [--verifications=500] [--connections=16] [--pool=10]
//
// It starts `--verifications` verifications with a test key (distinct
// numbers, so none replaces another), then checks each of them four times
// with a wrong code (every check counted, none ends it), measuring
// throughput and latency; then the same number of checks as single
// statements on a second set. The machine is shared: keep runs short.
import { createPostgresTestDatabase } from "@sms/db/testing";
import pg from "pg";
import { benchArgs, type ServerProcess, startApi } from "./support.ts";

const args = benchArgs();
const COUNT = Number(args.verifications ?? 500);
const CONNECTIONS = Number(args.connections ?? 16);
const POOL = Number(args.pool ?? 10);
const CHECKS_EACH = 4;

type Run = {
  checks: number;
  seconds: number;
  per_s: number;
  latency_ms: { p50: number; p90: number; p99: number; max: number };
};

function summary(latencies: number[], seconds: number): Run {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) =>
    Math.round((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) * 100) / 100;
  return {
    checks: latencies.length,
    seconds: Math.round(seconds * 100) / 100,
    per_s: Math.round(latencies.length / seconds),
    latency_ms: { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1) },
  };
}

/** Runs `work(i)` for i in [0, total) on `connections` concurrent lanes; per-call latencies. */
async function drive(total: number, connections: number, work: (i: number) => Promise<void>): Promise<Run> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      for (let i = next++; i < total; i = next++) {
        const t0 = performance.now();
        await work(i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return summary(latencies, (performance.now() - started) / 1000);
}

async function startMany(server: ServerProcess, apiKey: string, offset: number): Promise<string[]> {
  const ids: string[] = new Array(COUNT);
  await drive(COUNT, 8, async (i) => {
    const response = await fetch(`${server.baseUrl}/v1/verifications`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${apiKey}`,
        "Content-Type": "application/json",
        "Idempotency-Key": `bench-${offset}-${i}`,
      },
      body: JSON.stringify({ to: `+9955${String(50_000_000 + offset + i)}` }),
    });
    if (response.status !== 201) throw new Error(`start ${i}: ${response.status} ${await response.text()}`);
    ids[i] = ((await response.json()) as { id: string }).id;
  });
  return ids;
}

const database = await createPostgresTestDatabase();
let server: ServerProcess | undefined;
const pool = new pg.Pool({ connectionString: database.databaseUrl, max: POOL });
try {
  server = await startApi({
    env: {
      DATABASE_URL: database.databaseUrl,
      DATABASE_POOL_SIZE: String(POOL),
      LOG_LEVEL: "warn",
      MESSAGES_PER_MINUTE: "100000000",
      VERIFICATION_CHECKS_PER_MINUTE: "100000000",
      VERIFICATION_CHECKS_PER_ADDRESS_PER_MINUTE: "100000000",
      TEST_KEYS_PER_MINUTE: "1000",
      JOBS_ENABLED: "false",
    },
  });
  const key = await fetch(`${server.baseUrl}/v1/test-keys`, { method: "POST" });
  if (key.status !== 201) throw new Error(`creating a test key failed: ${key.status}`);
  const { api_key: apiKey, project_id: projectId } = (await key.json()) as {
    api_key: string;
    project_id: string;
  };

  // The service: HTTP, authentication, validation, the transaction (lock, HMAC, UPDATE), the answer.
  const ids = await startMany(server, apiKey, 0);
  const service = await drive(COUNT * CHECKS_EACH, CONNECTIONS, async (i) => {
    const id = ids[i % COUNT] as string;
    const response = await fetch(`${server!.baseUrl}/v1/verifications/${id}/check`, {
      method: "POST",
      headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
      body: '{"code":"99999999"}',
    });
    const body = (await response.json()) as { status?: string };
    if (response.status !== 200 || body.status !== "pending") throw new Error(`check: ${response.status}`);
  });

  // The raw baseline: one statement per counted check, straight to PostgreSQL.
  const rawIds = await startMany(server, apiKey, COUNT);
  const raw = await drive(COUNT * CHECKS_EACH, CONNECTIONS, async (i) => {
    const { rows } = await pool.query({
      name: "raw_check",
      text: `UPDATE verifications SET attempts_remaining = attempts_remaining - 1, updated_at = now()
             WHERE id = $1 AND project_id = $2 AND status = 'pending' AND attempts_remaining > 1
             RETURNING id, status, attempts_remaining`,
      values: [rawIds[i % COUNT], projectId],
    });
    if (rows.length !== 1) throw new Error("raw check found no row");
  });

  const counted = await pool.query(
    "SELECT count(*)::int AS n FROM verifications WHERE attempts_remaining = 1 AND status = 'pending'",
  );
  console.log(
    JSON.stringify(
      {
        verifications: COUNT,
        checks_each: CHECKS_EACH,
        connections: CONNECTIONS,
        pool: POOL,
        service,
        raw_single_statement: raw,
        ratio_per_s: Math.round((service.per_s / raw.per_s) * 100) / 100,
        rows_with_four_counted_checks: counted.rows[0].n,
      },
      null,
      2,
    ),
  );
} finally {
  await pool.end();
  await server?.stop();
  await database.drop();
}
