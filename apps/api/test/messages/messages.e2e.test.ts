// Messages end to end: the real Deno process over HTTP. The rows of the spec's
// tables (test numbers, replays, conflicts, scoping, 404s, masks, timestamps),
// settling within about 30 s at the default 20 s / 5 s timing, concurrent
// duplicates on one and on two instances, a crash mid-send, and the status
// check run by two worker processes.
import { Buffer } from "node:buffer";
import { generateKeySpec } from "@sms/crypto";
import { createDatabase } from "@sms/db";
import { availableBackends, type PrismaDatabase, withPrisma } from "@sms/db/testing";
import { type FakeUbill, startFakeUbill } from "@sms/provider-ubill/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerProcess, sendMessageRequest, startServer } from "../harness.ts";
import {
  body,
  expectMessageShape,
  insertLiveKey,
  type MessageJson,
  ORDINARY,
  type SendBody,
  SIM,
  sleep,
  until,
} from "../support/messages.ts";

const backends = await availableBackends();
const hasPostgres = backends.includes("postgres");
const KEY_LIMITS = {
  TEST_KEYS_PER_MINUTE: "1000",
  TEST_KEYS_PER_DAY: "1000",
  TEST_KEYS_PER_DAY_TOTAL: "100000",
};
// Every instance of one deployment shares the message keyring (it encrypts the
// number and keys the idempotency fingerprints); production requires it.
const SHARED_KEYRING = { MESSAGE_ENCRYPTION_KEYS: generateKeySpec("e2e") };
type ErrorJson = { error: { code: string; message: string; request_id: string } };

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  // Newest first: secondary servers stop before the one that owns the database.
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

async function server(options: Parameters<typeof startServer>[0]): Promise<ServerProcess> {
  const started = await startServer(options);
  cleanups.push(() => started.cleanup());
  return started;
}

async function fakeUbill(): Promise<FakeUbill> {
  const fake = await startFakeUbill();
  cleanups.push(() => fake.close());
  return fake;
}

async function database(databaseUrl: string | undefined): Promise<PrismaDatabase> {
  if (!databaseUrl) throw new Error("no database URL");
  const db = withPrisma(await createDatabase({ databaseUrl, poolSize: 2 }));
  cleanups.push(() => db.close());
  return db;
}

const ubillEnv = (fake: FakeUbill) => ({
  UBILL_BASE_URL: fake.baseUrl,
  UBILL_API_KEY: fake.apiKey,
  UBILL_DEFAULT_BRAND_ID: "1",
});

function client(baseUrl: string) {
  return {
    async testKey(): Promise<{ api_key: string; project_id: string }> {
      const response = await fetch(`${baseUrl}/v1/test-keys`, { method: "POST" });
      if (response.status !== 201) throw new Error(`test key: ${response.status}`);
      return (await response.json()) as { api_key: string; project_id: string };
    },
    send: (apiKey: string, idempotencyKey: string | null, payload: unknown) =>
      fetch(`${baseUrl}/v1/messages`, sendMessageRequest(apiKey, idempotencyKey, payload)),
    read: (apiKey: string, id: string) =>
      fetch(`${baseUrl}/v1/messages/${id}`, { headers: { Authorization: `Bearer ${apiKey}` } }),
  };
}

/**
 * Spec 6 polling: first read after `firstMs` (spec: about 2 s), doubling, capped at `capMs` (spec: 30 s).
 * Returns the first final state, or the state read once `giveUpMs` have passed.
 */
async function pollUntilFinal(
  read: () => Promise<MessageJson>,
  options: { firstMs: number; capMs: number; giveUpMs: number },
): Promise<MessageJson> {
  const started = Date.now();
  let wait = options.firstMs;
  for (;;) {
    await sleep(wait);
    const message = await read();
    if (message.status !== "submitted" && message.status !== "queued") return message;
    if (Date.now() - started > options.giveUpMs) return message;
    wait = Math.min(wait * 2, options.capMs);
  }
}

const seconds = (timestamp: string) => Date.parse(timestamp) / 1000;

