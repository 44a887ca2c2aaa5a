// Waiting reads against polling (issue 54, item 4): N callers each waiting for
// one change of "their" resource, through the real Deno server on PostgreSQL.
// On demand only, never in CI:
//
//   node scripts/bootstrap.mjs bench wait [--callers=1000] [--spread=60] [--pool=10] [--scenarios=wait,poll]
//
// The resource is a verification (a wrong code is a change made at a moment
// the bench chooses, through the API, as another instance's would be). Each
// scenario starts N verifications, then the N callers at once:
//
//   wait   the first read after 2 s (spec 6), then `If-None-Match` with
//          `Prefer: wait=25` until the answer is the changed state;
//   poll   spec 6's schedule: reads at 2, 6, 14, 30, 60, 90 … s.
//
// Caller i's verification is changed (one wrong code) at a moment drawn
// uniformly in [3, 3 + spread] s after the start, the same draws in both
// scenarios. The wake-up is the time from the check's answer (its transaction
// committed) to the caller's answer showing the change. The database's
// statements come from pg_stat_database (xact_commit + xact_rollback of the
// bench's database: a read's statements are autocommitted, one transaction
// each, and so are the request log's batched inserts), read after the
// backends have flushed their counts (PostgreSQL sends an idle backend's
// within 10 s: FLUSH_MS); the service's own background rate, measured over an
// idle window first, is taken out. The N checks (the same in both scenarios)
// stay in: the difference between the scenarios is the reads'.
import { createPostgresTestDatabase, testPostgresAdminUrl } from "@sms/db/testing";
import pg from "pg";
import { benchArgs, type ServerProcess, sleep, startApi } from "./support.ts";

const args = benchArgs();
const CALLERS = Number(args.callers ?? 1000);
const SPREAD_S = Number(args.spread ?? 60);
const POOL = Number(args.pool ?? 10);
const SCENARIOS = (args.scenarios ?? "wait,poll").split(",") as Array<"wait" | "poll">;
const FIRST_S = 2;
const HOLD_S = 25;
/** Longer than PostgreSQL's PGSTAT_IDLE_INTERVAL (10 s): every backend's counts are in pg_stat_database. */
const FLUSH_MS = 11_000;

/** The moment each caller's resource changes, in ms after the start: the same in every scenario. */
let seed = 54;
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
  return seed / 2_147_483_648;
};
const CHANGE_AT_MS = Array.from({ length: CALLERS }, () => 3000 + random() * SPREAD_S * 1000);

function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

async function transactions(admin: pg.Client, name: string): Promise<number> {
  const { rows } = await admin.query<{ n: string }>(
    "SELECT (xact_commit + xact_rollback)::text AS n FROM pg_stat_database WHERE datname = $1",
    [name],
  );
  return Number(rows[0]?.n ?? 0);
}

async function startVerifications(server: ServerProcess, apiKey: string, offset: number): Promise<string[]> {
  const ids: string[] = new Array(CALLERS);
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = next++; i < CALLERS; i = next++) {
        const response = await fetch(`${server.baseUrl}/v1/verifications`, {
          method: "POST",
          headers: {
            Authorization: `Bearer ${apiKey}`,
            "Content-Type": "application/json",
            "Idempotency-Key": `bench-wait-${offset}-${i}`,
          },
          body: JSON.stringify({ to: `+9955${String(50_000_000 + offset + i)}` }),
        });
        if (response.status !== 201)
          throw new Error(`start ${i}: ${response.status} ${await response.text()}`);
        ids[i] = ((await response.json()) as { id: string }).id;
      }
    }),
  );
  return ids;
}

type Caller = { reads: number; held: number; notHeld: number; seenAt: number | null };

