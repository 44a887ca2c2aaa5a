// Live sending in-process (the whole app, a manual clock, captured logs) on
// PGlite and PostgreSQL, with the live provider pointed at a fake uBill on
// loopback: every provider outcome, the credit arithmetic of each (balance
// and ledger rows), 402, concurrency, the free-tier allowance and its rollover
// at midnight UTC, test keys never touching credits, the status check, and
// no provider secrets or ids in any response or log line.
import { availableBackends } from "@sms/db/testing";
import {
  freeTierUsage,
  grantPaidCredits,
  listCreditLedger,
  projectBalance,
  reinstateProject,
  revokeApiKey,
  type SenderBrandDirectory,
  setProjectSender,
  suspendProject,
} from "@sms/domain";
import {
  type FakeUbill,
  type FakeUbillReply,
  getRefusingPort,
  startFakeUbill,
} from "@sms/provider-ubill/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.ts";
import { parseEnv } from "../../src/config/index.ts";
import { createTestKey, startTestApp, type TestApp } from "../harness.ts";
import { ACTOR, claimWithLiveKey } from "../support/live-projects.ts";
import { recordingClient } from "../support/messages.ts";

const backends = await availableBackends();
const UBILL_KEY = "ubill-secret-key-4f9a2c";
const FIRST_SMS_ID = 73_190_001;
const SUBMIT_TIMEOUT_MS = 3_000;
const BODY = {
  to: "+995555123456",
  template: "verification_code",
  variables: { code: "4821" },
  locale: "en",
};

