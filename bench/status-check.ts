// The status check's throughput: N due `submitted` messages settled by one
// worker, then by two workers on one database (never the same message twice,
// and faster than one), against the simulator and against the fake uBill at
// a realistic per-report latency with bounded concurrency. On demand only:
//
//   node scripts/bootstrap.mjs bench status-check [--messages=100000] [--ubill-messages=5000]
//     [--report-delay-ms=30] [--batch=200] [--concurrency=16]
//
// Each worker is the domain's checkMessageStatuses over its own connection
// pool, as a worker process runs it (apps/api/src/services.ts).
import { generateKeySpec, newId, parseKeyring } from "@sms/crypto";
import { createDatabase, type Database } from "@sms/db";
import { createPostgresTestDatabase } from "@sms/db/testing";
import { checkMessageStatuses, createStore, type SmsProvider, type StatusCheckCounts } from "@sms/domain";
import { createSimulatorProvider } from "@sms/provider-sim";
import { createUbillProvider } from "@sms/provider-ubill";
import { startFakeUbill } from "@sms/provider-ubill/testing";

const args = Object.fromEntries(
  Deno.args.filter((arg) => arg.startsWith("--")).map((arg) => arg.slice(2).split("=") as [string, string]),
);
const MESSAGES = Number(args.messages ?? 100_000);
const UBILL_MESSAGES = Number(args["ubill-messages"] ?? 5_000);
const REPORT_DELAY_MS = Number(args["report-delay-ms"] ?? 30);
const BATCH = Number(args.batch ?? 200);
const CONCURRENCY = Number(args.concurrency ?? 16);

const keyring = parseKeyring(generateKeySpec("bench"));
const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const PAST = new Date(Date.now() - 60_000);

/** Counts provider calls per reference: a reference asked twice means two workers overlapped. */
function counting(provider: SmsProvider) {
  const asked = new Map<string, number>();
  return {
    asked,
    provider: {
      ...provider,
      name: provider.name,
      checkStatus: (query: Parameters<SmsProvider["checkStatus"]>[0]) => {
        asked.set(query.providerRef, (asked.get(query.providerRef) ?? 0) + 1);
        return provider.checkStatus(query);
      },
    } satisfies SmsProvider,
  };
}

async function seed(
  db: Database,
  count: number,
  message: (
    id: string,
    index: number,
  ) => Promise<{ provider: string; ref: string; ciphertext: Uint8Array | null }>,
) {
  const projectId = newId("prj");
  await db.query("INSERT INTO projects (id) VALUES ($1)", [projectId]);
  for (let start = 0; start < count; start += 5_000) {
    const rows = await Promise.all(
      Array.from({ length: Math.min(5_000, count - start) }, async (_, i) => {
        const id = newId("msg");
        return { id, ...(await message(id, start + i)) };
      }),
    );
    await db.query(
      `INSERT INTO messages (id, project_id, mode, recipient_masked, recipient_ciphertext, template, locale, sender,
                             segments, encoding, status, provider, provider_ref, submitted_at, next_check_at, created_at, updated_at)
       SELECT m.id, $2, 'test', '+9955••••••56', m.ciphertext, 'verification_code', 'en', 'SMSGE', 1, 'gsm7',
              'submitted', m.provider, m.ref, $3, $3, $3, $3
       FROM unnest(CAST($1 AS text[]), CAST($4 AS text[]), CAST($5 AS text[]), CAST($6 AS bytea[]))
            AS m(id, provider, ref, ciphertext)`,
      [
        rows.map((row) => row.id),
        projectId,
        PAST,
        rows.map((row) => row.provider),
        rows.map((row) => row.ref),
        rows.map((row) => row.ciphertext),
      ],
    );
  }
}