async function run(
  scenario: "wait" | "poll",
  server: ServerProcess,
  apiKey: string,
  ids: string[],
  admin: pg.Client,
  database: string,
) {
  const auth = { Authorization: `Bearer ${apiKey}` };
  const changedAt: Array<number | null> = new Array(CALLERS).fill(null);
  const callers: Caller[] = ids.map(() => ({ reads: 0, held: 0, notHeld: 0, seenAt: null }));
  // The service's own rate while nothing is asked of it (the database clock, the pool's pings).
  await sleep(FLUSH_MS);
  const idleFrom = await transactions(admin, database);
  await sleep(FLUSH_MS);
  const before = await transactions(admin, database);
  const backgroundPerMs = (before - idleFrom) / FLUSH_MS;
  const started = performance.now();

  const changes = ids.map(async (id, i) => {
    await sleep(Math.max(0, started + (CHANGE_AT_MS[i] ?? 0) - performance.now()));
    const response = await fetch(`${server.baseUrl}/v1/verifications/${id}/check`, {
      method: "POST",
      headers: { ...auth, "Content-Type": "application/json" },
      body: '{"code":"99999999"}',
    });
    await response.body?.cancel();
    if (response.status !== 200) throw new Error(`check ${i}: ${response.status}`);
    changedAt[i] = performance.now();
  });

  const readers = ids.map(async (id, i) => {
    const caller = callers[i] as Caller;
    const path = `${server.baseUrl}/v1/verifications/${id}`;
    let delay = FIRST_S;
    let etag: string | null = null;
    await sleep(FIRST_S * 1000);
    for (;;) {
      const headers: Record<string, string> =
        scenario === "wait" && etag ? { ...auth, "If-None-Match": etag, Prefer: `wait=${HOLD_S}` } : auth;
      const response = await fetch(path, { headers });
      caller.reads++;
      const held = response.headers.has("preference-applied");
      if (etag) held ? caller.held++ : caller.notHeld++;
      etag = response.headers.get("etag") ?? etag;
      if (response.status === 200) {
        const body = (await response.json()) as { attempts_remaining: number };
        if (body.attempts_remaining < 5) {
          caller.seenAt = performance.now();
          return;
        }
      } else {
        await response.body?.cancel();
        if (response.status !== 304) throw new Error(`read ${i}: ${response.status}`);
      }
      if (scenario === "wait" && (held || caller.reads === 1)) continue;
      delay = caller.reads === 1 ? FIRST_S * 2 : Math.min(delay * 2, 30);
      await sleep(delay * 1000);
    }
  });

  await Promise.all([...changes, ...readers]);
  const seconds = (performance.now() - started) / 1000;
  await sleep(FLUSH_MS);
  const counted = (await transactions(admin, database)) - before;
  const background = Math.round(backgroundPerMs * (seconds * 1000 + FLUSH_MS));
  // The N checks (and their request-log rows) are the same in both scenarios; the reads are the difference.
  const work = counted - background;
  const wakeups = callers.map((caller, i) => Math.max(0, (caller.seenAt ?? 0) - (changedAt[i] ?? 0)));
  const reads = callers.reduce((sum, caller) => sum + caller.reads, 0);
  return {
    scenario,
    callers: CALLERS,
    seconds: Math.round(seconds * 10) / 10,
    reads,
    reads_per_s: Math.round(reads / seconds),
    ...(scenario === "wait"
      ? {
          held_answers: callers.reduce((sum, caller) => sum + caller.held, 0),
          not_held_answers: callers.reduce((sum, caller) => sum + caller.notHeld, 0),
        }
      : {}),
    db_transactions: { counted, background, work },
    db_statements_per_s: Math.round(work / seconds),
    wakeup_ms: {
      p50: Math.round(percentile(wakeups, 0.5)),
      p90: Math.round(percentile(wakeups, 0.9)),
      p99: Math.round(percentile(wakeups, 0.99)),
      max: Math.round(percentile(wakeups, 1)),
    },
  };
}

const database = await createPostgresTestDatabase();
const name = new URL(database.databaseUrl).pathname.slice(1);
const admin = new pg.Client({ connectionString: testPostgresAdminUrl() });
await admin.connect();
let server: ServerProcess | undefined;
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
      // The callers' connections all come from loopback, and every one of them is held at once.
      MAX_CONNECTIONS: String(CALLERS * 4),
      MAX_CONNECTIONS_PER_PEER: String(CALLERS * 4),
      MAX_WAITING_REQUESTS: String(CALLERS * 2),
      MAX_WAITING_REQUESTS_PER_KEY: String(CALLERS * 2),
      JOBS_ENABLED: "false",
    },
  });
  const key = await fetch(`${server.baseUrl}/v1/test-keys`, { method: "POST" });
  if (key.status !== 201) throw new Error(`creating a test key failed: ${key.status}`);
  const { api_key: apiKey } = (await key.json()) as { api_key: string };
  const results = [];
  for (const [index, scenario] of SCENARIOS.entries()) {
    const ids = await startVerifications(server, apiKey, index * CALLERS);
    const result = await run(scenario, server, apiKey, ids, admin, name);
    console.log(JSON.stringify(result));
    results.push(result);
  }
  console.log(JSON.stringify({ callers: CALLERS, spread_s: SPREAD_S, pool: POOL, results }));
} finally {
  await server?.stop();
  await admin.end();
  await database.drop();
}