describe("the spec's tables over HTTP", () => {
  const backend = hasPostgres ? "postgres" : "pglite";
  let api: ServerProcess;
  let http: ReturnType<typeof client>;
  let apiKey: string;

  beforeAll(async () => {
    api = await server({
      backend,
      env: { ...KEY_LIMITS, STATUS_CHECK_INTERVAL_SECONDS: "1", SIMULATOR_DELIVERY_DELAY_MS: "500" },
    });
    http = client(api.baseUrl);
    apiKey = (await http.testKey()).api_key;
  });

  const readJson = async (key: string, id: string) =>
    (await (await http.read(key, id)).json()) as MessageJson;

  it("answers each test-mode recipient as the spec's table says, and settles the accepted ones", async () => {
    const rows: Array<
      [to: string, status: number, initial: string | null, errorCode: string | null, final: string | null]
    > = [
      [SIM.rejected, 201, "failed", "provider_rejected", null],
      [SIM.unreachable, 503, null, "provider_unavailable", null],
      [SIM.indeterminate, 201, "unknown", "provider_unavailable", null],
      [SIM.undeliverable, 201, "submitted", null, "undeliverable"],
      [ORDINARY, 201, "submitted", null, "delivered"],
    ];
    const settling: Array<{ message: MessageJson; final: string }> = [];
    for (const [to, status, initial, errorCode, final] of rows) {
      const response = await http.send(apiKey, `table-${to}`, body({ to }));
      expect(response.status, to).toBe(status);
      if (status === 503) {
        expect(((await response.json()) as ErrorJson).error.code).toBe(errorCode);
        expect(response.headers.get("retry-after")).toBe("5");
        // Retry is safe: nothing was kept under the key.
        expect((await http.send(apiKey, `table-${to}`, body({ to }))).status).toBe(503);
        continue;
      }
      const message = (await response.json()) as MessageJson;
      expectMessageShape(message, to);
      expect(message.status).toBe(initial);
      expect(message.error?.code ?? null).toBe(errorCode);
      if (final) settling.push({ message, final });
    }
    for (const { message, final } of settling) {
      const settled = await pollUntilFinal(() => readJson(apiKey, message.id), {
        firstMs: 200,
        capMs: 1_000,
        giveUpMs: 10_000,
      });
      expect(settled.status).toBe(final);
      expect(settled.created_at).toBe(message.created_at);
      expect(settled.updated_at >= message.updated_at).toBe(true);
      if (final === "undeliverable") expect(settled.error?.code).toBe("invalid_recipient");
      else expect(settled.error).toBeNull();
    }
  });

  it("replays the original answer byte for byte, refuses a changed body with 409, and scopes keys to the project", async () => {
    const first = await http.send(apiKey, "replay-1", body());
    expect(first.status).toBe(201);
    const text = await first.text();
    const replay = await http.send(apiKey, "replay-1", body());
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await replay.text()).toBe(text);

    const changed = await http.send(apiKey, "replay-1", body({ variables: { code: "999999" } }));
    expect(changed.status).toBe(409);
    const conflict = (await changed.json()) as ErrorJson;
    expect(conflict.error.code).toBe("idempotency_key_reused");
    expect(conflict.error.request_id).toBe(changed.headers.get("x-request-id"));

    const other = (await http.testKey()).api_key;
    const elsewhere = await http.send(other, "replay-1", body());
    expect(elsewhere.status).toBe(201);
    expect(((await elsewhere.json()) as MessageJson).id).not.toBe((JSON.parse(text) as MessageJson).id);
  });

  it("reads a message in its creation shape and answers 404 alike for other projects', absent and malformed ids", async () => {
    const created = (await (
      await http.send(apiKey, "read-1", body({ to: "+995599000042" }))
    ).json()) as MessageJson;
    const own = await http.read(apiKey, created.id);
    expect(own.status).toBe(200);
    const message = (await own.json()) as MessageJson;
    expectMessageShape(message, "+995599000042");
    expect(message.to).toBe("+9955••••••42");
    expect(message.id).toBe(created.id);

    const stranger = (await http.testKey()).api_key;
    const answers = new Set<string>();
    for (const id of [created.id, `msg_${"0".repeat(26)}`, "not-an-id", created.id.toUpperCase()]) {
      const response = await http.read(stranger, id);
      expect(response.status).toBe(404);
      const { error } = (await response.json()) as ErrorJson;
      answers.add(`${error.code}|${error.message}`);
    }
    expect([...answers]).toEqual([expect.stringMatching(/^message_not_found\|/)]);
    expect((await http.read("sk_test_nope", created.id)).status).toBe(401);
  });

  it("keeps the validation order: credentials, Idempotency-Key, body, to, template, variables", async () => {
    const bad = { to: "12", template: "x", variables: 1 };
    const expectCode = async (response: Response, status: number, code: string) => {
      expect(response.status).toBe(status);
      expect(((await response.json()) as ErrorJson).error.code).toBe(code);
    };
    await expectCode(
      await fetch(`${api.baseUrl}/v1/messages`, { method: "POST", body: "{" }),
      401,
      "unauthorized",
    );
    await expectCode(await http.send(apiKey, null, bad), 400, "idempotency_key_required");
    await expectCode(await http.send(apiKey, "x".repeat(201), bad), 400, "invalid_request");
    await expectCode(await http.send(apiKey, "order", { ...bad, from: "ME" }), 400, "invalid_request");
    await expectCode(await http.send(apiKey, "order", bad), 400, "invalid_recipient");
    await expectCode(await http.send(apiKey, "order", { ...bad, to: ORDINARY }), 400, "invalid_template");
    await expectCode(
      await http.send(apiKey, "order", { ...bad, to: ORDINARY, template: "login_code" }),
      400,
      "invalid_variables",
    );
    expect((await http.send(apiKey, "order", body())).status).toBe(201);
  });

  it("creates one message for 50 identical requests at once; every duplicate waits for it and replays it", async () => {
    const { api_key: key, project_id: projectId } = await http.testKey();
    const responses = await Promise.all(Array.from({ length: 50 }, () => http.send(key, "burst", body())));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 200)).toHaveLength(49);
    const texts = await Promise.all(responses.map((response) => response.text()));
    expect(new Set(texts).size).toBe(1);
    if (api.databaseUrl) {
      const db = await database(api.databaseUrl);
      expect(await db.prisma.message.count({ where: { projectId } })).toBe(1);
    }
  });

  it("counts Idempotency-Key in characters (sent as UTF-8) and refuses a variable named __proto__", async () => {
    // Deno hands header values over one byte per character: 150 Cyrillic
    // characters arrive as 300. The key is decoded before it is counted.
    const cyrillic = Buffer.from("ж".repeat(150), "utf8").toString("latin1");
    const first = await http.send(apiKey, cyrillic, body());
    expect(first.status).toBe(201);
    const replay = await http.send(apiKey, cyrillic, body());
    expect(replay.status).toBe(200);
    expect(await replay.text()).toBe(await first.text());
    const tooLong = await http.send(apiKey, Buffer.from("ж".repeat(201), "utf8").toString("latin1"), body());
    expect(tooLong.status).toBe(400);

    for (const value of ['"x"', '{"link":"https://evil.example"}']) {
      const response = await http.send(
        apiKey,
        `proto-${value.length}`,
        `{"to":"${ORDINARY}","template":"verification_code","variables":{"code":"482913","__proto__":${value}}}`,
      );
      expect(response.status).toBe(400);
      expect(((await response.json()) as ErrorJson).error.code).toBe("invalid_variables");
    }
  });
});

