// Fault injection under load (issue 12): two API instances on one PostgreSQL
// database behind a TCP proxy, a fake uBill, and clients that behave as the
// docs tell integrators to (retry 5xx and lost connections with the same
// Idempotency-Key). On demand only, never in CI; loopback only; every phase is
// bounded in time and count.
//
//   npm run bench -- faults [--scenarios=kill,db-stop,db-freeze,hostile,flood] [--duration=20] [--clients=16]
//                           [--hostile=5000] [--flood-rate=300] [--server-log=FILE]
//
// Scenarios (each under load for --duration seconds, then drained):
//   kill       instance A is killed with SIGKILL a third of the way in and
//              restarted at two thirds; clients move to B and back
//   db-stop    the database is stopped (connections reset, new ones refused)
//              for 5 s in the middle
//   db-freeze  the database is frozen (the network path forwards nothing,
//              closes nothing) for 5 s in the middle
//   flood      one address (127.0.0.2) opens --flood-rate silent connections a
//              second to both instances (issue 27: about 105 a second kept the
//              whole connection cap full) while the clients send from
//              127.0.0.1 and /healthz is probed: no client may meet
//              too_many_connections, no probe anything but 200
//   hostile    5 000 hostile requests (malformed and oversized bodies,
//              __proto__ variables, over-long and non-ASCII keys, bad keys,
//              unknown routes, rotating X-Forwarded-For from a direct peer),
//              SMS pumping to one number, and uBill throttling (429/503)
//
// After all scenarios, once the recovery sweep has settled everything, it
// checks the invariants and prints them with the figures as JSON:
//   - nothing acknowledged was lost: every 200/201 names a message that exists
//     and belongs to its key;
//   - no key produced two messages or two SMS: one id per key, every message
//     owned by one idempotency record, every text sent to uBill at most once;
//   - credits balanced: balance = ledger sum = grant - messages charged;
//   - no secret leaked: no response and no log line holds an API key, the
//     uBill key, a full number, a uBill message id or a message text.

import { apiKeyPrefix, newApiKey, newId, sha256Hex } from "@sms/crypto";
import { createDatabaseProxy, createPostgresTestDatabase } from "@sms/db/testing";
import { startFakeUbill } from "@sms/provider-ubill/testing";
import pg from "pg";
import { benchArgs, freePort, sleep, startApi } from "./support.ts";

const args = benchArgs();
const SCENARIOS = String(args.scenarios ?? "kill,db-stop,db-freeze,hostile,flood").split(",");
const DURATION_S = Number(args.duration ?? 20);
const CLIENTS = Number(args.clients ?? 16);
const HOSTILE_REQUESTS = Number(args.hostile ?? 5_000);
const FLOOD_RATE = Number(args["flood-rate"] ?? 300);
/** A key is given up (and reported) after this long without a definitive answer. */
const KEY_DEADLINE_MS = 90_000;

const UBILL_KEY = "bench-ubill-secret-key-4b1d";
const QUEUED_RECOVERY_SECONDS = 12;
const LIVE_CREDITS = 1_000_000;
const PUMPED_NUMBER = "+995599999999";

// ---------------------------------------------------------------- the setup

const database = await createPostgresTestDatabase();
const proxy = await createDatabaseProxy(database.databaseUrl);
const fake = await startFakeUbill({ apiKey: UBILL_KEY, balance: 10_000_000, firstSmsId: 90_000_001 });
const direct = new pg.Pool({ connectionString: database.databaseUrl, max: 2 });

/** Every line any server process wrote. */
const serverOutput: string[] = [];

type Instance = {
  name: string;
  baseUrl: string;
  child: Deno.ChildProcess;
  exited: Promise<Deno.CommandStatus>;
};

async function collect(stream: ReadableStream<Uint8Array>) {
  const decoder = new TextDecoderStream();
  let rest = "";
  for await (const chunk of stream.pipeThrough(decoder)) {
    const lines = (rest + chunk).split("\n");
    rest = lines.pop() ?? "";
    serverOutput.push(...lines.filter(Boolean));
  }
  if (rest) serverOutput.push(rest);
}

