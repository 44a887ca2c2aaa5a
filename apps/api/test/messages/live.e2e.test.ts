// Live sending end to end: the real Deno server over HTTP, its live provider
// pointed at a fake uBill on loopback, PostgreSQL shared with this process
// (which claims projects and runs the operator's domain functions on it).
// Every uBill outcome through the API, the credit arithmetic, 402, a parallel
// burst, the free-tier boundary, the status check driving live messages to
// delivered / undeliverable, 503, and no uBill secret, id or raw status in any
// response or log line.
import { generateKeySpec } from "@sms/crypto";
import { createDatabase } from "@sms/db";
import {
  availableBackends,
  createPostgresTestDatabase,
  type PostgresTestDatabase,
  type PrismaDatabase,
  withPrisma,
} from "@sms/db/testing";
import {
  createStore,
  grantPaidCredits,
  listCreditLedger,
  nextUtcMidnight,
  projectBalance,
  systemClock,
} from "@sms/domain";
import { type FakeUbill, type FakeUbillReply, startFakeUbill } from "@sms/provider-ubill/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestKey, type ServerProcess, startServer } from "../harness.ts";
import { ACTOR, claimWithLiveKey } from "../support/live-projects.ts";
import { recordingClient } from "../support/messages.ts";

const hasPostgres = (await availableBackends()).includes("postgres");
const UBILL_KEY = "ubill-e2e-secret-81c4d0";
const FIRST_SMS_ID = 64_270_001;
const SUBMIT_TIMEOUT_MS = 3_000;
/** Both instances of the places test share it, as production's instances must (a replay across them). */
const KEYS = generateKeySpec("live-e2e");
const BODY = { to: "+995555123456", template: "login_code", variables: { code: "90210" }, locale: "ka" };