describe.each(backends)("live sending with credits on %s", (backend) => {
  let fake: FakeUbill;
  let t: TestApp;
  const { responses, send, read } = recordingClient((path, init) => t.request(path, init), BODY);

  beforeAll(async () => {
    fake = await startFakeUbill({
      apiKey: UBILL_KEY,
      firstSmsId: FIRST_SMS_ID,
      brands: [
        { id: 1, name: "SMSGE", approved: true },
        { id: 7, name: "Acme", approved: true },
      ],
    });
    t = await startTestApp({
      backend,
      env: {
        UBILL_BASE_URL: fake.baseUrl,
        UBILL_API_KEY: UBILL_KEY,
        UBILL_DEFAULT_BRAND_ID: "1",
        // PGlite runs in this thread: a burst of sends can hold the event loop
        // for a while, so the deadline leaves room (the "slow" reply is later still).
        UBILL_SUBMIT_TIMEOUT_MS: String(SUBMIT_TIMEOUT_MS),
        UBILL_STATUS_TIMEOUT_MS: "2000",
        MESSAGES_PER_MINUTE: "1000",
        TEST_KEYS_PER_MINUTE: "1000",
        TEST_KEYS_PER_DAY: "1000",
        TEST_KEYS_PER_DAY_TOTAL: "10000",
        FREE_TIER_DAILY_SEGMENTS: "20",
        // Every test here sends to one number; the per-recipient limits have
        // their own suite (recipient-limits.integration.test.ts).
        RECIPIENT_MESSAGES_PER_MINUTE: "10000",
        RECIPIENT_MESSAGES_PER_DAY: "10000",
      },
    });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });
  beforeEach(() => fake.reset());

  const prisma = () => t.app.db.prisma;
  const ops = () => ({ store: t.app.store, clock: t.clock });

  /** A claimed project with a live key; `free` credits as the claim grants them, `paid` through the operator. */
  async function liveProject(credits: { free?: number; paid?: number } = {}) {
    const { project_id: projectId } = await createTestKey(t.request);
    return claimWithLiveKey({ ...ops(), prisma: prisma() }, projectId, credits);
  }

  async function balanceOf(projectId: string) {
    const balance = await projectBalance({ store: t.app.store }, { projectId });
    if (!balance.ok) throw new Error("no project");
    expect(balance.consistent).toBe(true);
    return balance.balance;
  }

  const ledgerOf = async (projectId: string, messageId: string) =>
    (await listCreditLedger({ store: t.app.store }, { projectId, limit: 1000 }))
      .filter((entry) => entry.messageId === messageId)
      .map((entry) => [entry.kind, entry.amount])
      .sort();

  const statusCheck = () => {
    const job = t.app.jobs.find((candidate) => candidate.name === "status-check");
    if (!job) throw new Error("no status-check job");
    return job.run();
  };

  it("accepted: 201 submitted, one credit reserved and kept, the provider id stored but never returned", async () => {
    const { projectId, apiKey } = await liveProject({ paid: 10 });
    const sent = await send(apiKey);
    expect(sent.status).toBe(201);
    expect(sent.body).toMatchObject({
      object: "message",
      status: "submitted",
      segments: 1,
      error: null,
      to: "+9955••••••56",
    });
    expect(Object.keys(sent.body).sort()).toEqual([
      "created_at",
      "error",
      "id",
      "object",
      "segments",
      "status",
      "to",
      "updated_at",
    ]);
    expect(await balanceOf(projectId)).toBe(9);
    expect(await ledgerOf(projectId, sent.body.id as string)).toEqual([["reservation", -1]]);
    const [request] = fake.sends();
    expect(request?.json).toMatchObject({ brandID: 1, numbers: [995555123456], stopList: false, otp: true });
    const stored = await prisma().message.findFirstOrThrow({ where: { id: sent.body.id as string } });
    expect(stored).toMatchObject({
      mode: "live",
      provider: "ubill",
      status: "submitted",
      creditsReserved: 1,
    });
    expect(stored.providerRef).toMatch(/^7319\d{4}$/);
  });

  it("times a live send's steps under mode live, apart from test sends'", async () => {
    const counts = async () => {
      const text = await (await t.app.metrics.response()).text();
      const count = (phase: string, mode: string) =>
        Number(
          new RegExp(
            `^sms_request_phase_duration_seconds_count\\{phase="${phase}",mode="${mode}"\\} (\\d+)$`,
            "m",
          ).exec(text)?.[1] ?? 0,
        );
      return ["send_prepare", "send_write_ahead", "send_submit", "send_record"].map((phase) => [
        count(phase, "live"),
        count(phase, "test"),
      ]);
    };
    const { apiKey } = await liveProject({ paid: 10 });
    const before = await counts();
    expect((await send(apiKey)).status).toBe(201);
    const after = await counts();
    // Each of the live send's four steps once under mode="live", none under mode="test".
    expect(after.map(([live], index) => (live ?? 0) - (before[index]?.[0] ?? 0))).toEqual([1, 1, 1, 1]);
    expect(after.map(([, test], index) => (test ?? 0) - (before[index]?.[1] ?? 0))).toEqual([0, 0, 0, 0]);
  });

  it("goes out under the project's approved sender brand", async () => {
    const { projectId, apiKey } = await liveProject({ paid: 2 });
    const set = await setProjectSender(
      { ...ops(), brands: t.app.providers.live as unknown as SenderBrandDirectory },
      { actor: ACTOR, projectId, name: "Acme" },
    );
    expect(set).toMatchObject({ ok: true, brandId: 7, validated: true });
    t.clock.advance(2_001); // past the API key cache, which holds the project's sender
    expect((await send(apiKey)).body.status).toBe("submitted");
    expect(fake.sends().at(-1)?.json).toMatchObject({ brandID: 7 });
    // A brand uBill does not know (10) is a rejection with sender_not_allowed, refunded.
    await prisma().project.update({ where: { id: projectId }, data: { senderBrandId: 999 } });
    t.clock.advance(2_001);
    const refused = await send(apiKey);
    expect(refused.body).toMatchObject({ status: "failed", error: { code: "sender_not_allowed" } });
    expect(await balanceOf(projectId)).toBe(1);
  });

  const rejections: Array<[string, FakeUbillReply, string]> = [
    ["statusID 10 (brand)", { kind: "status", statusId: 10 }, "sender_not_allowed"],
    ["statusID 20", { kind: "status", statusId: 20 }, "provider_rejected"],
    ["statusID 30", { kind: "status", statusId: 30 }, "invalid_message"],
    ["statusID 50 (no valid numbers)", { kind: "status", statusId: 50 }, "invalid_recipient"],
    ["statusID 90", { kind: "status", statusId: 90 }, "provider_rejected"],
    ["HTTP 401", { kind: "http", status: 401 }, "provider_rejected"],
    ["HTTP 403", { kind: "http", status: 403 }, "provider_rejected"],
    ["HTTP 501", { kind: "http", status: 501 }, "provider_rejected"],
  ];
  it.each(rejections)(
    "definitive rejection (%s): 201 failed, the reservation refunded",
    async (_name, reply, code) => {
      const { projectId, apiKey } = await liveProject({ paid: 3 });
      fake.replyNext(reply, "send");
      const key = crypto.randomUUID();
      const sent = await send(apiKey, key);
      expect(sent.status).toBe(201);
      expect(sent.body).toMatchObject({ status: "failed", segments: 1, error: { code } });
      expect(await balanceOf(projectId)).toBe(3);
      expect(await ledgerOf(projectId, sent.body.id as string)).toEqual([
        ["refund", 1],
        ["reservation", -1],
      ]);
      // Reading it later gives the same answer; a retry with the same key is a replay, not a second send.
      expect(await read(apiKey, sent.body.id as string)).toMatchObject({ status: "failed", error: { code } });
      const replay = await send(apiKey, key);
      expect(replay.status).toBe(200);
      expect(replay.body).toEqual(sent.body);
      expect(fake.sends()).toHaveLength(1);
      expect(await balanceOf(projectId)).toBe(3);
    },
  );

  it("insufficient uBill balance (40): 503 provider_unavailable for the caller, refunded, nothing kept, and an operator-visible error log", async () => {
    const { projectId, apiKey } = await liveProject({ paid: 2 });
    const before = t.logs.entries.length;
    fake.setBalance(0);
    try {
      const sent = await send(apiKey);
      expect(sent.status).toBe(503);
      expect(sent.body).toMatchObject({ error: { code: "provider_unavailable" } });
      expect(await balanceOf(projectId)).toBe(2);
      expect(await prisma().message.count({ where: { projectId } })).toBe(0);
    } finally {
      fake.setBalance(1000);
    }
    const errors = t.logs.entries.slice(before).filter((entry) => entry.level === "error");
    // uBill's own line for the operator, and the access log's line of a 503 (every 5xx is logged as an error).
    expect(errors).toEqual([
      expect.objectContaining({ provider: "ubill", problem: "insufficient_provider_balance" }),
      expect.objectContaining({ msg: "request", route: "/v1/messages", status: 503 }),
    ]);
  });

  const indeterminate: Array<[string, FakeUbillReply]> = [
    ["slow beyond the deadline", { kind: "slow", delayMs: SUBMIT_TIMEOUT_MS + 1_000 }],
    ["connection dropped", { kind: "drop" }],
    ["response cut off", { kind: "truncate" }],
    ["unparseable answer", { kind: "garbage" }],
    ["HTTP 500", { kind: "http", status: 500 }],
    ["HTTP 502", { kind: "http", status: 502 }],
    ["HTTP 504", { kind: "http", status: 504 }],
    // uBill's "general error" proves nothing about the send (docs/live-sending.md).
    ["statusID 99", { kind: "status", statusId: 99 }],
  ];
  it.each(indeterminate)(
    "no definitive answer (%s): 201 unknown, charged, never re-sent",
    async (_name, reply) => {
      const { projectId, apiKey } = await liveProject({ paid: 3 });
      fake.replyNext(reply, "send");
      const key = crypto.randomUUID();
      const sent = await send(apiKey, key);
      expect(sent.status).toBe(201);
      expect(sent.body).toMatchObject({ status: "unknown", error: { code: "provider_unavailable" } });
      expect(await balanceOf(projectId)).toBe(2);
      expect(await ledgerOf(projectId, sent.body.id as string)).toEqual([["reservation", -1]]);
      const retry = await send(apiKey, key);
      expect(retry.status).toBe(200);
      expect(retry.body).toEqual(sent.body);
      expect(fake.sends()).toHaveLength(1);
      // The status check leaves unknown alone.
      await statusCheck();
      expect((await read(apiKey, sent.body.id as string)).status).toBe("unknown");
    },
  );

  it("402 insufficient_credits when the balance is short: nothing sent, nothing charged, no allowance used", async () => {
    const empty = await liveProject();
    const refused = await send(empty.apiKey);
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ error: { code: "insufficient_credits" } });
    expect(fake.sends()).toHaveLength(0);
    expect(await prisma().message.count({ where: { projectId: empty.projectId } })).toBe(0);
    expect(await listCreditLedger({ store: t.app.store }, { projectId: empty.projectId })).toEqual([]);
    const usage = await freeTierUsage(
      { store: t.app.store, config: { freeTierDailySegments: 20 } },
      { projectId: empty.projectId, hasPaidCredits: false, now: t.clock.now() },
    );
    expect(usage.usedToday).toBe(0);

    const one = await liveProject({ paid: 1 });
    expect((await send(one.apiKey)).status).toBe(201);
    const short = await send(one.apiKey);
    expect(short.status).toBe(402);
    expect(fake.sends()).toHaveLength(1);
    expect(await balanceOf(one.projectId)).toBe(0);
  });

  it("50 parallel sends against a balance of 10 spend exactly 10 credits", async () => {
    const { projectId, apiKey } = await liveProject({ paid: 10 });
    const results = await Promise.all(Array.from({ length: 50 }, () => send(apiKey)));
    const statuses = results.map((result) => result.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(10);
    expect(statuses.filter((status) => status === 402)).toHaveLength(40);
    expect(statuses.every((status) => status === 201 || status === 402)).toBe(true);
    // PGlite shares this thread: under a burst a send can outlive its deadline
    // and come back `unknown`, which is charged all the same, whether or not
    // its request reached uBill before the deadline cut it off.
    const accepted = results.filter((candidate) => candidate.status === 201);
    for (const result of accepted) expect(["submitted", "unknown"]).toContain(result.body.status);
    const submitted = accepted.filter((result) => result.body.status === "submitted").length;
    expect(await balanceOf(projectId)).toBe(0);
    await expect.poll(() => fake.sends().length, { timeout: 10_000 }).toBeGreaterThanOrEqual(submitted);
    expect(fake.sends().length).toBeLessThanOrEqual(10);
    const reservations = (await listCreditLedger({ store: t.app.store }, { projectId, limit: 100 })).filter(
      (entry) => entry.kind === "reservation",
    );
    expect(reservations).toHaveLength(10);
  }, 60_000);

  it("test keys never touch credits or the free tier", async () => {
    const { project_id: projectId, api_key: testKey } = await createTestKey(t.request);
    await prisma().project.update({ where: { id: projectId }, data: { claimedAt: t.clock.now() } });
    const granted = await grantPaidCredits(ops(), { actor: ACTOR, projectId, amount: 5 });
    expect(granted.ok).toBe(true);
    for (const to of ["+995555123456", "+995500000001", "+995500000003"]) {
      expect((await send(testKey, undefined, { ...BODY, to })).status).toBe(201);
    }
    expect((await send(testKey, undefined, { ...BODY, to: "+995500000002" })).status).toBe(503);
    expect(await balanceOf(projectId)).toBe(5);
    expect(await listCreditLedger({ store: t.app.store }, { projectId })).toHaveLength(1);
    expect(
      await prisma().message.findMany({ where: { projectId }, select: { creditsReserved: true } }),
    ).toEqual(Array.from({ length: 3 }, () => ({ creditsReserved: 0 })));
    expect(fake.sends()).toHaveLength(0);

    // An unclaimed project with no credits at all still sends test messages, beyond 20 segments.
    const fresh = await createTestKey(t.request);
    for (let i = 0; i < 21; i++) expect((await send(fresh.api_key)).status).toBe(201);
    expect(await balanceOf(fresh.project_id)).toBe(0);
  });

  it("the status check drives live messages to delivered / undeliverable from uBill's reports", async () => {
    const { projectId, apiKey } = await liveProject({ paid: 4 });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await send(apiKey)).body.id as string);
    const refs = await Promise.all(
      ids.map(async (id) => (await prisma().message.findFirstOrThrow({ where: { id } })).providerRef ?? ""),
    );
    fake.setReport(refs[0]!, "1");
    fake.setReport(refs[1]!, "2");
    fake.setReport(refs[2]!, "3");
    fake.setReport(refs[3]!, "4");
    t.clock.advance(1_000);
    await statusCheck();
    expect(await read(apiKey, ids[0]!)).toMatchObject({ status: "delivered", error: null });
    const undeliverable = await read(apiKey, ids[1]!);
    expect(undeliverable).toMatchObject({ status: "undeliverable", error: { code: "invalid_recipient" } });
    expect(await read(apiKey, ids[2]!)).toMatchObject({ status: "submitted", error: null });
    expect(await read(apiKey, ids[3]!)).toMatchObject({
      status: "failed",
      error: { code: "provider_rejected" },
    });
    // delivered and undeliverable stay charged; the provider's own failure ("4") is refunded.
    expect(await balanceOf(projectId)).toBe(1);
    expect(await ledgerOf(projectId, ids[3]!)).toEqual([
      ["refund", 1],
      ["reservation", -1],
    ]);
    expect(await ledgerOf(projectId, ids[1]!)).toEqual([["reservation", -1]]);

    // "0" (sent) keeps it submitted; a later "1" delivers it on a later round.
    fake.setReport(refs[2]!, "0");
    t.clock.advance(20_000);
    await statusCheck();
    expect((await read(apiKey, ids[2]!)).status).toBe("submitted");
    const before = await read(apiKey, ids[2]!);
    fake.setReport(refs[2]!, "1");
    t.clock.advance(20_000);
    await statusCheck();
    const delivered = await read(apiKey, ids[2]!);
    expect(delivered.status).toBe("delivered");
    expect(delivered.updated_at).not.toBe(before.updated_at);
    // Final states never move again.
    fake.setReport(refs[0]!, "2");
    t.clock.advance(20_000);
    await statusCheck();
    expect((await read(apiKey, ids[0]!)).status).toBe("delivered");
  });

  it("free tier: the 20th segment of a UTC day passes, the 21st is 429 naming midnight; rollover; paid credits lift it", async () => {
    t.clock.set("2026-11-23T23:50:00Z");
    const { projectId, apiKey } = await liveProject({ free: 100 });
    for (let i = 0; i < 19; i++) expect((await send(apiKey)).status).toBe(201);
    // A rejected send gives its segment back.
    fake.replyNext({ kind: "status", statusId: 90 }, "send");
    expect((await send(apiKey)).body.status).toBe("failed");
    const twentieth = await send(apiKey);
    expect(twentieth.status).toBe(201);
    const refused = await send(apiKey);
    expect(refused.status).toBe(429);
    const error = refused.body.error as { code: string; message: string };
    expect(error.code).toBe("daily_limit_reached");
    expect(error.message).toContain("2026-11-24T00:00:00Z");
    expect(refused.headers.get("retry-after")).toBe(String(10 * 60));
    expect(fake.sends()).toHaveLength(21);
    expect(await balanceOf(projectId)).toBe(80);

    t.clock.set("2026-11-24T00:00:00Z");
    expect((await send(apiKey)).status).toBe(201);
    for (let i = 0; i < 19; i++) expect((await send(apiKey)).status).toBe(201);
    expect((await send(apiKey)).status).toBe(429);

    const granted = await grantPaidCredits(ops(), { actor: ACTOR, projectId, amount: 5 });
    expect(granted).toMatchObject({ ok: true, balance: 65 });
    expect((await send(apiKey)).status).toBe(201);
    expect((await send(apiKey)).status).toBe(201);
    expect(await balanceOf(projectId)).toBe(63);
  }, 60_000);

  it("a suspended project or a revoked live key stops within the key-cache TTL", async () => {
    const { projectId, apiKey } = await liveProject({ paid: 5 });
    expect((await send(apiKey)).status).toBe(201);
    await suspendProject(ops(), { actor: ACTOR, projectId });
    t.clock.advance(2_001);
    expect((await send(apiKey)).status).toBe(403);
    await reinstateProject(ops(), { actor: ACTOR, projectId });
    t.clock.advance(2_001);
    expect((await send(apiKey)).status).toBe(201);
    await revokeApiKey(ops(), { actor: ACTOR, prefix: apiKey.slice(0, 12), projectId });
    t.clock.advance(2_001);
    expect((await send(apiKey)).status).toBe(401);
    expect(fake.sends()).toHaveLength(2);
  });

  const unproven: Array<[string, FakeUbillReply]> = [
    ["HTTP 429, throttled", { kind: "http", status: 429 }],
    ["HTTP 503, unavailable", { kind: "http", status: 503 }],
  ];
  it.each(unproven)(
    "uBill's %s proves nothing was sent (a proxy may say it after forwarding): 201 unknown, charged, and a retry with the key replays it without calling uBill",
    async (_name, reply) => {
      const { projectId, apiKey } = await liveProject({ paid: 3 });
      fake.replyNext(reply, "send");
      const sendsBefore = fake.sends().length;
      const key = crypto.randomUUID();
      const first = await send(apiKey, key);
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({ status: "unknown", error: { code: "provider_unavailable" } });
      expect(await balanceOf(projectId)).toBe(2);
      const retry = await send(apiKey, key);
      expect(retry.status).toBe(200);
      expect(retry.body).toEqual(first.body);
      expect(fake.sends().length - sendsBefore).toBe(1);
      expect(await prisma().message.count({ where: { projectId } })).toBe(1);
      expect(await balanceOf(projectId)).toBe(2);
    },
  );

  it("503 provider_unavailable when uBill cannot be reached: nothing sent, refunded, safe to retry", async () => {
    const { projectId, apiKey } = await liveProject({ paid: 3 });
    // A second instance on the same database whose uBill address refuses
    // connections (closing the fake instead would leave this process's
    // keep-alive sockets to it in fetch's pool, and a send on a dropped socket
    // is rightly "unknown", not "unreachable").
    const offline = await createApp(
      parseEnv({ ...t.env, UBILL_BASE_URL: `http://127.0.0.1:${await getRefusingPort()}` }),
      { db: t.app.db, clock: t.clock, logDestination: t.logs },
    );
    try {
      const client = recordingClient(
        (path, init) =>
          offline.handler(new Request(`${t.baseUrl}${path}`, init), { remoteAddress: "203.0.113.10" }),
        BODY,
      );
      const key = crypto.randomUUID();
      const first = await client.send(apiKey, key);
      expect(first.status).toBe(503);
      expect(first.body).toMatchObject({ error: { code: "provider_unavailable" } });
      const retry = await client.send(apiKey, key);
      expect(retry.status).toBe(503);
      expect(await balanceOf(projectId)).toBe(3);
      expect(await prisma().message.count({ where: { projectId } })).toBe(0);
      responses.push(...client.responses);
    } finally {
      await offline.close();
    }
  });

  it("no response or log line carries the uBill key, a uBill message id or a raw uBill status", async () => {
    const refs = (
      await prisma().message.findMany({ where: { provider: "ubill" }, select: { providerRef: true } })
    )
      .map((row) => row.providerRef)
      .filter((ref): ref is string => ref !== null);
    expect(refs.length).toBeGreaterThan(20);
    const haystacks = { responses: responses.join("\n"), logs: t.logs.text };
    for (const [name, text] of Object.entries(haystacks)) {
      expect(text.length, name).toBeGreaterThan(1000);
      expect(text, name).not.toContain(UBILL_KEY);
      for (const ref of refs) expect(text, `${name} contains a uBill id`).not.toContain(ref);
      expect(text, name).not.toMatch(/statusID|smsID|provider_?ref/i);
      expect(text, name).not.toMatch(
        /SMS sent|Insufficient balance|Brand name not found|No valid numbers|JSON error/,
      );
      expect(text, name).not.toMatch(/\+?9955\d{8}/);
      expect(text, name).not.toMatch(/sk_live_[A-Za-z0-9_-]{43}/);
    }
  });
});