async function startInstance(name: string): Promise<Instance> {
  const port = freePort();
  const { baseUrl, child } = await startApi({
    name,
    port,
    output: "piped",
    env: {
      DATABASE_URL: proxy.urlFor(database.databaseUrl),
      DATABASE_POOL_SIZE: "10",
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      LOG_LEVEL: "info",
      MESSAGES_PER_MINUTE: "100000000",
      // The bench's own address is "direct": X-Forwarded-For is believed only from 10.0.0.0/8.
      TRUST_PROXY: "1",
      TRUST_PROXY_NETWORKS: "10.0.0.0/8",
      UBILL_BASE_URL: fake.baseUrl,
      UBILL_API_KEY: UBILL_KEY,
      UBILL_DEFAULT_BRAND_ID: "1",
      UBILL_SUBMIT_TIMEOUT_MS: "5000",
      QUEUED_RECOVERY_SECONDS: String(QUEUED_RECOVERY_SECONDS),
      STATUS_CHECK_INTERVAL_SECONDS: "5",
    },
  });
  void collect(child.stdout);
  void collect(child.stderr);
  return { name, baseUrl, child, exited: child.status };
}

const instances: Instance[] = [await startInstance("A"), await startInstance("B")];

/** Every response body and header block the clients saw, for the leak scan. */
const responsesSeen: string[] = [];
function remember(response: Response, text: string) {
  // POST /v1/test-keys answers with a new key: that one is meant to be there.
  const body = text.replace(/"api_key":"sk_test_[A-Za-z0-9_-]{43}"/, '"api_key":"(issued)"');
  responsesSeen.push(body, JSON.stringify([...response.headers]));
}

// A test key (the bench's address may create a few) and a live key with plenty of credits.
const testKeyResponse = await fetch(`${instances[0]?.baseUrl}/v1/test-keys`, { method: "POST" });
const testKeyText = await testKeyResponse.text();
remember(testKeyResponse, testKeyText);
if (testKeyResponse.status !== 201) throw new Error(`test key: ${testKeyResponse.status} ${testKeyText}`);
const TEST_KEY = (JSON.parse(testKeyText) as { api_key: string }).api_key;

const LIVE_PROJECT = newId("prj");
const LIVE_KEY = newApiKey("live");
await direct.query(
  "INSERT INTO projects (id, claimed_at, credit_balance, has_paid_credits) VALUES ($1, now(), $2, true)",
  [LIVE_PROJECT, LIVE_CREDITS],
);
await direct.query(
  "INSERT INTO credit_ledger (id, project_id, kind, amount, note) VALUES ($1, $2, 'grant_paid', $3, 'bench')",
  [newId("cre"), LIVE_PROJECT, LIVE_CREDITS],
);
await direct.query(
  "INSERT INTO api_keys (id, project_id, mode, key_hash, prefix) VALUES ($1, $2, 'live', $3, $4)",
  [newId("key"), LIVE_PROJECT, await sha256Hex(LIVE_KEY), apiKeyPrefix(LIVE_KEY)],
);

// uBill reports accepted messages delivered a little later (as the real one
// does within seconds), so the status check does not ask about an ever
// growing backlog of pending messages. Its smsIDs count up from 90 000 001.
let reported = 0;
const deliveries = setInterval(() => {
  const issued = fake.sends().length;
  for (; reported < issued - CLIENTS; reported++) fake.setReport(String(90_000_001 + reported), "1");
}, 2_000);

// uBill answers every send after 50–250 ms, so sends are in flight when faults strike.
let numberCounter = 0;
function freshNumber(): string {
  numberCounter++;
  const number = `+99559${String(numberCounter).padStart(7, "0")}`;
  fake.replyToNumber(number, { kind: "slow", delayMs: 50 + (numberCounter % 5) * 50 });
  return number;
}

// ---------------------------------------------------------------- the clients

type Ack = { status: number; id: string; messageStatus: string };
type KeyRecord = {
  key: string;
  mode: "test" | "live";
  code: string;
  acks: Ack[];
  attempts: number;
  /** How the key ended: acknowledged, refused (nothing sent), or given up. */
  end?: "acked" | "not_sent" | "gave_up" | "refused";
  problems: string[];
};
const keys: KeyRecord[] = [];
const counts: Record<string, number> = {};
const count = (label: string) => {
  counts[label] = (counts[label] ?? 0) + 1;
};
const latencies: number[] = [];
let sendCounter = 0;
let liveCounter = 0;
let liveNumber = "";

