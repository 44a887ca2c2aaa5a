// SMS pumping: live messages of a project to one number are limited per
// minute (429 rate_limited, Retry-After within the minute) and per UTC day
// (429 daily_limit_reached until midnight UTC), counted in rate_limit_counters
// under a keyed fingerprint (never the number), shared by every instance,
// answered without echoing the number. Test keys are not limited per
// recipient (nothing reaches a phone). In process, both backends, a manual
// clock and a fake uBill; two instances on one PostgreSQL database.
import { generateKeySpec } from "@sms/crypto";
import { createDatabase } from "@sms/db";
import {
  availableBackends,
  createPostgresTestDatabase,
  type PostgresTestDatabase,
  type PrismaDatabase,
  withPrisma,
} from "@sms/db/testing";
import { type FakeUbill, getRefusingPort, startFakeUbill } from "@sms/provider-ubill/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, createApp } from "../../src/app.ts";
import { parseEnv } from "../../src/config/index.ts";
import { createTestKey, ManualClock, sendMessageRequest, startTestApp, type TestApp } from "../harness.ts";
import { body, insertLiveKey } from "../support/messages.ts";

const backends = await availableBackends();
const NUMBER = "+995555987654";
type ErrorJson = { error: { code: string; message: string; request_id: string } };

function ubillEnv(fake: FakeUbill): Record<string, string> {
  return { UBILL_BASE_URL: fake.baseUrl, UBILL_API_KEY: fake.apiKey, UBILL_DEFAULT_BRAND_ID: "1" };
}

