// The purge of 1 M expired messages (issue 26): an unclaimed project's
// messages, each with its three timeline events, all older than the 30 days
// after which spec 4.1 deletes them, beside a claimed project's recent ones
// that stay. Three databases, seeded alike, measured one after the other in
// one run:
//
//   before      the schema before migration 20261220000000_partitions (one
//               table), today's per-row purge (purgeUnclaimedMessages,
//               PURGE_BATCH_SIZE rows per transaction, the events going by
//               the foreign key's cascade)
//   per-row     the partitioned schema, the same per-row purge (the events
//               going by the trigger)
//   partition   the partitioned schema, the partition-maintenance round
//               (maintainPartitions: the whole month detached and dropped),
//               then the per-row purge for whatever is left (nothing here)
//
//   node scripts/bootstrap.mjs bench partitions [--messages=1000000] [--kept=20000] [--batch=500]
//     [--history=0] (a claimed project's messages in the expired month: kept, and the month with them)
//     [--records=0] (the claimed project's unexpired idempotency records) [--scenarios=before,per-row,partition]
//
// Each prints one JSON line: seconds, messages deleted, the events left of
// them, and the size of messages + message_events before and after (a per-row
// delete leaves dead rows for vacuum; a dropped partition returns its space).
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDatabase, type Database, MIGRATIONS_DIR } from "@sms/db";
import { createPostgresTestDatabase } from "@sms/db/testing";
import { createStore, ensureMonth, maintainPartitions, purgeUnclaimedMessages } from "@sms/domain";
import { benchArgs } from "./support.ts";

const args = benchArgs();
const MESSAGES = Number(args.messages ?? 1_000_000);
const KEPT = Number(args.kept ?? 20_000);
const BATCH = Number(args.batch ?? 500);
/** A claimed project's messages in the expired month: kept (claimed projects keep theirs), and the month with them. */
const HISTORY = Number(args.history ?? 0);
/** The claimed project's idempotency records of the last day (unexpired, each its own expiry). */
const RECORDS = Number(args.records ?? 0);
const SCENARIOS = String(args.scenarios ?? "before,per-row,partition").split(",");
const PARTITIONS_MIGRATION = "20261220000000_partitions";
const DAY_MS = 86_400_000;

const silent = { info() {}, warn() {}, error() {} };
const now = new Date();
/** The month that ended at least 30 days ago: two months back, whole. */
const expiredMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 2, 1));

async function migrationsBeforePartitions(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "sms-bench-partitions-"));
  for (const name of await readdir(MIGRATIONS_DIR)) {
    if (name >= PARTITIONS_MIGRATION && name !== "migration_lock.toml") continue;
    await cp(join(MIGRATIONS_DIR, name), join(dir, name), { recursive: true });
  }
  return dir;
}

async function seed(db: Database, partitioned: boolean) {
  await db.query(
    "INSERT INTO projects (id, claimed_at) VALUES ('prj_bench_unclaimed', NULL), ('prj_bench_claimed', now())",
  );
  // The expired month, spread over its days; then the claimed project's recent ones.
  await db.query(
    `INSERT INTO messages (id, project_id, mode, recipient_masked, template, locale, sender, segments, encoding,
                           status, provider, provider_ref, submitted_at, text_purged_at, created_at, updated_at)
     SELECT 'msg_x' || lpad(g::text, 9, '0'), 'prj_bench_unclaimed', 'test', '+9955••••••12', 'verification_code',
            'en', 'SMSGE', 1, 'gsm7', 'delivered', 'simulator', 'sim-' || g, t + interval '1 second', t + interval '7 days',
            t, t + interval '2 seconds'
     FROM (SELECT g, CAST($1 AS timestamptz) + (g * (interval '27 days' / $2)) AS t FROM generate_series(1, $2) AS g) s`,
    [expiredMonth, MESSAGES],
  );
  await db.query(
    `INSERT INTO messages (id, project_id, mode, recipient_masked, template, locale, sender, segments, encoding,
                           status, provider, created_at, updated_at)
     SELECT 'msg_k' || lpad(g::text, 9, '0'), 'prj_bench_claimed', 'test', '+9955••••••12', 'verification_code',
            'en', 'SMSGE', 1, 'gsm7', 'delivered', 'simulator', now() - g * interval '1 second', now()
     FROM generate_series(1, $1) AS g`,
    [KEPT],
  );
  if (HISTORY > 0)
    await db.query(
      `INSERT INTO messages (id, project_id, mode, recipient_masked, template, locale, sender, segments, encoding,
                           status, provider, created_at, updated_at)
     SELECT 'msg_h' || lpad(g::text, 9, '0'), 'prj_bench_claimed', 'live', '+9955••••••12', 'verification_code',
            'en', 'SMSGE', 1, 'gsm7', 'delivered', 'ubill', t, t
     FROM (SELECT g, CAST($1 AS timestamptz) + (g * (interval '27 days' / $2)) AS t FROM generate_series(1, $2) AS g) s`,
      [expiredMonth, HISTORY],
    );
  if (RECORDS > 0)
    await db.query(
      `INSERT INTO idempotency_records (id, project_id, mode, key, fingerprint, message_id, expires_at, created_at)
     SELECT 'idem_' || g, 'prj_bench_claimed', 'live', 'k' || g, 'f', 'msg_d' || g,
            now() + g * (interval '1 day' / $1), now()
     FROM generate_series(1, $1) AS g`,
      [RECORDS],
    );
  const extra = partitioned ? ", message_created_at" : "";
  const own = partitioned ? ", created_at" : "";
  await db.query(
    `INSERT INTO message_events (message_id, status, error_code, created_at${extra})
     SELECT id, CAST('queued' AS "MessageStatus"), NULL, created_at${own} FROM messages
     UNION ALL SELECT id, CAST('submitted' AS "MessageStatus"), NULL, submitted_at${own} FROM messages WHERE submitted_at IS NOT NULL
     UNION ALL SELECT id, status, NULL, updated_at${own} FROM messages`,
  );
  await db.query("VACUUM ANALYZE messages").catch(() => db.query("ANALYZE messages"));
  await db.query("VACUUM ANALYZE message_events").catch(() => db.query("ANALYZE message_events"));
  await db.query("VACUUM ANALYZE idempotency_records").catch(() => db.query("ANALYZE idempotency_records"));
  await db.query("CHECKPOINT").catch(() => {});
}