describe("settling at the default timing (20 s status check, 5 s simulated delay)", () => {
  it("reaches delivered and undeliverable within about 30 s of creation, polling as spec 6 recommends", async () => {
    const api = await server({ backend: hasPostgres ? "postgres" : "pglite", env: KEY_LIMITS });
    const http = client(api.baseUrl);
    const { api_key: apiKey } = await http.testKey();
    const created = await Promise.all(
      [ORDINARY, SIM.undeliverable].map(async (to) => {
        const response = await http.send(apiKey, `settle-${to}`, body({ to }));
        expect(response.status).toBe(201);
        return { message: (await response.json()) as MessageJson };
      }),
    );
    const settled = await Promise.all(
      created.map(({ message }) =>
        pollUntilFinal(async () => (await (await http.read(apiKey, message.id)).json()) as MessageJson, {
          firstMs: 2_000,
          capMs: 30_000,
          giveUpMs: 29_000,
        }),
      ),
    );
    expect(settled.map((message) => message.status)).toEqual(["delivered", "undeliverable"]);
    for (const message of settled) {
      const createdAt = seconds(message.created_at);
      // The transition itself happened within about 30 s of creation and not
      // before the simulated delay (the server's own timestamps). The caller
      // saw it by its 29 s poll, or the status above would not be final.
      expect(seconds(message.updated_at) - createdAt).toBeLessThanOrEqual(30);
      expect(seconds(message.updated_at) - createdAt).toBeGreaterThanOrEqual(5);
    }
  }, 60_000);
});