describe.each(backends)("per-recipient limits on %s", (backend) => {
  let fake: FakeUbill;
  let t: TestApp;
  beforeAll(async () => {
    fake = await startFakeUbill();
    t = await startTestApp({
      backend,
      env: {
        ...ubillEnv(fake),
        MESSAGES_PER_MINUTE: "1000",
        RECIPIENT_MESSAGES_PER_MINUTE: "5",
        RECIPIENT_MESSAGES_PER_DAY: "8",
        TEST_KEYS_PER_MINUTE: "100",
      },
    });
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });
  const send = (apiKey: string, idempotencyKey: string, to = NUMBER) =>
    t.request("/v1/messages", sendMessageRequest(apiKey, idempotencyKey, body({ to })));

  it("the sixth live message to one number in a minute is 429 rate_limited with Retry-After ≤ 60; the day's cap is 429 daily_limit_reached until midnight UTC; neither names the number", async () => {
    const { apiKey, projectId } = await insertLiveKey(t.app.db.prisma, { credits: 50 });
    t.clock.set("2026-11-22T10:03:00Z");
    for (let i = 0; i < 5; i++) expect((await send(apiKey, `r-${i}`)).status).toBe(201);
    const sendsBefore = fake.sends().length;
    const refused = await send(apiKey, "r-5");
    expect(refused.status).toBe(429);
    const text = await refused.text();
    const { error } = JSON.parse(text) as ErrorJson;
    expect(error.code).toBe("rate_limited");
    expect(error.message).toMatch(/recipient/);
    expect(text).not.toMatch(/987654|9955/);
    // The next minute: a window of at most a minute, as the contract means rate_limited.
    expect(refused.headers.get("retry-after")).toBe("60");
    expect(refused.headers.get("ratelimit-limit")).toBe("5");
    // Nothing sent, stored or charged.
    expect(fake.sends().length).toBe(sendsBefore);
    expect(await t.app.db.prisma.message.count({ where: { projectId } })).toBe(5);
    const project = await t.app.db.prisma.project.findUniqueOrThrow({ where: { id: projectId } });
    expect(project.creditBalance).toBe(45);
    // Another number of the same project, and the same number for another project, are unaffected.
    expect((await send(apiKey, "other-number", "+995555000111")).status).toBe(201);
    const otherProject = await insertLiveKey(t.app.db.prisma, { credits: 5 });
    expect((await send(otherProject.apiKey, "same-number")).status).toBe(201);

    // The counters carry a fingerprint, never the number.
    const counters = await t.app.db.prisma.rateLimitCounter.findMany({
      where: { bucket: { startsWith: `recipient:${projectId}:` } },
    });
    expect(counters.length).toBeGreaterThan(0);
    for (const counter of counters) expect(counter.bucket).not.toMatch(/987654|000111/);

    // The next minute allows three more: then the day's eight are used up until midnight UTC.
    t.clock.set("2026-11-22T10:04:30Z");
    for (let i = 6; i < 9; i++) expect((await send(apiKey, `r-${i}`)).status).toBe(201);
    const daily = await send(apiKey, "r-9");
    expect(daily.status).toBe(429);
    const dailyText = await daily.text();
    const dailyError = (JSON.parse(dailyText) as ErrorJson).error;
    expect(dailyError.code).toBe("daily_limit_reached");
    expect(dailyError.message).toMatch(/recipient/);
    expect(dailyError.message).toContain("2026-11-23T00:00:00Z");
    expect(dailyText).not.toMatch(/987654|9955/);
    expect(daily.headers.get("retry-after")).toBe(String(13 * 3600 + 55 * 60 + 30));
    expect(daily.headers.get("ratelimit-limit")).toBe("8");
    t.clock.set("2026-11-23T00:00:00Z");
    expect((await send(apiKey, "r-9")).status).toBe(201);
  });

  it("holds exactly under a concurrent burst to one number", async () => {
    const { apiKey, projectId } = await insertLiveKey(t.app.db.prisma, { credits: 50 });
    t.clock.set("2026-11-24T10:00:00Z");
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => send(apiKey, `burst-${i}`)));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(15);
    expect(await t.app.db.prisma.message.count({ where: { projectId } })).toBe(5);
  });

  /**
   * `work` against a second instance on the same database whose uBill refuses connections; `sendVia`
   * posts a live send to NUMBER through it.
   */
  async function whileUbillRefuses<T>(
    work: (sendVia: (apiKey: string, key: string) => Promise<Response>) => Promise<T>,
  ): Promise<T> {
    const offline = await createApp(
      parseEnv({ ...t.env, UBILL_BASE_URL: `http://127.0.0.1:${await getRefusingPort()}` }),
      { db: t.app.db, clock: t.clock, logDestination: t.logs },
    );
    try {
      return await work((apiKey, key) =>
        offline.handler(
          new Request(`${t.baseUrl}/v1/messages`, sendMessageRequest(apiKey, key, body({ to: NUMBER }))),
          { remoteAddress: "203.0.113.10" },
        ),
      );
    } finally {
      await offline.close();
    }
  }

  /** Every counter of the project is back at 0 (at least the minute's and the recipient's two). */
  async function expectCountersGivenBack(projectId: string) {
    const counters = await t.app.db.prisma.rateLimitCounter.findMany({
      where: { bucket: { contains: projectId } },
    });
    expect(counters.length).toBeGreaterThanOrEqual(3);
    for (const counter of counters) expect(counter.count, counter.bucket).toBe(0);
  }

  it("retries while uBill refuses connections give every counter back: once uBill is back the number is not locked out", async () => {
    const { apiKey, projectId } = await insertLiveKey(t.app.db.prisma, { credits: 50 });
    t.clock.set("2026-11-22T11:03:00Z");
    await whileUbillRefuses(async (sendVia) => {
      for (let i = 0; i < 8; i++) expect((await sendVia(apiKey, "outage")).status).toBe(503);
    });
    // Nothing may have reached uBill: every counter of this project is back at 0.
    await expectCountersGivenBack(projectId);
    // uBill is back: the same key sends, and four more fit the recipient's window.
    const sendsBefore = fake.sends().length;
    expect((await send(apiKey, "outage")).status).toBe(201);
    for (let i = 0; i < 4; i++) expect((await send(apiKey, `after-${i}`)).status).toBe(201);
    expect(fake.sends().length - sendsBefore).toBe(5);
    expect(await t.app.db.prisma.project.findUniqueOrThrow({ where: { id: projectId } })).toMatchObject({
      creditBalance: 45,
    });
  });

  it("concurrent sends to one number while uBill refuses connections: each answers 503 or 429, none fails, and every counter and credit is back", async () => {
    // Write-aheads (recipient rows, then the project's minute, then its balance) run while
    // unsent sends give the same rows back in that order: no deadlock, nothing kept.
    const { apiKey, projectId } = await insertLiveKey(t.app.db.prisma, { credits: 50 });
    t.clock.set("2026-11-22T12:07:00Z");
    const statuses = await whileUbillRefuses(async (sendVia) => {
      const responses = await Promise.all(
        Array.from({ length: 16 }, (_, i) => sendVia(apiKey, `storm-${i}`)),
      );
      return responses.map((response) => response.status);
    });
    expect(statuses.filter((status) => status !== 503 && status !== 429)).toEqual([]);
    expect(statuses.filter((status) => status === 503).length).toBeGreaterThanOrEqual(5);
    await expectCountersGivenBack(projectId);
    expect(await t.app.db.prisma.message.count({ where: { projectId } })).toBe(0);
    expect(await t.app.db.prisma.project.findUniqueOrThrow({ where: { id: projectId } })).toMatchObject({
      creditBalance: 50,
    });
  });

  it("test keys are not limited per recipient (nothing reaches a phone)", async () => {
    const { api_key: apiKey, project_id: projectId } = await createTestKey(t.request);
    t.clock.set("2026-11-25T10:00:00Z");
    for (let i = 0; i < 9; i++) expect((await send(apiKey, `t-${i}`)).status).toBe(201);
    const counters = await t.app.db.prisma.rateLimitCounter.count({
      where: { bucket: { startsWith: `recipient:${projectId}:` } },
    });
    expect(counters).toBe(0);
  });
});