describe.skipIf(!hasPostgres)("live sending end to end (Deno server, PostgreSQL, fake uBill)", () => {
  let fake: FakeUbill;
  let pg: PostgresTestDatabase;
  let db: PrismaDatabase;
  let server: ServerProcess;

  beforeAll(async () => {
    fake = await startFakeUbill({ apiKey: UBILL_KEY, firstSmsId: FIRST_SMS_ID });
    pg = await createPostgresTestDatabase();
    db = withPrisma(await createDatabase({ databaseUrl: pg.databaseUrl, poolSize: 4 }));
    server = await startServer({
      backend: "postgres",
      databaseUrl: pg.databaseUrl,
      env: {
        UBILL_BASE_URL: fake.baseUrl,
        UBILL_API_KEY: UBILL_KEY,
        UBILL_DEFAULT_BRAND_ID: "1",
        UBILL_SUBMIT_TIMEOUT_MS: String(SUBMIT_TIMEOUT_MS),
        UBILL_STATUS_TIMEOUT_MS: "3000",
        MESSAGE_ENCRYPTION_KEYS: KEYS,
        STATUS_CHECK_INTERVAL_SECONDS: "1",
        MESSAGES_PER_MINUTE: "1000",
        TEST_KEYS_PER_MINUTE: "1000",
        TEST_KEYS_PER_DAY: "1000",
        FREE_TIER_DAILY_SEGMENTS: "20",
        // Every send here goes to one number; the per-recipient limits have their own suite.
        RECIPIENT_MESSAGES_PER_MINUTE: "10000",
        RECIPIENT_MESSAGES_PER_DAY: "10000",
      },
    });
  }, 120_000);
  afterAll(async () => {
    await server?.cleanup();
    await db?.close();
    await pg?.drop();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  const ops = () => ({ store: createStore(db), clock: systemClock });
  const call = (path: string, init?: RequestInit) => fetch(`${server.baseUrl}${path}`, init);
  const { responses, send, read } = recordingClient(call, BODY);

  async function liveProject(credits: { free?: number; paid?: number } = {}) {
    const { project_id: projectId } = await createTestKey(call);
    return claimWithLiveKey({ ...ops(), prisma: db.prisma }, projectId, credits);
  }

  async function balanceOf(projectId: string): Promise<number> {
    const balance = await projectBalance({ store: createStore(db) }, { projectId });
    if (!balance.ok) throw new Error("no project");
    expect(balance.consistent).toBe(true);
    return balance.balance;
  }

  async function kindsFor(projectId: string, messageId: string) {
    const ledger = await listCreditLedger({ store: createStore(db) }, { projectId, limit: 100 });
    return ledger
      .filter((entry) => entry.messageId === messageId)
      .map((entry) => entry.kind)
      .sort();
  }

  async function waitForStatus(apiKey: string, id: string, status: string, timeoutMs = 15_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const message = await read(apiKey, id);
      if (message.status === status || Date.now() > deadline) return message;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  it("accepted, then the status check reads uBill's reports: delivered and undeliverable, both stay charged", async () => {
    const { projectId, apiKey } = await liveProject({ paid: 5 });
    const first = await send(apiKey);
    const second = await send(apiKey);
    for (const sent of [first, second]) {
      expect(sent.status).toBe(201);
      expect(sent.body).toMatchObject({ object: "message", status: "submitted", segments: 1, error: null });
    }
    expect(await balanceOf(projectId)).toBe(3);
    expect(fake.sends().map((request) => request.json)).toEqual([
      expect.objectContaining({ brandID: 1, numbers: [995555123456] }),
      expect.objectContaining({ brandID: 1, numbers: [995555123456] }),
    ]);
    const ref = async (id: unknown) =>
      (await db.prisma.message.findFirstOrThrow({ where: { id: id as string } })).providerRef ?? "";
    fake.setReport(await ref(first.body.id), "3"); // awaiting status: still submitted
    fake.setReport(await ref(second.body.id), "2");
    expect(await waitForStatus(apiKey, second.body.id as string, "undeliverable")).toMatchObject({
      status: "undeliverable",
      error: { code: "invalid_recipient" },
    });
    expect((await read(apiKey, first.body.id as string)).status).toBe("submitted");
    fake.setReport(await ref(first.body.id), "1");
    expect(await waitForStatus(apiKey, first.body.id as string, "delivered")).toMatchObject({
      status: "delivered",
      error: null,
    });
    expect(await balanceOf(projectId)).toBe(3);
  }, 60_000);

  const outcomes: Array<[string, string, string, "refunded" | "charged", FakeUbillReply]> = [
    ["statusID 10", "failed", "sender_not_allowed", "refunded", { kind: "status", statusId: 10 }],
    ["statusID 50", "failed", "invalid_recipient", "refunded", { kind: "status", statusId: 50 }],
    // uBill's "general error": nothing says it was not sent (docs/live-sending.md).
    ["statusID 99", "unknown", "provider_unavailable", "charged", { kind: "status", statusId: 99 }],
    ["HTTP 401", "failed", "provider_rejected", "refunded", { kind: "http", status: 401 }],
    [
      "too slow",
      "unknown",
      "provider_unavailable",
      "charged",
      { kind: "slow", delayMs: SUBMIT_TIMEOUT_MS + 2_000 },
    ],
    // After the sends above, Deno's fetch would have a keep-alive connection to reuse (see provider-ubill's http.ts).
    ["connection dropped", "unknown", "provider_unavailable", "charged", { kind: "drop" }],
    ["answer cut off", "unknown", "provider_unavailable", "charged", { kind: "truncate" }],
    ["HTTP 500", "unknown", "provider_unavailable", "charged", { kind: "http", status: 500 }],
  ];
  it.each(outcomes)("uBill %s → 201 %s (%s), credits %s", async (_name, status, code, credits, reply) => {
    const { projectId, apiKey } = await liveProject({ paid: 2 });
    fake.replyNext(reply, "send");
    const key = crypto.randomUUID();
    const sent = await send(apiKey, key);
    expect(sent.status).toBe(201);
    expect(sent.body).toMatchObject({ status, error: { code } });
    const id = sent.body.id as string;
    if (credits === "refunded") {
      expect(await balanceOf(projectId)).toBe(2);
      expect(await kindsFor(projectId, id)).toEqual(["refund", "reservation"]);
    } else {
      expect(await balanceOf(projectId)).toBe(1);
      expect(await kindsFor(projectId, id)).toEqual(["reservation"]);
    }
    // The same Idempotency-Key replays the answer; uBill never sees a second request.
    const replay = await send(apiKey, key);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(sent.body);
    expect(fake.sends()).toHaveLength(1);
  });

  it("uBill balance short (40): 503 provider_unavailable with Retry-After, refunded, nothing kept, the retry safe; an error log for the operator", async () => {
    const { projectId, apiKey } = await liveProject({ paid: 2 });
    fake.replyNext({ kind: "status", statusId: 40 }, "send");
    const key = crypto.randomUUID();
    const sent = await send(apiKey, key);
    expect(sent.status).toBe(503);
    expect(sent.body).toEqual({
      error: { code: "provider_unavailable", message: expect.any(String), request_id: expect.any(String) },
    });
    expect((sent.body.error as { request_id: string }).request_id).toBe(sent.headers.get("x-request-id"));
    expect(Number(sent.headers.get("retry-after"))).toBeGreaterThan(0);
    // The reservation given back in the transaction that removed the queued message.
    expect(await balanceOf(projectId)).toBe(2);
    expect(await db.prisma.message.count({ where: { projectId } })).toBe(0);
    expect(fake.sends()).toHaveLength(1);
    const line = await server.waitForOutput((text) => text.includes("insufficient_provider_balance"), 5_000);
    expect(JSON.parse(line)).toMatchObject({
      level: "error",
      provider: "ubill",
      problem: "insufficient_provider_balance",
    });
    // Nothing was sent, so the same key is a fresh attempt, not a replay: uBill takes it now.
    const retried = await send(apiKey, key);
    expect(retried.status).toBe(201);
    expect(retried.headers.get("idempotent-replayed")).toBeNull();
    expect(retried.body).toMatchObject({ status: "submitted" });
    expect(fake.sends()).toHaveLength(2);
    expect(await balanceOf(projectId)).toBe(1);
  });

  it("402 when credits are short: nothing sent; 50 parallel sends against 10 credits spend exactly 10", async () => {
    const empty = await liveProject();
    const refused = await send(empty.apiKey);
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ error: { code: "insufficient_credits" } });
    expect(fake.sends()).toHaveLength(0);
    expect(await db.prisma.message.count({ where: { projectId: empty.projectId } })).toBe(0);

    const { projectId, apiKey } = await liveProject({ paid: 10 });
    const results = await Promise.all(Array.from({ length: 50 }, () => send(apiKey)));
    const accepted = results.filter((result) => result.status === 201);
    expect(accepted).toHaveLength(10);
    expect(accepted.every((result) => result.body.status === "submitted")).toBe(true);
    expect(results.filter((result) => result.status === 402)).toHaveLength(40);
    expect(await balanceOf(projectId)).toBe(0);
    expect(fake.sends()).toHaveLength(10);
  }, 60_000);

  it("free tier: 20 live segments a UTC day, the 21st is 429 until midnight UTC; paid credits lift it", async () => {
    const { projectId, apiKey } = await liveProject({ free: 50 });
    for (let i = 0; i < 20; i++) expect((await send(apiKey)).status).toBe(201);
    const refused = await send(apiKey);
    expect(refused.status).toBe(429);
    const error = refused.body.error as { code: string; message: string };
    expect(error.code).toBe("daily_limit_reached");
    expect(error.message).toContain(nextUtcMidnight(new Date()).toISOString().replace(".000Z", "Z"));
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(fake.sends()).toHaveLength(20);
    expect(await balanceOf(projectId)).toBe(30);

    await grantPaidCredits(ops(), { actor: ACTOR, projectId, amount: 1 });
    expect((await send(apiKey)).status).toBe(201);
    expect(await balanceOf(projectId)).toBe(30);
  }, 60_000);

  it("a slow uBill holds at most UBILL_MAX_IN_FLIGHT live sends; one written ahead that waits past UBILL_QUEUE_TIMEOUT_MS for a place is released, 503 with nothing kept, and its retry is safe", async () => {
    const token = "places-e2e-internal-token-0123456789abcdef";
    const HOLD_MS = 8_000;
    const bounded = await startServer({
      backend: "postgres",
      databaseUrl: pg.databaseUrl,
      internalToken: token,
      env: {
        UBILL_BASE_URL: fake.baseUrl,
        UBILL_API_KEY: UBILL_KEY,
        UBILL_DEFAULT_BRAND_ID: "1",
        // uBill holds the two places' sends for HOLD_MS, well inside this deadline, so that on a busy
        // machine the steps below run while both places are taken.
        UBILL_SUBMIT_TIMEOUT_MS: "30000",
        MESSAGE_ENCRYPTION_KEYS: KEYS,
        UBILL_MAX_IN_FLIGHT: "2",
        // Long enough for the steps below to see the refused send written ahead, waiting for a place.
        UBILL_QUEUE_TIMEOUT_MS: "2000",
        JOBS_ENABLED: "false",
        MESSAGES_PER_MINUTE: "1000",
        RECIPIENT_MESSAGES_PER_MINUTE: "10000",
        RECIPIENT_MESSAGES_PER_DAY: "10000",
      },
    });
    const gauges = async () => {
      const text = await (
        await fetch(`${bounded.internalUrl}/metrics`, { headers: { Authorization: `Bearer ${token}` } })
      ).text();
      const value = (state: string) =>
        Number(new RegExp(`^sms_ubill_places\\{state="${state}"\\} (\\S+)$`, "m").exec(text)?.[1]);
      return {
        size: value("size"),
        in_use: value("in_use"),
        ready: value("ready"),
        waiting: value("waiting"),
      };
    };
    try {
      const { projectId, apiKey } = await liveProject({ paid: 5 });
      const client = recordingClient((path, init) => fetch(`${bounded.baseUrl}${path}`, init), BODY);
      // Answered by the other instance, so that this one has to read its record.
      const earlier = crypto.randomUUID();
      expect((await send(apiKey, earlier)).status).toBe(201);
      fake.setSubmitDelay(HOLD_MS);
      const held = [client.send(apiKey), client.send(apiKey)];
      for (let turn = 0; turn < 800 && fake.sends().length < 3; turn++)
        await new Promise((resolve) => setTimeout(resolve, 25));
      expect(fake.sends()).toHaveLength(3);
      expect(await gauges()).toEqual({ size: 2, in_use: 2, ready: 0, waiting: 0 });

      // Both places are held. A key already answered is replayed without waiting for one.
      const replay = await client.send(apiKey, earlier);
      expect(replay.status).toBe(200);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      // A new key is written ahead (its message queued, its credit reserved) and waits for a place: none
      // comes free within UBILL_QUEUE_TIMEOUT_MS, so it is released and refused with nothing kept.
      const key = crypto.randomUUID();
      const refusing = client.send(apiKey, key);
      let ready = await gauges();
      for (let turn = 0; turn < 400 && ready.ready !== 1; turn++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        ready = await gauges();
      }
      expect(ready).toEqual({ size: 2, in_use: 2, ready: 1, waiting: 0 });
      // Queued: the two at uBill, and the one written ahead.
      expect(await db.prisma.message.count({ where: { projectId, status: "queued" } })).toBe(3);
      expect(await db.prisma.message.count({ where: { projectId } })).toBe(4);
      expect(await balanceOf(projectId)).toBe(1);
      const refused = await refusing;
      expect(refused.status).toBe(503);
      expect(refused.body).toEqual({
        error: { code: "provider_unavailable", message: expect.any(String), request_id: expect.any(String) },
      });
      expect((refused.body.error as { request_id: string }).request_id).toBe(
        refused.headers.get("x-request-id"),
      );
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(fake.sends()).toHaveLength(3);
      expect(await db.prisma.message.count({ where: { projectId } })).toBe(3);
      expect(await balanceOf(projectId)).toBe(2);

      for (const sent of await Promise.all(held)) {
        expect(sent.status).toBe(201);
        expect(sent.body).toMatchObject({ status: "submitted" });
      }
      expect(await gauges()).toEqual({ size: 2, in_use: 0, ready: 0, waiting: 0 });
      fake.setSubmitDelay(0);
      // The refused key was given back: the same key now sends, once.
      const retried = await client.send(apiKey, key);
      expect(retried.status).toBe(201);
      expect(retried.headers.get("idempotent-replayed")).toBeNull();
      expect(fake.sends()).toHaveLength(4);
      expect(await balanceOf(projectId)).toBe(1);
    } finally {
      fake.setSubmitDelay(0);
      await bounded.cleanup();
    }
  });

  it("503 provider_unavailable when uBill refuses connections: nothing charged, retry is safe", async () => {
    const { projectId, apiKey } = await liveProject({ paid: 2 });
    await fake.close();
    const key = crypto.randomUUID();
    const first = await send(apiKey, key);
    expect(first.status).toBe(503);
    expect(first.body).toMatchObject({ error: { code: "provider_unavailable" } });
    expect((await send(apiKey, key)).status).toBe(503);
    expect(await balanceOf(projectId)).toBe(2);
    expect(await db.prisma.message.count({ where: { projectId } })).toBe(0);
  });

  it("no response or log line carries the uBill key, a uBill message id or a raw uBill status", async () => {
    const refs = (
      await db.prisma.message.findMany({ where: { provider: "ubill" }, select: { providerRef: true } })
    )
      .map((row) => row.providerRef)
      .filter((ref): ref is string => ref !== null);
    expect(refs.length).toBeGreaterThan(30);
    const haystacks = { responses: responses.join("\n"), logs: server.output.join("\n") };
    for (const [name, text] of Object.entries(haystacks)) {
      expect(text.length, name).toBeGreaterThan(1000);
      expect(text, name).not.toContain(UBILL_KEY);
      for (const ref of refs) expect(text, `${name} contains a uBill id`).not.toContain(ref);
      expect(text, name).not.toMatch(/statusID|smsID|provider_?ref/i);
      expect(text, name).not.toMatch(/SMS sent|Insufficient balance|Brand name not found|No valid numbers/);
      expect(text, name).not.toMatch(/\+?9955\d{8}/);
      expect(text, name).not.toMatch(/sk_live_[A-Za-z0-9_-]{43}/);
    }
  });
});
