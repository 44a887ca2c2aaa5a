// One instance's clock is wrong (issue 27, finding 3): two instances in
// process on one database (both backends), each on the production clock path
// (no manual clock), one with its own wall clock skewed. Every decision shared
// between instances — the minute's limit, the recovery sweep's age, a key's
// 24 hours — must come out the same as on a correct clock, because the service
// decides on the database's time, not on the instance's.
import { generateKeySpec } from "@sms/crypto";
import { availableBackends } from "@sms/db/testing";
import { type FakeUbill, startFakeUbill } from "@sms/provider-ubill/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, createApp } from "../../src/app.ts";
import { parseEnv } from "../../src/config/index.ts";
import { createTestKey, sendMessageRequest, startTestApp, type TestApp } from "../harness.ts";
import { body, insertLiveKey, type MessageJson, until } from "../support/messages.ts";

const backends = await availableBackends();

/** The system's clock, `offsetMs` off. */
const skewed = (offsetMs: number) => ({ now: () => new Date(Date.now() + offsetMs) });

describe.each(backends)("an instance whose clock is wrong, on %s", (backend) => {
  let t: TestApp;
  let fake: FakeUbill;
  /** B: a correct clock; A: 120 s ahead; C: a day and an hour ahead. */
  let b: App;
  let a: App;
  let c: App;

  beforeAll(async () => {
    fake = await startFakeUbill();
    t = await startTestApp({ backend });
    const env = parseEnv({
      ...t.env,
      // Every instance must share the keyring: it fingerprints the requests.
      MESSAGE_ENCRYPTION_KEYS: generateKeySpec("shared"),
      MESSAGES_PER_MINUTE: "3",
      TEST_KEYS_PER_MINUTE: "100",
      UBILL_BASE_URL: fake.baseUrl,
      UBILL_API_KEY: fake.apiKey,
      UBILL_DEFAULT_BRAND_ID: "1",
      UBILL_SUBMIT_TIMEOUT_MS: "20000",
    });
    const shared = { db: t.app.db, logDestination: t.logs };
    b = await createApp(env, shared);
    a = await createApp(env, { ...shared, localClock: skewed(120_000) });
    c = await createApp(env, { ...shared, localClock: skewed(25 * 3_600_000) });
    await Promise.all([a.databaseReady, b.databaseReady, c.databaseReady]);
  });
  afterAll(async () => {
    for (const app of [a, b, c]) await app?.close();
    await t?.close();
    await fake?.close();
  });

  const call = (app: App) => (path: string, init?: RequestInit) =>
    app.handler(new Request(`${t.baseUrl}${path}`, init), { remoteAddress: "203.0.113.10" });

  it("the minute's limit is one minute for both: the instance ahead cannot admit a second minute's worth", async () => {
    // Start early in a minute, so that the four sends below fall in one (the
    // test asserts counts, never durations).
    await until(() => new Date().getUTCSeconds() < 40, 30_000, 200);
    const { api_key: apiKey } = await createTestKey(call(b));
    for (let i = 0; i < 3; i++) {
      const sent = await call(b)("/v1/messages", sendMessageRequest(apiKey, `m-${i}`, body()));
      expect(sent.status).toBe(201);
    }
    const ahead = await call(a)("/v1/messages", sendMessageRequest(apiKey, "m-3", body()));
    expect(ahead.status).toBe(429);
    expect(Number(ahead.headers.get("retry-after"))).toBeLessThanOrEqual(60);
  });

  it("the recovery sweep of the instance ahead leaves the other's send in flight alone: it ends `submitted` with uBill's reference", async () => {
    const { apiKey, projectId } = await insertLiveKey(t.app.db.prisma, { credits: 5 });
    const smsId = String(9_100_000 + Math.floor(Math.random() * 100_000));
    // biome-ignore lint/suspicious/noThenProperty: the fake's reply type names its follow-up `then`.
    fake.replyNext({ kind: "slow", delayMs: 1_500, then: { kind: "accept", smsId } }, "send");
    const sendsBefore = fake.sends().length;
    const sending = call(b)("/v1/messages", sendMessageRequest(apiKey, crypto.randomUUID(), body()));
    await until(() => fake.sends().length > sendsBefore, 10_000);
    // The message is queued and in flight on B; A sweeps now.
    const sweep = a.jobs.find((job) => job.name === "queued-recovery");
    expect(await sweep?.run()).toMatchObject({ recovered: 0 });
    const response = await sending;
    expect(response.status).toBe(201);
    const message = (await response.json()) as MessageJson;
    expect(message.status).toBe("submitted");
    const row = await t.app.db.prisma.message.findFirstOrThrow({ where: { id: message.id } });
    expect(row).toMatchObject({ status: "submitted", providerRef: smsId, projectId });
  });

  it("a key's 24 hours are the database's: the instance a day ahead replays the other's answer instead of sending again", async () => {
    const { api_key: apiKey, project_id: projectId } = await createTestKey(call(b));
    const key = crypto.randomUUID();
    const first = await call(b)("/v1/messages", sendMessageRequest(apiKey, key, body()));
    expect(first.status).toBe(201);
    const replay = await call(c)("/v1/messages", sendMessageRequest(apiKey, key, body()));
    expect(replay.status).toBe(200);
    expect(await replay.json()).toEqual(await first.json());
    expect(await t.app.db.prisma.message.count({ where: { projectId } })).toBe(1);
  });
});