describe.runIf(backends.includes("postgres"))("per-recipient limits shared by two instances", () => {
  let server: PostgresTestDatabase;
  let fake: FakeUbill;
  const databases: PrismaDatabase[] = [];
  const apps: App[] = [];
  const clock = new ManualClock("2026-11-26T09:00:00Z");

  beforeAll(async () => {
    server = await createPostgresTestDatabase();
    fake = await startFakeUbill();
    const env = parseEnv({
      NODE_ENV: "test",
      PUBLIC_BASE_URL: "http://api.test",
      LOG_LEVEL: "silent",
      DATABASE_URL: server.databaseUrl,
      // Every instance must share the keyring: it names the recipient's counters.
      MESSAGE_ENCRYPTION_KEYS: generateKeySpec("shared"),
      RECIPIENT_MESSAGES_PER_MINUTE: "5",
      ...ubillEnv(fake),
    });
    for (let i = 0; i < 2; i++) {
      const db = withPrisma(await createDatabase({ databaseUrl: server.databaseUrl, poolSize: 4 }));
      databases.push(db);
      apps.push(await createApp(env, { db, clock }));
    }
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    for (const db of databases) await db.close();
    await fake?.close();
    await server?.drop();
  });

  it("lets exactly five of 20 concurrent sends to one number through, split across both", async () => {
    const prisma = apps[0] && withPrisma(apps[0].db).prisma;
    if (!prisma) throw new Error("no app");
    const { apiKey, projectId } = await insertLiveKey(prisma, { credits: 50 });
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        apps[i % 2]?.handler(
          new Request(
            "http://api.test/v1/messages",
            sendMessageRequest(apiKey, `two-${i}`, body({ to: NUMBER })),
          ),
          { remoteAddress: "203.0.113.10" },
        ),
      ),
    );
    const statuses = responses.map((response) => response?.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(15);
    expect(await prisma.message.count({ where: { projectId } })).toBe(5);
    const buckets = await prisma.rateLimitCounter.findMany({
      where: { bucket: { startsWith: `recipient:${projectId}:` } },
    });
    // One counter per window, not one per instance.
    expect(buckets.map((bucket) => bucket.count).sort()).toEqual([5, 5]);
  });
});