/** One logical send, retried as the docs say until it has a definitive answer. */
async function logicalSend(scenario: string, pickInstance: () => Instance | undefined) {
  const mode = sendCounter % 2 === 0 ? "test" : "live";
  const n = ++sendCounter;
  const code = String(10_000_000 + n);
  const record: KeyRecord = {
    key: `${scenario}-${n}-${crypto.randomUUID()}`,
    mode,
    code,
    acks: [],
    attempts: 0,
    problems: [],
  };
  keys.push(record);
  // Two live keys per number: well inside the per-recipient limits.
  if (mode === "live" && liveCounter++ % 2 === 0) liveNumber = freshNumber();
  const to = mode === "live" ? liveNumber : "+995555100200";
  const body = JSON.stringify({ to, template: "verification_code", variables: { code }, locale: "en" });
  const started = Date.now();
  while (Date.now() - started < KEY_DEADLINE_MS) {
    const instance = pickInstance();
    if (!instance) {
      await sleep(100);
      continue;
    }
    record.attempts++;
    const sentAt = performance.now();
    let response: Response;
    try {
      response = await fetch(`${instance.baseUrl}/v1/messages`, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${mode === "live" ? LIVE_KEY : TEST_KEY}`,
          "Content-Type": "application/json",
          "Idempotency-Key": record.key,
        },
        body,
        signal: AbortSignal.timeout(60_000),
      });
    } catch {
      count(`${scenario}: connection lost`);
      await sleep(100);
      continue;
    }
    const text = await response.text();
    latencies.push(performance.now() - sentAt);
    remember(response, text);
    count(`${scenario}: ${response.status}`);
    if (response.status === 200 || response.status === 201) {
      const message = JSON.parse(text) as { id: string; status: string };
      record.acks.push({ status: response.status, id: message.id, messageStatus: message.status });
      record.end = "acked";
      return;
    }
    if (response.status === 503) {
      // Nothing was sent; safe to retry with the same key.
      await sleep(200);
      continue;
    }
    if (response.status === 500) {
      const retryAfter = Number(response.headers.get("retry-after") ?? "1");
      if (!response.headers.get("retry-after")) record.problems.push("500 without Retry-After");
      await sleep(Math.min(retryAfter, 3) * 1000);
      continue;
    }
    record.problems.push(`unexpected ${response.status}: ${text.slice(0, 200)}`);
    record.end = "refused";
    return;
  }
  record.end = "gave_up";
}

/** Runs `CLIENTS` clients for `seconds`, with `during` injecting the fault meanwhile. */
async function underLoad(
  scenario: string,
  seconds: number,
  during: (elapsed: () => number) => Promise<void>,
): Promise<Record<string, unknown>> {
  const begin = Date.now();
  const elapsed = () => (Date.now() - begin) / 1000;
  let next = 0;
  const pick = () => {
    const alive = instances.filter((instance) => instance !== undefined);
    return alive.length === 0 ? undefined : alive[next++ % alive.length];
  };
  const keysBefore = keys.length;
  const latencyFrom = latencies.length;
  const clients = Array.from({ length: CLIENTS }, async () => {
    while (elapsed() < seconds) await logicalSend(scenario, pick);
  });
  await Promise.all([during(elapsed), ...clients]);
  const mine = keys.slice(keysBefore);
  const slice = latencies.slice(latencyFrom).sort((a, b) => a - b);
  return {
    scenario,
    seconds: Math.round(elapsed()),
    logical_sends: mine.length,
    acknowledged: mine.filter((record) => record.end === "acked").length,
    gave_up: mine.filter((record) => record.end === "gave_up").length,
    refused: mine.filter((record) => record.end === "refused").length,
    attempts: mine.reduce((sum, record) => sum + record.attempts, 0),
    latency_ms: {
      p50: Math.round(slice[Math.floor(slice.length * 0.5)] ?? 0),
      p99: Math.round(slice[Math.floor(slice.length * 0.99)] ?? 0),
      max: Math.round(slice.at(-1) ?? 0),
    },
  };
}

// ---------------------------------------------------------------- the scenarios

const results: Array<Record<string, unknown>> = [];
/** Codes of the sends uBill throttled first (they reach uBill twice: refused, then sent). */
const throttledCodes = new Set<string>();
/** What the hostile phase saw that it should not have. */
const hostileFindings: string[] = [];

if (SCENARIOS.includes("kill")) {
  results.push(
    await underLoad("kill", DURATION_S, async (elapsed) => {
      while (elapsed() < DURATION_S / 3) await sleep(100);
      const victim = instances[0] as Instance;
      instances.splice(0, 1);
      victim.child.kill("SIGKILL");
      await victim.exited;
      while (elapsed() < (2 * DURATION_S) / 3) await sleep(100);
      instances.unshift(await startInstance("A (restarted)"));
    }),
  );
}

async function databaseFault(
  scenario: string,
  breakIt: () => Promise<void> | void,
  repair: () => Promise<void> | void,
) {
  const readyDuring: number[] = [];
  const result = await underLoad(scenario, DURATION_S, async (elapsed) => {
    while (elapsed() < DURATION_S / 2 - 2.5) await sleep(100);
    await breakIt();
    const brokeAt = Date.now();
    while (Date.now() - brokeAt < 5_000) {
      const asked = performance.now();
      const ready = await fetch(`${instances[0]?.baseUrl}/readyz`).then(
        (response) => response.body?.cancel().then(() => response.status),
        () => 0,
      );
      readyDuring.push(Math.round(performance.now() - asked));
      if (ready === 200) count(`${scenario}: /readyz 200 while broken`);
      await sleep(500);
    }
    await repair();
  });
  results.push({ ...result, readyz_ms_while_broken_max: Math.max(0, ...readyDuring) });
}

if (SCENARIOS.includes("db-stop")) {
  await databaseFault(
    "db-stop",
    () => proxy.stop(),
    () => proxy.start(),
  );
}
if (SCENARIOS.includes("db-freeze")) {
  await databaseFault(
    "db-freeze",
    () => proxy.freeze(),
    () => proxy.thaw(),
  );
}

if (SCENARIOS.includes("hostile")) {
  const base = () => instances[Math.floor(Math.random() * instances.length)]?.baseUrl ?? "";
  const utf8 = (text: string) => String.fromCharCode(...new TextEncoder().encode(text));
  const valid = (overrides: Record<string, unknown> = {}) =>
    JSON.stringify({
      to: "+995555100200",
      template: "verification_code",
      variables: { code: "1234" },
      ...overrides,
    });
  const auth = { Authorization: `Bearer ${TEST_KEY}`, "Content-Type": "application/json" };
  type Hostile = { label: string; expect: number[]; request: () => Promise<Response> };
  const post = (path: string, headers: Record<string, string>, body?: string) =>
    fetch(`${base()}${path}`, { method: "POST", headers, body });
  const kinds: Hostile[] = [
    {
      label: "malformed JSON",
      expect: [400],
      request: () => post("/v1/messages", { ...auth, "Idempotency-Key": crypto.randomUUID() }, '{"to": '),
    },
    {
      label: "array body",
      expect: [400],
      request: () => post("/v1/messages", { ...auth, "Idempotency-Key": crypto.randomUUID() }, "[1,2,3]"),
    },
    {
      label: "oversized body",
      expect: [413],
      request: () =>
        post(
          "/v1/messages",
          { ...auth, "Idempotency-Key": crypto.randomUUID() },
          valid({ pad: "x".repeat(20_000) }),
        ),
    },
    {
      label: "__proto__ variable",
      expect: [400],
      request: () =>
        post(
          "/v1/messages",
          { ...auth, "Idempotency-Key": crypto.randomUUID() },
          '{"to":"+995555100200","template":"verification_code","variables":{"code":"1234","__proto__":{"x":"https://evil.example"}}}',
        ),
    },
    {
      label: "extra field",
      expect: [400],
      request: () =>
        post(
          "/v1/messages",
          { ...auth, "Idempotency-Key": crypto.randomUUID() },
          valid({ text: "free text" }),
        ),
    },
    {
      label: "201-character key",
      expect: [400],
      request: () => post("/v1/messages", { ...auth, "Idempotency-Key": "k".repeat(201) }, valid()),
    },
    {
      label: "150 Cyrillic characters as key",
      expect: [200, 201],
      request: () =>
        post(
          "/v1/messages",
          { ...auth, "Idempotency-Key": utf8(`${"ж".repeat(140)}${crypto.randomUUID().slice(0, 10)}`) },
          valid(),
        ),
    },
    {
      label: "unknown API key",
      expect: [401],
      request: () =>
        post(
          "/v1/messages",
          {
            Authorization: "Bearer sk_test_nope",
            "Content-Type": "application/json",
            "Idempotency-Key": "x",
          },
          valid(),
        ),
    },
    {
      label: "wrong content type",
      expect: [415],
      request: () =>
        post(
          "/v1/messages",
          { ...auth, "Content-Type": "text/plain", "Idempotency-Key": crypto.randomUUID() },
          valid(),
        ),
    },
    { label: "unknown route", expect: [404], request: () => fetch(`${base()}/v1/${crypto.randomUUID()}`) },
    {
      label: "wrong method",
      expect: [405],
      request: () => fetch(`${base()}/v1/messages`, { method: "DELETE" }),
    },
    {
      label: "rotating X-Forwarded-For from a direct peer",
      expect: [201, 429],
      request: () =>
        post("/v1/test-keys", { "X-Forwarded-For": `198.51.100.${Math.floor(Math.random() * 250)}` }),
    },
  ];
  const byLabel: Record<string, Record<number, number>> = {};
  const unexpected: string[] = [];
  let sent = 0;
  let testKeys201 = 0;
  const worker = async () => {
    while (sent < HOSTILE_REQUESTS) {
      const kind = kinds[sent++ % kinds.length] as Hostile;
      let status = 0;
      try {
        const response = await kind.request();
        const text = await response.text();
        remember(response, text);
        status = response.status;
        if (status >= 400 && !(JSON.parse(text) as { error?: { request_id?: string } }).error?.request_id) {
          unexpected.push(`${kind.label}: ${status} without the envelope`);
        }
        if (kind.label.startsWith("rotating") && status === 201) testKeys201++;
      } catch (error) {
        unexpected.push(`${kind.label}: ${(error as Error).message}`);
      }
      byLabel[kind.label] ??= {};
      (byLabel[kind.label] as Record<number, number>)[status] =
        ((byLabel[kind.label] as Record<number, number>)[status] ?? 0) + 1;
      if (!kind.expect.includes(status)) unexpected.push(`${kind.label}: ${status}`);
    }
  };
  const begin = Date.now();
  await Promise.all(Array.from({ length: 32 }, worker));
  const hostileSeconds = (Date.now() - begin) / 1000;

  // SMS pumping: 30 live sends at once to one number; the recipient limit lets 5 through.
  fake.replyToNumber(PUMPED_NUMBER, { kind: "accept" });
  const pumped = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      fetch(`${instances[i % instances.length]?.baseUrl}/v1/messages`, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${LIVE_KEY}`,
          "Content-Type": "application/json",
          "Idempotency-Key": `pump-${i}`,
        },
        body: JSON.stringify({
          to: PUMPED_NUMBER,
          template: "verification_code",
          variables: { code: String(20_000_000 + i) },
          locale: "en",
        }),
      }).then(async (response) => {
        const text = await response.text();
        remember(response, text);
        return { status: response.status, text };
      }),
    ),
  );

  // uBill throttling: a 429 or 503 from uBill is "not sent": 503 to the caller, refunded, retry sends.
  const throttled: number[] = [];
  for (const [i, status] of [429, 503, 429, 503].entries()) {
    const to = freshNumber();
    fake.replyToNumber(to, { kind: "http", status });
    const headers = {
      Authorization: `Bearer ${LIVE_KEY}`,
      "Content-Type": "application/json",
      "Idempotency-Key": `throttled-${i}`,
    };
    throttledCodes.add(String(30_000_000 + i));
    const body = JSON.stringify({
      to,
      template: "verification_code",
      variables: { code: String(30_000_000 + i) },
      locale: "en",
    });
    const first = await fetch(`${base()}/v1/messages`, { method: "POST", headers, body });
    remember(first, await first.text());
    fake.replyToNumber(to, { kind: "accept" });
    const retry = await fetch(`${base()}/v1/messages`, { method: "POST", headers, body });
    remember(retry, await retry.text());
    throttled.push(first.status, retry.status);
  }

  if (testKeys201 > 19) unexpected.push(`rotating X-Forwarded-For created ${testKeys201} test keys`);
  const alive = await Promise.all(
    instances.map((instance) =>
      fetch(`${instance.baseUrl}/healthz`).then(
        (r) => r.status,
        () => 0,
      ),
    ),
  );
  hostileFindings.push(...unexpected);
  const pumped201 = pumped.filter((answer) => answer.status === 201).length;
  if (pumped201 !== 5)
    hostileFindings.push(`pumping: ${pumped201} of 30 sends to one number went out (limit 5)`);
  if (pumped.some((answer) => answer.text.includes("99599999")))
    hostileFindings.push("pumping: the number was echoed");
  if (throttled.join() !== "503,201,503,201,503,201,503,201") {
    hostileFindings.push(`uBill throttling answered ${throttled.join()}`);
  }
  if (alive.some((status) => status !== 200)) hostileFindings.push("an instance stopped answering /healthz");
  results.push({
    scenario: "hostile",
    requests: sent,
    seconds: Math.round(hostileSeconds),
    statuses: byLabel,
    unexpected: unexpected.slice(0, 20),
    unexpected_count: unexpected.length,
    test_keys_created_with_rotating_x_forwarded_for: testKeys201,
    test_keys_allowed_per_address_and_day: 20,
    pumping: {
      sent: 30,
      "201": pumped.filter((answer) => answer.status === 201).length,
      "429": pumped.filter((answer) => answer.status === 429).length,
      number_echoed: pumped.some((answer) => answer.text.includes("99599999")),
    },
    ubill_throttling_first_then_retry: throttled,
    instances_alive_after: alive,
  });
}