describe.skipIf(!hasPostgres)("two instances on one PostgreSQL database", () => {
  let fake: FakeUbill;
  let first: ServerProcess;
  let second: ServerProcess;
  let db: PrismaDatabase;

  beforeAll(async () => {
    fake = await fakeUbill();
    const env = {
      ...KEY_LIMITS,
      ...SHARED_KEYRING,
      ...ubillEnv(fake),
      JOBS_ENABLED: "false",
      LOG_LEVEL: "info",
    };
    first = await server({ backend: "postgres", env });
    second = await server({ backend: "postgres", databaseUrl: first.databaseUrl, env });
    db = await database(first.databaseUrl);
  });

  async function burst(apiKey: string, payload: SendBody, idempotencyKey: string, count: number) {
    const servers = [client(first.baseUrl), client(second.baseUrl)];
    const responses = await Promise.all(
      Array.from(
        { length: count },
        (_, index) => servers[index % 2]?.send(apiKey, idempotencyKey, payload) as Promise<Response>,
      ),
    );
    const statuses = responses.map((response) => response.status);
    const bodies = (await Promise.all(responses.map((response) => response.json()))) as Array<
      MessageJson | ErrorJson
    >;
    return { statuses, bodies };
  }

  it("sends a live message once for 60 identical requests split across both instances", async () => {
    const { apiKey, projectId } = await insertLiveKey(db.prisma, { credits: 10 });
    // uBill takes 300 ms: many duplicates arrive while the first is in flight.
    fake.replyToNumber(ORDINARY, { kind: "slow", delayMs: 300 });
    const sendsBefore = fake.sends().length;
    const { statuses, bodies } = await burst(apiKey, body(), "two-instances-live", 60);
    fake.replyToNumber(ORDINARY, { kind: "accept" });

    // One sends; every duplicate, on either instance, waits for its answer and replays it.
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 200)).toHaveLength(59);
    expect(new Set(bodies.map((json) => JSON.stringify(json))).size).toBe(1);
    expect(fake.sends().length - sendsBefore).toBe(1);
    expect(await db.prisma.message.count({ where: { projectId } })).toBe(1);
    const project = await db.prisma.project.findUniqueOrThrow({ where: { id: projectId } });
    expect(project.creditBalance).toBe(9);
  });

  it("creates one test message for 60 identical requests split across both instances", async () => {
    const testKey = await client(first.baseUrl).testKey();
    const { statuses, bodies } = await burst(
      testKey.api_key,
      body({ to: "+995555777888" }),
      "two-instances-test",
      60,
    );
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 200)).toHaveLength(59);
    expect(new Set(bodies.map((json) => JSON.stringify(json))).size).toBe(1);
    expect(await db.prisma.message.count({ where: { projectId: testKey.project_id } })).toBe(1);
  });

  it("lets two --role=worker processes share the status check: no message is asked about twice in a round", async () => {
    const { apiKey } = await insertLiveKey(db.prisma, { credits: 20 });
    const http = client(first.baseUrl);
    const created: MessageJson[] = [];
    for (let i = 0; i < 8; i++) {
      const response = await http.send(apiKey, `worker-${i}`, body({ to: `+99555512000${i}` }));
      expect(response.status).toBe(201);
      created.push((await response.json()) as MessageJson);
    }
    const refs = await db.prisma.message.findMany({
      where: { id: { in: created.map((message) => message.id) } },
      select: { id: true, providerRef: true },
    });

    // The claim log: every claim (a `submitted` message whose next check
    // moves on) is written down by a trigger with the due time it was
    // claimed at. A message claimed twice in one round would show up as two
    // claims of the same due time. A claim holds a batch for as long as its
    // calls may take, then the round sets a pending message's next check to
    // one interval after its answer: that move is not a claim (the row was
    // not due, its check lay a claim's hold ahead) and is logged apart.
    await db.query(
      `CREATE TABLE test_claim_log (message_id text NOT NULL, due_at timestamptz NOT NULL, claimed boolean NOT NULL)`,
    );
    await db.query(`
      CREATE FUNCTION test_log_claim() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO test_claim_log (message_id, due_at, claimed)
        VALUES (OLD.id, OLD.next_check_at, OLD.next_check_at <= now() + interval '30 seconds');
        RETURN NEW;
      END $$`);
    await db.query(`
      CREATE TRIGGER test_log_claim AFTER UPDATE OF next_check_at ON messages FOR EACH ROW
      WHEN (OLD.status = 'submitted' AND NEW.status = 'submitted' AND NEW.next_check_at IS DISTINCT FROM OLD.next_check_at)
      EXECUTE FUNCTION test_log_claim()`);
    const claims = async () =>
      db.query<{ message_id: string; due_at: Date }>(
        "SELECT message_id, due_at FROM test_claim_log WHERE message_id = ANY($1) AND claimed",
        [refs.map((ref) => ref.id)],
      );
    const reportsFor = (providerRef: string | null) =>
      fake.requests.filter(
        (request) => request.endpoint === "report" && request.path === `/v1/sms/report/${providerRef}`,
      ).length;

    const intervalS = 2;
    const WORKER_TOKEN = "worker-TEST-internal-token-0123456789";
    const workerEnv = {
      ...SHARED_KEYRING,
      ...ubillEnv(fake),
      STATUS_CHECK_INTERVAL_SECONDS: String(intervalS),
      LOG_LEVEL: "info",
    };
    try {
      const workers = await Promise.all(
        [1, 2].map((n) =>
          server({
            backend: "postgres",
            databaseUrl: first.databaseUrl,
            args: ["--role=worker"],
            env: workerEnv,
            // The first worker also opens its internal listener: its /metrics.
            ...(n === 1 ? { internalToken: WORKER_TOKEN } : {}),
          }),
        ),
      );
      await Promise.all(
        workers.map((worker) => worker.waitForOutput((line) => line.includes('"msg":"worker started"'))),
      );
      // uBill keeps answering "sent" (pending): let both workers run several rounds.
      await until(
        async () => {
          const log = await claims();
          return refs.every((ref) => log.filter((claim) => claim.message_id === ref.id).length >= 3);
        },
        60_000,
        200,
      );
      for (const ref of refs) fake.setReport(ref.providerRef ?? "", "1");
      await until(
        async () =>
          (await db.prisma.message.count({
            where: { id: { in: refs.map((r) => r.id) }, status: "delivered" },
          })) === refs.length,
        30_000,
        200,
      );
      // Let the workers run a few more rounds over the settled messages.
      const settledClaims = (await claims()).length;
      await sleep(intervalS * 2_500);

      const log = await claims();
      // Final: a delivered message is never claimed again.
      expect(log).toHaveLength(settledClaims);
      for (const ref of refs) {
        const mine = log.filter((claim) => claim.message_id === ref.id);
        const dueTimes = mine.map((claim) => new Date(claim.due_at).getTime());
        // At most once per round: no due time was claimed twice, by either worker.
        expect(new Set(dueTimes).size, ref.id).toBe(dueTimes.length);
        // And each claim asked uBill exactly once.
        expect(reportsFor(ref.providerRef), ref.id).toBe(mine.length);
      }
      // While uBill answered "sent", each answer set the next check one interval ahead (not a claim).
      const [rescheduled] = await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM test_claim_log WHERE message_id = ANY($1) AND NOT claimed",
        [refs.map((ref) => ref.id)],
      );
      expect(rescheduled?.n).toBeGreaterThanOrEqual(refs.length);
      const delivered = await db.prisma.message.findMany({ where: { id: { in: refs.map((r) => r.id) } } });
      expect(delivered.every((row) => row.status === "delivered" && row.nextCheckAt === null)).toBe(true);

      // A worker serves no public port, but its internal listener scrapes its rounds.
      const scrape = await fetch(`${workers[0]?.internalUrl}/metrics`, {
        headers: { Authorization: `Bearer ${WORKER_TOKEN}` },
      });
      expect(scrape.status).toBe(200);
      const text = await scrape.text();
      const rounds = /^sms_job_round_duration_seconds_count\{job="status-check"\} (\d+)/m.exec(text);
      expect(Number(rounds?.[1] ?? 0)).toBeGreaterThan(0);
      expect(text).not.toContain(apiKey);
    } finally {
      await db.query("DROP TRIGGER IF EXISTS test_log_claim ON messages");
      await db.query("DROP FUNCTION IF EXISTS test_log_claim()");
      await db.query("DROP TABLE IF EXISTS test_claim_log");
    }
  }, 150_000);
});

