// The status check's throughput: N due `submitted` messages settled by one
// worker, then by two workers on one database (never the same message twice,
// and faster than one), against the simulator and against the fake uBill at
// a realistic per-report latency with bounded concurrency. On demand only:
//
//   node scripts/bootstrap.mjs bench status-check [--messages=100000] [--ubill-messages=5000]
//     [--report-delay-ms=30] [--batch=200] [--concurrency=16]
//
// Each worker is its own Deno process running one round of the domain's
// checkMessageStatuses over its own connection pool, as a worker process runs
// it (apps/api/src/services.ts); this process seeds, starts them together and
// times them.
import { generateKeySpec, newId, parseKeyring } from "@sms/crypto";
import { createDatabase, type Database } from "@sms/db";
import { createPostgresTestDatabase } from "@sms/db/testing";
import { checkMessageStatuses, createStore, type SmsProvider } from "@sms/domain";
import { createSimulatorProvider } from "@sms/provider-sim";
import { createUbillProvider, DEFAULT_STATUS_TIMEOUT_MS } from "@sms/provider-ubill";
import { FAKE_UBILL_API_KEY, startFakeUbill } from "@sms/provider-ubill/testing";
import { DENO_RUN_FLAGS } from "../scripts/deno.mjs";
import { benchArgs } from "./support.ts";

const args = benchArgs();
const MESSAGES = Number(args.messages ?? 100_000);
const UBILL_MESSAGES = Number(args["ubill-messages"] ?? 5_000);
const REPORT_DELAY_MS = Number(args["report-delay-ms"] ?? 30);
const BATCH = Number(args.batch ?? 200);
const CONCURRENCY = Number(args.concurrency ?? 16);

const KEYRING_SPEC = generateKeySpec("bench");
const keyring = parseKeyring(KEYRING_SPEC);
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

type WorkerResult = {
  checked: number;
  delivered: number;
  undeliverable: number;
  asked: Record<string, number>;
};

/** Worker processes against `databaseUrl`: started and connected first, then timed from one "go". */
async function round(
  databaseUrl: string,
  workers: number,
  provider: "simulator" | "ubill",
  ubillUrl: string | null,
) {
  const children = Array.from({ length: workers }, () =>
    new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...DENO_RUN_FLAGS,
        import.meta.filename ?? "",
        "--worker",
        `--database-url=${databaseUrl}`,
        `--provider=${provider}`,
        `--keyring=${KEYRING_SPEC}`,
        ...(ubillUrl ? [`--ubill-url=${ubillUrl}`] : []),
        `--batch=${BATCH}`,
        `--concurrency=${CONCURRENCY}`,
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn(),
  );
  const lines = children.map((child) => child.stdout.pipeThrough(new TextDecoderStream()).getReader());
  const readLine = async (reader: ReadableStreamDefaultReader<string>) => {
    let text = "";
    while (!text.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("a worker ended early");
      text += value;
    }
    return text.trim();
  };
  for (const reader of lines)
    if ((await readLine(reader)) !== "ready") throw new Error("a worker is not ready");
  const started = performance.now();
  for (const child of children) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode("go\n"));
    await writer.close();
  }
  const results = await Promise.all(
    lines.map(async (reader) => JSON.parse(await readLine(reader)) as WorkerResult),
  );
  const seconds = (performance.now() - started) / 1000;
  for (const child of children) await child.status;
  const asked = new Map<string, number>();
  for (const result of results) {
    for (const [ref, times] of Object.entries(result.asked)) asked.set(ref, (asked.get(ref) ?? 0) + times);
  }
  return {
    seconds,
    checked: results.reduce((sum, r) => sum + r.checked, 0),
    settled: results.reduce((sum, r) => sum + r.delivered + r.undeliverable, 0),
    askedTwice: [...asked.values()].filter((times) => times > 1).length,
    perWorker: results.map((r) => r.checked),
  };
}

async function scenario(
  name: string,
  count: number,
  workers: number,
  seedMessage: Parameters<typeof seed>[2],
  provider: "simulator" | "ubill",
  ubillUrl: string | null,
) {
  const database = await createPostgresTestDatabase();
  const db = await createDatabase({ databaseUrl: database.databaseUrl, poolSize: 4, logger: silent });
  try {
    await seed(db, count, seedMessage);
    await db.query("ANALYZE messages");
    const result = await round(database.databaseUrl, workers, provider, ubillUrl);
    const [left] = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM messages WHERE status = 'submitted'",
    );
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
        asked_twice: result.askedTwice,
        checked_per_worker: result.perWorker,
      }),
    );
  } finally {
    await db.close();
    await database.drop();
  }
}

/** A worker process (started by runWorker): one round, then its counts on stdout. */
async function worker() {
  const db = await createDatabase({ databaseUrl: String(args["database-url"]), poolSize: 4, logger: silent });
  const base =
    args.provider === "ubill"
      ? createUbillProvider({
          baseUrl: String(args["ubill-url"]),
          apiKey: FAKE_UBILL_API_KEY,
          defaultBrandId: 1,
          logger: silent,
        })
      : createSimulatorProvider({ clock: { now: () => new Date() }, deliveryDelayMs: 0 });
  const { asked, provider } = counting(base);
  try {
    await db.query("SELECT 1"); // connected before the clock starts
    console.log("ready");
    const go = Deno.stdin.readable.pipeThrough(new TextDecoderStream()).getReader();
    await go.read();
    const counts = await checkMessageStatuses({
      store: createStore(db),
      keyring: parseKeyring(String(args.keyring)),
      clock: { now: () => new Date() },
      logger: silent,
      providers: { test: provider, live: provider },
      config: {
        intervalMs: 20_000,
        batchSize: BATCH,
        concurrency: CONCURRENCY,
        deadlineMs: 72 * 3_600_000,
        callTimeoutMs: DEFAULT_STATUS_TIMEOUT_MS,
      },
    });
    console.log(JSON.stringify({ ...counts, asked: Object.fromEntries(asked) }));
  } finally {
    await db.close();
  }
}

if (args.worker) {
  await worker();
  Deno.exit(0);
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
for (const workers of [1, 2])
  await scenario("simulator", MESSAGES, workers, simulatorSeed, "simulator", null);

const fake = await startFakeUbill({ reportDelayMs: REPORT_DELAY_MS });
try {
  let nextSmsId = 500_000;
  const ubillSeed: Parameters<typeof seed>[2] = async (id) => {
    const smsId = String(nextSmsId++);
    fake.setReport(smsId, "1", "+995555123456");
    return { provider: "ubill", ref: smsId, ciphertext: await keyring.encrypt("+995555123456", id) };
  };
  for (const workers of [1, 2]) {
    await scenario(`ubill_${REPORT_DELAY_MS}ms`, UBILL_MESSAGES, workers, ubillSeed, "ubill", fake.baseUrl);
  }
} finally {
  await fake.close();
}