/**
 * The flooder: a Node process (Deno cannot choose a connection's local
 * address) opening `rate` silent connections a second from 127.0.0.2 to each
 * port for `seconds`, holding each until the server closes it. It prints what
 * it saw as one JSON line.
 */
const FLOODER = `
const net = require("node:net");
const [ports, rate, seconds] = [process.argv[1].split(",").map(Number), Number(process.argv[2]), Number(process.argv[3])];
const stats = { opened: 0, closed_by_server: 0, refused_503: 0, most_held: 0, connect_errors: 0 };
const held = new Set();
const tick = setInterval(() => {
  for (let i = 0; i < rate / 100; i++) {
    for (const port of ports) {
      if (held.size >= 4000) return;
      const socket = net.connect({ port, host: "127.0.0.1", localAddress: "127.0.0.2" });
      stats.opened++;
      held.add(socket);
      stats.most_held = Math.max(stats.most_held, held.size);
      socket.on("data", (chunk) => { if (chunk.toString("latin1").startsWith("HTTP/1.1 503")) stats.refused_503++; });
      socket.on("error", () => { stats.connect_errors++; });
      socket.on("close", () => { if (held.delete(socket)) stats.closed_by_server++; });
    }
  }
}, 10);
setTimeout(() => {
  clearInterval(tick);
  const open = held.size;
  for (const socket of held) { held.delete(socket); socket.destroy(); }
  console.log(JSON.stringify({ ...stats, open_at_end: open }));
}, seconds * 1000);
`;