describe.skipIf(!hasPostgres)("a crash mid-send", () => {
  it("leaves the message queued; after a restart the sweep makes it unknown, the key replays it, nothing is sent twice", async () => {
    const fake = await fakeUbill();
    const env = {
      ...KEY_LIMITS,
      ...SHARED_KEYRING,
      ...ubillEnv(fake),
      UBILL_SUBMIT_TIMEOUT_MS: "60000",
      QUEUED_RECOVERY_SECONDS: "120",
    };
    const api = await server({ backend: "postgres", env });
    const db = await database(api.databaseUrl);
    const { apiKey, projectId } = await insertLiveKey(db.prisma, { credits: 5 });

    // uBill holds the submission: the request is provably in flight when the process dies.
    fake.replyNext({ kind: "slow", delayMs: 60_000 }, "send");
    const inFlight = client(api.baseUrl)
      .send(apiKey, "crash-1", body())
      .then((response) => response.status)
      .catch(() => "connection lost");
    await until(() => fake.sends().length === 1, 10_000);
    await api.stop("SIGKILL");
    expect(await inFlight).toBe("connection lost");

    const stuck = await db.prisma.message.findFirstOrThrow({ where: { projectId } });
    expect(stuck.status).toBe("queued");
    const record = await db.prisma.idempotencyRecord.findFirstOrThrow({ where: { projectId } });
    expect(record.responseBody).toBeNull();

    const restarted = await server({
      backend: "postgres",
      databaseUrl: api.databaseUrl,
      // The restarted server only recovers; its own sends need no long timeout.
      env: { ...env, QUEUED_RECOVERY_SECONDS: "5", UBILL_SUBMIT_TIMEOUT_MS: "2000" },
    });
    await until(
      async () =>
        (await db.prisma.message.findFirstOrThrow({ where: { id: stuck.id } })).status === "unknown",
      20_000,
      200,
    );
    const http = client(restarted.baseUrl);
    const retry = await http.send(apiKey, "crash-1", body());
    expect(retry.status, await retry.clone().text()).toBe(200);
    const replayed = (await retry.json()) as MessageJson;
    expectMessageShape(replayed, ORDINARY);
    expect(replayed).toMatchObject({
      id: stuck.id,
      status: "unknown",
      error: { code: "provider_unavailable" },
    });
    expect(await (await http.read(apiKey, stuck.id)).json()).toEqual(replayed);
    expect(fake.sends()).toHaveLength(1);
    // Unknown keeps the credit charged.
    expect((await db.prisma.project.findUniqueOrThrow({ where: { id: projectId } })).creditBalance).toBe(4);
  }, 90_000);
});