async function round(workers: Database[], providers: { test: SmsProvider; live: SmsProvider | null }) {
  const started = performance.now();
  const counts = await Promise.all(
    workers.map((db) =>
      checkMessageStatuses({
        store: createStore(db),
        keyring,
        clock: { now: () => new Date() },
        logger: silent,
        providers,
        config: {
          intervalMs: 20_000,
          batchSize: BATCH,
          concurrency: CONCURRENCY,
          deadlineMs: 72 * 3_600_000,
        },
      }),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  const total = counts.reduce(
    (sum, c) => ({ checked: sum.checked + c.checked, settled: sum.settled + c.delivered + c.undeliverable }),
    { checked: 0, settled: 0 },
  );
  return { seconds, ...total, perWorker: counts.map((c: StatusCheckCounts) => c.checked) };
}

async function scenario(
  name: string,
  count: number,
  workers: number,
  seedMessage: Parameters<typeof seed>[2],
  providers: () => {
    provider: ReturnType<typeof counting>;
    providers: { test: SmsProvider; live: SmsProvider | null };
  },
) {
  const database = await createPostgresTestDatabase();
  const dbs: Database[] = [];
  try {
    for (let i = 0; i < workers; i++) {
      dbs.push(await createDatabase({ databaseUrl: database.databaseUrl, poolSize: 4, logger: silent }));
    }
    await seed(dbs[0] as Database, count, seedMessage);
    await (dbs[0] as Database).query("ANALYZE messages");
    const { provider, providers: set } = providers();
    const result = await round(dbs, set);
    const [left] = await (dbs[0] as Database).query<{ n: number }>(
      "SELECT count(*)::int AS n FROM messages WHERE status = 'submitted'",
    );
    const askedTwice = [...provider.asked.values()].filter((times) => times > 1).length;
    console.log(
      JSON.stringify({
        scenario: name,
        workers,
        messages: count,
        batch: BATCH,
        concurrency: CONCURRENCY,
        seconds: Math.round(result.seconds * 100) / 100,
        settled_per_s: Math.round(result.settled / result.seconds),
        settled: result.settled,
        still_submitted: left?.n,
        asked_twice: askedTwice,
        checked_per_worker: result.perWorker,
      }),
    );
  } finally {
    for (const db of dbs) await db.close();
    await database.drop();
  }
}

const clock = { now: () => PAST };
const simulatorSeed: Parameters<typeof seed>[2] = async (id) => {
  const outcome = await createSimulatorProvider({ clock, deliveryDelayMs: 0 }).submit({
    messageId: id,
    to: "+995555123456",
    text: "x",
    sender: { name: "SMSGE", brandId: null },
  });
  if (outcome.kind !== "accepted") throw new Error("the simulator refused");
  return { provider: "simulator", ref: outcome.providerRef, ciphertext: null };
};
const simulator = () => {
  const provider = counting(
    createSimulatorProvider({ clock: { now: () => new Date() }, deliveryDelayMs: 0 }),
  );
  return { provider, providers: { test: provider.provider, live: null } };
};
for (const workers of [1, 2]) await scenario("simulator", MESSAGES, workers, simulatorSeed, simulator);

const fake = await startFakeUbill({ reportDelayMs: REPORT_DELAY_MS });
try {
  let nextSmsId = 500_000;
  const ubillSeed: Parameters<typeof seed>[2] = async (id) => {
    const smsId = String(nextSmsId++);
    fake.setReport(smsId, "1", "+995555123456");
    return { provider: "ubill", ref: smsId, ciphertext: await keyring.encrypt("+995555123456", id) };
  };
  const ubill = () => {
    const provider = counting(
      createUbillProvider({ baseUrl: fake.baseUrl, apiKey: fake.apiKey, defaultBrandId: 1, logger: silent }),
    );
    return { provider, providers: { test: provider.provider, live: provider.provider } };
  };
  for (const workers of [1, 2]) {
    await scenario(`ubill_${REPORT_DELAY_MS}ms`, UBILL_MESSAGES, workers, ubillSeed, ubill);
  }
} finally {
  await fake.close();
}