/** What the flood scenario saw that it should not have. */
const floodFindings: string[] = [];

/** Flood scenario: one address floods connections; the clients and the health probes must not notice. */
async function floodScenario() {
  const ports = instances.map((instance) => new URL(instance.baseUrl).port).join(",");
  const flooder = new Deno.Command("node", {
    args: ["-e", FLOODER, ports, String(FLOOD_RATE), String(DURATION_S)],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  // The probes and a newcomer open a new connection for every request (the
  // senders' pooled keep-alive connections were opened before the flood).
  const fresh = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
  const probes: number[] = [];
  const newcomer: number[] = [];
  const result = await underLoad("flood", DURATION_S, async (elapsed) => {
    while (elapsed() < DURATION_S) {
      for (const instance of instances) {
        const status = (path: string, headers: Record<string, string> = {}) =>
          fetch(`${instance.baseUrl}${path}`, { client: fresh, headers }).then(
            async (response) => {
              await response.body?.cancel();
              return response.status;
            },
            () => 0,
          );
        probes.push(await status("/healthz"));
        newcomer.push(await status("/v1/messages/msg_flood", { Authorization: `Bearer ${TEST_KEY}` }));
      }
      await sleep(100);
    }
  });
  fresh.close();
  const flood = JSON.parse(new TextDecoder().decode((await flooder).stdout).trim() || "{}") as Record<
    string,
    number
  >;
  const refused = counts["flood: 503"] ?? 0;
  if (refused > 0) floodFindings.push(`flood: the senders met ${refused} answers 503 during the flood`);
  const failedProbes = probes.filter((status) => status !== 200).length;
  if (failedProbes > 0)
    floodFindings.push(`flood: ${failedProbes} of ${probes.length} /healthz probes failed`);
  const failedNewcomer = newcomer.filter((status) => status !== 404).length;
  if (failedNewcomer > 0)
    floodFindings.push(`flood: ${failedNewcomer} of ${newcomer.length} reads on new connections failed`);
  if (!(flood.opened > 0)) floodFindings.push("flood: the flooder opened no connection");
  results.push({
    ...result,
    flood_rate_per_second_per_instance: FLOOD_RATE,
    flooder: flood,
    healthz_probes_on_new_connections: probes.length,
    healthz_failed: failedProbes,
    reads_on_new_connections: newcomer.length,
    reads_failed: failedNewcomer,
  });
}

if (SCENARIOS.includes("flood")) await floodScenario();

// ---------------------------------------------------------------- settle, then check

// The recovery sweep settles messages left queued by the kill (and by give-ups).
const settleBegin = Date.now();
for (;;) {
  const { rows } = await direct.query("SELECT count(*)::int AS n FROM messages WHERE status = 'queued'");
  if (rows[0].n === 0 || Date.now() - settleBegin > (QUEUED_RECOVERY_SECONDS * 3 + 60) * 1000) break;
  await sleep(1_000);
}

const violations: string[] = [...hostileFindings.map((finding) => `hostile: ${finding}`), ...floodFindings];
const { rows: messages } = await direct.query(
  "SELECT id, project_id, mode::text AS mode, status::text AS status, provider_ref, credits_reserved FROM messages",
);
const { rows: records } = await direct.query(
  "SELECT project_id, mode::text AS mode, key, message_id, response_body FROM idempotency_records",
);
const messageById = new Map(messages.map((row: { id: string }) => [row.id, row]));
const recordByKey = new Map(
  records.map((row: { mode: string; key: string }) => [`${row.mode}|${row.key}`, row]),
);

// Nothing acknowledged lost; one id per key.
for (const record of keys) {
  for (const problem of record.problems) violations.push(`${record.key}: ${problem}`);
  if (record.end === "gave_up")
    violations.push(`${record.key}: no definitive answer within ${KEY_DEADLINE_MS / 1000} s`);
  const ids = new Set(record.acks.map((ack) => ack.id));
  if (ids.size > 1) violations.push(`${record.key}: acknowledged as ${ids.size} different messages`);
  for (const id of ids) {
    if (!messageById.has(id)) violations.push(`${record.key}: acknowledged message ${id} is missing`);
    const owner = recordByKey.get(`${record.mode}|${record.key}`) as { message_id: string } | undefined;
    if (owner?.message_id !== id)
      violations.push(`${record.key}: its idempotency record names another message`);
  }
}
// Every message is owned by exactly one key.
const owners = new Map<string, number>();
for (const row of records as Array<{ message_id: string }>)
  owners.set(row.message_id, (owners.get(row.message_id) ?? 0) + 1);
for (const row of messages as Array<{ id: string }>) {
  if ((owners.get(row.id) ?? 0) !== 1)
    violations.push(`message ${row.id} is owned by ${owners.get(row.id) ?? 0} keys`);
}
// No SMS sent twice: every code reached uBill at most once (the throttled ones
// twice: refused with 429/503 first, then sent by the retry).
const sendsPerCode = new Map<string, number>();
for (const request of fake.sends()) {
  const code = /\b(\d{8})\b/.exec(String((request.json as { text?: string } | undefined)?.text ?? ""))?.[1];
  if (code) sendsPerCode.set(code, (sendsPerCode.get(code) ?? 0) + 1);
}
const duplicateSms = [...sendsPerCode.entries()].filter(
  ([code, n]) => n > (throttledCodes.has(code) ? 2 : 1),
);
for (const [code, n] of duplicateSms) violations.push(`the SMS with code ${code} reached uBill ${n} times`);
const recordedRefs = new Set(
  (messages as Array<{ provider_ref: string | null }>).map((row) => row.provider_ref).filter(Boolean),
);
// Credits balanced.
const {
  rows: [project],
} = await direct.query(
  "SELECT credit_balance, (SELECT COALESCE(sum(amount), 0)::int FROM credit_ledger WHERE project_id = $1) AS ledger FROM projects WHERE id = $1",
  [LIVE_PROJECT],
);
const charged = (messages as Array<{ project_id: string; status: string; credits_reserved: number }>)
  .filter((row) => row.project_id === LIVE_PROJECT && row.status !== "failed")
  .reduce((sum, row) => sum + Number(row.credits_reserved), 0);
if (project.credit_balance !== project.ledger)
  violations.push(`balance ${project.credit_balance} != ledger sum ${project.ledger}`);
if (LIVE_CREDITS - project.credit_balance !== charged) {
  violations.push(
    `charged ${LIVE_CREDITS - project.credit_balance} credits for ${charged} messages that keep them`,
  );
}
const leftQueued = (messages as Array<{ status: string }>).filter((row) => row.status === "queued").length;
if (leftQueued > 0) violations.push(`${leftQueued} messages still queued after the sweep`);

// No secret leaked.
const FULL_NUMBER = /\+?9955(?!0000000[1-4])\d{8}/;
const smsIds = fake.sends().length > 0 ? [...recordedRefs].map(String) : [];
const haystacks = { responses: responsesSeen.join("\n"), logs: serverOutput.join("\n") };
for (const [name, text] of Object.entries(haystacks)) {
  const leaks: Array<[string, boolean]> = [
    ["the uBill key", text.includes(UBILL_KEY)],
    ["the live API key", text.includes(LIVE_KEY)],
    ["an API key", /sk_(live|test)_[A-Za-z0-9_-]{43}/.test(text)],
    // The simulator's documented numbers (+995500000001…4) are named in every test key's next_steps.
    ["a full number", FULL_NUMBER.test(text)],
    ["a message text", /verification code is/.test(text)],
    ["a uBill message id", smsIds.some((id) => text.includes(`"${id}"`) || text.includes(`/${id}`))],
    ["the database URL", /postgres(ql)?:\/\//.test(text)],
  ];
  for (const [what, found] of leaks) if (found) violations.push(`${name} contain ${what}`);
  const number = new RegExp(`.{0,60}${FULL_NUMBER.source}.{0,20}`).exec(text);
  if (number) violations.push(`${name}: a full number in …${number[0]}…`);
}

const summary = {
  command: `npm run bench -- faults ${Deno.args.join(" ")}`.trim(),
  clients: CLIENTS,
  duration_s: DURATION_S,
  scenarios: results,
  totals: {
    logical_sends: keys.length,
    acknowledged: keys.filter((record) => record.end === "acked").length,
    gave_up: keys.filter((record) => record.end === "gave_up").length,
    messages: messages.length,
    by_status: Object.fromEntries(
      ["submitted", "delivered", "undeliverable", "failed", "unknown", "queued"].map((status) => [
        status,
        (messages as Array<{ status: string }>).filter((row) => row.status === status).length,
      ]),
    ),
    sms_sent_to_ubill: fake.sends().length,
    ubill_references_recorded: recordedRefs.size,
    // Live messages that ended unknown without a reference: sends in flight when a process was killed.
    live_unknown_without_reference: (
      messages as Array<{ mode: string; status: string; provider_ref: string | null }>
    ).filter((row) => row.mode === "live" && row.status === "unknown" && row.provider_ref === null).length,
    credit_balance: project.credit_balance,
    ledger_sum: project.ledger,
    credits_charged: LIVE_CREDITS - project.credit_balance,
    server_log_lines: serverOutput.length,
    answers: counts,
  },
  invariants: {
    nothing_acknowledged_lost: !violations.some((v) => /missing|another message/.test(v)),
    no_key_produced_two_messages: !violations.some((v) =>
      /different messages|owned by|reached uBill/.test(v),
    ),
    credits_balanced: !violations.some((v) => /balance|charged/.test(v)),
    no_secret_leaked: !violations.some((v) => / contain /.test(v)),
  },
  violations: violations.slice(0, 50),
  violation_count: violations.length,
};
console.log(JSON.stringify(summary, null, 2));
if (args["server-log"]) await Deno.writeTextFile(String(args["server-log"]), `${serverOutput.join("\n")}\n`);

clearInterval(deliveries);
for (const instance of instances) {
  instance.child.kill("SIGTERM");
  await instance.exited;
}
await direct.end();
await proxy.close();
await fake.close();
await database.drop();
Deno.exit(violations.length === 0 ? 0 : 1);