async function sizes(db: Database) {
  const [row] = await db.query<{ bytes: string; messages: number; events: number }>(
    `SELECT (SELECT COALESCE(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c
             WHERE c.relkind IN ('r', 'i', 't') AND c.relnamespace = 'public'::regnamespace
               AND (c.relname LIKE 'messages%' OR c.relname LIKE 'message_events%'))::text AS bytes,
            (SELECT count(*)::int FROM messages) AS messages,
            (SELECT count(*)::int FROM message_events) AS events`,
  );
  return { mb: Math.round(Number(row?.bytes ?? 0) / 1048576), messages: row?.messages, events: row?.events };
}

function load(): string {
  return Deno.loadavg()
    .map((value) => value.toFixed(2))
    .join(" ");
}

async function scenario(name: "before" | "per-row" | "partition") {
  const server = await createPostgresTestDatabase({ migrate: false });
  const migrationsDir = name === "before" ? await migrationsBeforePartitions() : undefined;
  const db = await createDatabase({
    databaseUrl: server.databaseUrl,
    migrationsDir,
    poolSize: 4,
    logger: silent,
    queryTimeoutMs: 3_600_000,
  });
  try {
    await db.migrate();
    const store = createStore(db);
    // The expired month's partition, as the job would have created it then.
    if (name !== "before") await ensureMonth({ store }, expiredMonth);
    await seed(db, name !== "before");
    const before = await sizes(db);
    const loadBefore = load();
    const started = performance.now();
    let dropped = 0;
    /** The partition-maintenance round alone (the month's check, and its drop when it may go). */
    let roundSeconds: number | undefined;
    if (name === "partition") {
      const counts = await maintainPartitions({ store }, { now, requestLogRetentionMs: 30 * DAY_MS });
      dropped = counts.rows_dropped;
      roundSeconds = Number(((performance.now() - started) / 1000).toFixed(3));
    }
    const purged = await purgeUnclaimedMessages({
      store,
      clock: { now: () => now },
      config: { batchSize: BATCH },
    });
    const seconds = (performance.now() - started) / 1000;
    const after = await sizes(db);
    const result = {
      scenario: name,
      seconds: Number(seconds.toFixed(2)),
      deleted: dropped + purged.messages,
      by_partition_drop: dropped,
      by_row: purged.messages,
      ...(roundSeconds === undefined ? {} : { maintenance_round_seconds: roundSeconds }),
      before,
      after,
      load_before: loadBefore,
      load_after: load(),
    };
    console.log(JSON.stringify(result));
    return result;
  } finally {
    await db.close();
    await server.drop();
    if (migrationsDir) await rm(migrationsDir, { recursive: true, force: true });
  }
}

console.log(
  JSON.stringify({
    messages: MESSAGES,
    kept: KEPT,
    history: HISTORY,
    records: RECORDS,
    batch: BATCH,
    expired_month: expiredMonth.toISOString().slice(0, 7),
    cpus: navigator.hardwareConcurrency,
    load: load(),
    date: now.toISOString(),
  }),
);
const results = [];
for (const name of ["before", "per-row", "partition"] as const)
  if (SCENARIOS.includes(name)) results.push(await scenario(name));
const [before, perRow, partition] = results;
if (results.length === 3 && before && perRow && partition) {
  console.log(
    JSON.stringify({
      ratio_before_to_partition: Number((before.seconds / partition.seconds).toFixed(1)),
      ratio_per_row_to_partition: Number((perRow.seconds / partition.seconds).toFixed(1)),
    }),
  );
}
