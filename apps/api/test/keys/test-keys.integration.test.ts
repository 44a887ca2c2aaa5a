// POST /v1/test-keys in-process (startTestApp): the three limits with an
// injected clock, Retry-After arithmetic, day rollover, concurrent bursts on
// both backends, two instances sharing one PostgreSQL database, the caller
// address (TRUST_PROXY, IPv6 /64), the stored rows and the claim page.
import { sha256Hex } from "@sms/crypto";
import { createDatabase } from "@sms/db";
import {
  availableBackends,
  createPostgresTestDatabase,
  type PostgresTestDatabase,
  type PrismaDatabase,
  withPrisma,
} from "@sms/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, createApp } from "../../src/app.ts";
import { parseEnv } from "../../src/config/index.ts";
import { ManualClock, startTestApp, type TestApp } from "../harness.ts";
import { expectOnlyOwnStylesheet } from "../support/claim-html.ts";
import { expectTestKeyShape, type TestKeyBody } from "../support/test-keys.ts";

const backends = await availableBackends();
const DAY_MS = 86_400_000;

let addressCounter = 0;
/** A caller address no other test uses. */
const freshAddress = () => `198.51.${100 + Math.floor(++addressCounter / 250)}.${addressCounter % 250}`;

let dayCounter = 0;
/**
 * A UTC day no other test uses (so the service-wide counter starts at zero);
 * two unused days follow it, for tests that roll over.
 */
const freshDay = (time = "10:00:00") => {
  const day = new Date(Date.UTC(2027, 0, 1) + ++dayCounter * 3 * DAY_MS).toISOString().slice(0, 10);
  return `${day}T${time}Z`;
};

async function errorOf(response: Response) {
  return ((await response.json()) as { error: { code: string; message: string; request_id: string } }).error;
}

describe.each(backends)("POST /v1/test-keys on %s", (backend) => {
  let t: TestApp;
  const post = (address: string, init: RequestInit = {}) =>
    t.request("/v1/test-keys", { method: "POST", ...init }, address);

  beforeAll(async () => {
    t = await startTestApp({ backend });
  });
  afterAll(() => t?.close());

  it("answers 201 with the six fields, RateLimit headers and hashed rows", async () => {
    t.clock.set(freshDay("10:00:15.250"));
    const response = await post(freshAddress());
    expect(response.status).toBe(201);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(response.headers.get("x-request-id")).toMatch(/^req_[0-9a-z]{26}$/);
    // The tightest window is the minute: 5 per minute, 4 left, 45 s to its end.
    expect(response.headers.get("ratelimit-limit")).toBe("5");
    expect(response.headers.get("ratelimit-remaining")).toBe("4");
    expect(response.headers.get("ratelimit-reset")).toBe("45");
    expect(response.headers.get("retry-after")).toBeNull();

    const body = (await response.json()) as TestKeyBody;
    expectTestKeyShape(body, t.baseUrl);
    // Issue time truncated to the second, plus 30 days.
    expect(body.expires_at).toBe(
      new Date(new Date(t.clock.now()).setUTCMilliseconds(0) + 30 * DAY_MS)
        .toISOString()
        .replace(".000Z", "Z"),
    );
    expect(body.next_steps).not.toContain("\n");
    expect(body.next_steps).toMatch(/claim_url/);
    expect(body.next_steps).toMatch(/POST \/v1\/messages/);

    const token = body.claim_url.split("/").pop() ?? "";
    expect(body.api_key).not.toContain(token);
    const key = await t.app.db.prisma.apiKey.findFirstOrThrow({ where: { projectId: body.project_id } });
    expect(key.keyHash).toBe(await sha256Hex(body.api_key));
    expect(key.prefix).toBe(body.api_key.slice(0, 12));
    expect(key.mode).toBe("test");
    expect(key.revokedAt).toBeNull();
    const claim = await t.app.db.prisma.claimToken.findFirstOrThrow({
      where: { projectId: body.project_id },
    });
    expect(claim.tokenHash).toBe(await sha256Hex(token));
    expect(claim.tokenHash).not.toBe(await sha256Hex(body.api_key));
    expect(claim.expiresAt.toISOString().replace(".000Z", "Z")).toBe(body.expires_at);
    expect(claim.usedAt).toBeNull();
    const project = await t.app.db.prisma.project.findUniqueOrThrow({ where: { id: body.project_id } });
    expect(project.claimedAt).toBeNull();
    expect(project.accountId).toBeNull();
    expect(project.creditBalance).toBe(0);

    // Neither secret appears anywhere in the tables the issuance touched.
    const dump = JSON.stringify(
      await Promise.all([
        t.app.db.prisma.project.findMany(),
        t.app.db.prisma.apiKey.findMany(),
        t.app.db.prisma.claimToken.findMany(),
        t.app.db.prisma.rateLimitCounter.findMany(),
        t.app.db.prisma.auditEntry.findMany(),
      ]),
    );
    expect(dump).not.toContain(body.api_key.slice(8));
    expect(dump).not.toContain(token);
  });

  it("ignores a body and Content-Type it does not need", async () => {
    t.clock.set(freshDay());
    const withBody = await post(freshAddress(), {
      headers: { "Content-Type": "application/json" },
      body: '{"x":1}',
    });
    expect(withBody.status).toBe(201);
    const garbage = await post(freshAddress(), { headers: { "Content-Type": "text/plain" }, body: "hello" });
    expect(garbage.status).toBe(201);
  });

  it("issues distinct keys, projects and claim links", async () => {
    t.clock.set(freshDay());
    const bodies = await Promise.all(
      Array.from({ length: 8 }, async () => (await (await post(freshAddress())).json()) as TestKeyBody),
    );
    for (const field of ["api_key", "project_id", "claim_url"] as const) {
      expect(new Set(bodies.map((body) => body[field])).size, field).toBe(8);
    }
  });

  it("refuses the sixth key in a minute with rate_limited and Retry-After, then allows again next minute", async () => {
    const address = freshAddress();
    t.clock.set(freshDay("10:00:20"));
    for (let i = 0; i < 5; i++) expect((await post(address)).status).toBe(201);
    t.clock.advance(30_000); // 10:00:50
    const refused = await post(address);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("10");
    expect(refused.headers.get("ratelimit-limit")).toBe("5");
    expect(refused.headers.get("ratelimit-remaining")).toBe("0");
    expect(refused.headers.get("ratelimit-reset")).toBe("10");
    const error = await errorOf(refused);
    expect(error.code).toBe("rate_limited");
    expect(error.message).toMatch(/minute/);
    expect(error.request_id).toBe(refused.headers.get("x-request-id"));
    // Another caller is unaffected.
    expect((await post(freshAddress())).status).toBe(201);
    // Rounded up: 0.5 s before the window ends is still a one-second wait.
    t.clock.advance(9_500);
    expect((await post(address)).headers.get("retry-after")).toBe("1");
    t.clock.advance(500); // 10:01:00, a new window
    expect((await post(address)).status).toBe(201);
  });

  it("names daily_limit_reached, not rate_limited, when both the minute and the day are used up", async () => {
    const t2 = await startTestApp({ backend, env: { TEST_KEYS_PER_MINUTE: "2", TEST_KEYS_PER_DAY: "2" } });
    try {
      t2.clock.set(freshDay("12:00:00"));
      const address = freshAddress();
      const call = () => t2.request("/v1/test-keys", { method: "POST" }, address);
      expect((await call()).status).toBe(201);
      expect((await call()).status).toBe(201);
      const refused = await call();
      expect(refused.status).toBe(429);
      const error = await errorOf(refused);
      expect(error.code).toBe("daily_limit_reached");
      expect(error.message).toMatch(/T00:00:00Z/);
      // Refused requests consumed nothing: the minute counter still says 2.
      const rows = await t2.app.db.prisma.rateLimitCounter.findMany({
        where: { bucket: { contains: address } },
      });
      expect(rows.map((row) => row.count).sort()).toEqual([2, 2]);
    } finally {
      await t2.close();
    }
  });

  it("refuses the 21st key of a UTC day with daily_limit_reached naming the reset, and rolls over at midnight", async () => {
    const address = freshAddress();
    t.clock.set(freshDay("20:00:00"));
    for (let minute = 0; minute < 4; minute++) {
      for (let i = 0; i < 5; i++) expect((await post(address)).status).toBe(201);
      t.clock.advance(60_000);
    }
    // 20:04:00; the last success left nothing of the day.
    const refused = await post(address);
    expect(refused.status).toBe(429);
    const nextMidnight = `${new Date(t.clock.now().getTime() + DAY_MS).toISOString().slice(0, 10)}T00:00:00Z`;
    expect(refused.headers.get("retry-after")).toBe(String(4 * 3600 - 4 * 60));
    expect(refused.headers.get("ratelimit-limit")).toBe("20");
    expect(refused.headers.get("ratelimit-remaining")).toBe("0");
    const error = await errorOf(refused);
    expect(error.code).toBe("daily_limit_reached");
    expect(error.message).toContain(nextMidnight);
    // Refusals are not counted: the minute window is still empty.
    const minuteRow = await t.app.db.prisma.rateLimitCounter.findMany({
      where: { bucket: `test_keys:addr:${address}:minute`, windowStart: t.clock.now() },
    });
    expect(minuteRow).toEqual([]);

    t.clock.set(new Date(new Date(nextMidnight).getTime() - 1000));
    const lastSecond = await post(address);
    expect(lastSecond.status).toBe(429);
    expect(lastSecond.headers.get("retry-after")).toBe("1");
    t.clock.set(nextMidnight);
    expect((await post(address)).status).toBe(201);
  });

  it("keeps the minute and day counters apart in the first minute of a day", async () => {
    const address = freshAddress();
    t.clock.set(freshDay("00:00:10"));
    for (let i = 0; i < 5; i++) expect((await post(address)).status, `request ${i + 1}`).toBe(201);
    expect((await errorOf(await post(address))).code).toBe("rate_limited");
    const rows = await t.app.db.prisma.rateLimitCounter.findMany({
      where: { bucket: { startsWith: `test_keys:addr:${address}:` } },
      orderBy: { bucket: "asc" },
    });
    expect(rows.map((row) => [row.bucket.split(":").pop(), row.count])).toEqual([
      ["day", 5],
      ["minute", 5],
    ]);
  });

  it("refuses every caller once the service-wide daily allowance is used up", async () => {
    const day = freshDay("12:00:00");
    t.clock.set(day);
    expect((await post(freshAddress())).status).toBe(201);
    // 999 more issued today elsewhere (any instance): the default allowance is 1000.
    await t.app.db.prisma.rateLimitCounter.update({
      where: {
        bucket_windowStart: {
          bucket: "test_keys:service:day",
          windowStart: new Date(`${day.slice(0, 10)}T00:00:00Z`),
        },
      },
      data: { count: 1000 },
    });
    const refused = await post(freshAddress());
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe(String(12 * 3600));
    expect(refused.headers.get("ratelimit-limit")).toBe("1000");
    const error = await errorOf(refused);
    expect(error.code).toBe("daily_limit_reached");
    expect(error.message).toMatch(/T00:00:00Z/);
    t.clock.advance(12 * 3600_000);
    expect((await post(freshAddress())).status).toBe(201);
  });

  it("lets exactly 5 of 30 concurrent requests from one address through", async () => {
    const address = freshAddress();
    const day = freshDay("09:30:00");
    t.clock.set(day);
    const responses = await Promise.all(Array.from({ length: 30 }, () => post(address)));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(25);
    const codes = await Promise.all(
      responses.filter((r) => r.status === 429).map(async (r) => (await errorOf(r)).code),
    );
    expect(new Set(codes)).toEqual(new Set(["rate_limited"]));
    const dayStart = new Date(`${day.slice(0, 10)}T00:00:00Z`);
    const counters = await t.app.db.prisma.rateLimitCounter.findMany({
      where: {
        OR: [
          { bucket: { startsWith: `test_keys:addr:${address}:` } },
          { bucket: "test_keys:service:day", windowStart: dayStart },
        ],
      },
    });
    expect(Object.fromEntries(counters.map((row) => [row.bucket.replace(address, "A"), row.count]))).toEqual({
      "test_keys:addr:A:minute": 5,
      "test_keys:addr:A:day": 5,
      "test_keys:service:day": 5,
    });
    const keys = await t.app.db.prisma.apiKey.count({ where: { createdAt: new Date(day) } });
    expect(keys).toBe(5);
  });

  it("groups IPv6 callers by /64", async () => {
    t.clock.set(freshDay());
    const a = "2001:db8:77:1::1";
    const b = "2001:db8:77:1:ffff:ffff:ffff:fffe";
    for (let i = 0; i < 5; i++) expect((await post(i % 2 === 0 ? a : b)).status).toBe(201);
    expect((await post(a)).status).toBe(429);
    expect((await post(b)).status).toBe(429);
    expect((await post("2001:db8:77:2::1")).status).toBe(201);
    const buckets = await t.app.db.prisma.rateLimitCounter.findMany({
      where: { bucket: { contains: "2001:db8:77:" } },
    });
    expect(new Set(buckets.map((row) => row.bucket))).toEqual(
      new Set([
        "test_keys:addr:2001:db8:77:1:0:0:0:0/64:minute",
        "test_keys:addr:2001:db8:77:1:0:0:0:0/64:day",
        "test_keys:addr:2001:db8:77:2:0:0:0:0/64:minute",
        "test_keys:addr:2001:db8:77:2:0:0:0:0/64:day",
      ]),
    );
  });

  it("ignores X-Forwarded-For without TRUST_PROXY", async () => {
    t.clock.set(freshDay());
    const peer = freshAddress();
    for (let i = 0; i < 5; i++) {
      expect((await post(peer, { headers: { "X-Forwarded-For": `192.0.2.${i}` } })).status).toBe(201);
    }
    const spoofed = await post(peer, { headers: { "X-Forwarded-For": "192.0.2.99, 192.0.2.100" } });
    expect(spoofed.status).toBe(429);
    const rows = await t.app.db.prisma.rateLimitCounter.count({
      where: { bucket: { contains: "192.0.2." } },
    });
    expect(rows).toBe(0);
  });

  describe("the claim page", () => {
    // The page itself (and the sign-in flow) lives in src/pages/claim; these
    // check only what POST /v1/test-keys promises about claim_url.
    const claimPath = (body: TestKeyBody) => new URL(body.claim_url).pathname;
    const issue = async () => (await (await post(freshAddress())).json()) as TestKeyBody;

    async function expectPage(response: Response, status: number) {
      expect(response.status).toBe(status);
      expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(response.headers.get("x-request-id")).toMatch(/^req_[0-9a-z]{26}$/);
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(response.headers.get("referrer-policy")).toBe("no-referrer");
      const html = await response.text();
      expect(html).toMatch(/^<!doctype html>/i);
      expect(html).toMatch(/<html lang="en">/);
      // No scripts and nothing from elsewhere: the dashboard's stylesheet only.
      expectOnlyOwnStylesheet(html);
      return html;
    }

    it("answers 200 with a page explaining claiming for an unused link", async () => {
      t.clock.set(freshDay());
      const body = await issue();
      const html = await expectPage(await t.request(claimPath(body)), 200);
      expect(html).toMatch(/[Cc]laim/);
      expect(html).toMatch(/keeps working/);
      const head = await t.request(claimPath(body), { method: "HEAD" });
      expect(head.status).toBe(200);
      expect(await head.text()).toBe("");
    });

    it("answers 410 once the link is used or expired", async () => {
      t.clock.set(freshDay());
      const used = await issue();
      await t.app.db.prisma.claimToken.updateMany({
        where: { projectId: used.project_id },
        data: { usedAt: t.clock.now() },
      });
      await expectPage(await t.request(claimPath(used)), 410);

      const expiring = await issue();
      t.clock.set(new Date(new Date(expiring.expires_at).getTime() - 1));
      await expectPage(await t.request(claimPath(expiring)), 200);
      t.clock.set(expiring.expires_at);
      await expectPage(await t.request(claimPath(expiring)), 410);
    });

    it("answers 404 for an unknown or malformed token", async () => {
      for (const path of [
        `/claim/${"A".repeat(43)}`,
        "/claim/short",
        `/claim/${"A".repeat(44)}`,
        "/claim/%3Cscript%3E",
      ]) {
        const html = await expectPage(await t.request(path), 404);
        expect(html).not.toMatch(/<script>/);
      }
    });
  });

  it("logs neither keys nor claim tokens", async () => {
    const text = t.logs.text;
    expect(text.length).toBeGreaterThan(0);
    expect(text).not.toMatch(/sk_test_/);
    expect(text).not.toMatch(/\/claim\/[A-Za-z0-9_-]{20}/);
    const routes = new Set(t.logs.entries.map((entry) => entry.route).filter(Boolean));
    expect(routes).toContain("/claim/{token}");
    expect(routes).toContain("/v1/test-keys");
  });
});

describe("the caller address behind proxies", () => {
  const backend = backends[0] ?? "pglite";

  describe.each([
    ["a hop count", "1"],
    ["a CIDR network", "10.0.0.0/8"],
  ])("with TRUST_PROXY as %s", (_label, trustProxy) => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ backend, env: { TRUST_PROXY: trustProxy } });
    });
    afterAll(() => t?.close());
    const post = (peer: string, forwardedFor?: string) =>
      t.request(
        "/v1/test-keys",
        { method: "POST", headers: forwardedFor ? { "X-Forwarded-For": forwardedFor } : {} },
        peer,
      );

    it("limits the client the proxy saw, whatever the client prepends", async () => {
      t.clock.set(freshDay());
      const client = freshAddress();
      for (let i = 0; i < 5; i++)
        expect((await post("10.0.0.1", `192.0.2.${i}, ${client}`)).status).toBe(201);
      expect((await post("10.0.0.2", `192.0.2.77, ${client}`)).status).toBe(429);
      expect((await post("10.0.0.1", client)).status).toBe(429);
      // Another client behind the same proxy has its own limit.
      expect((await post("10.0.0.1", freshAddress())).status).toBe(201);
      const spoofed = await t.app.db.prisma.rateLimitCounter.count({
        where: { bucket: { contains: ":192.0.2." } },
      });
      expect(spoofed).toBe(0);
    });

    it("falls back to the peer when the header is missing or not an address", async () => {
      t.clock.set(freshDay());
      for (let i = 0; i < 5; i++)
        expect((await post("10.0.0.3", i % 2 ? "garbage" : undefined)).status).toBe(201);
      expect((await post("10.0.0.3")).status).toBe(429);
    });

    it("ignores X-Forwarded-For from a peer outside the trusted network (the service reached directly)", async () => {
      t.clock.set(freshDay());
      const direct = freshAddress();
      for (let i = 0; i < 5; i++) expect((await post(direct, `192.0.2.${i}`)).status).toBe(201);
      expect((await post(direct, "192.0.2.200")).status).toBe(429);
      const rotated = await t.app.db.prisma.rateLimitCounter.count({
        where: { bucket: { contains: ":192.0.2." } },
      });
      expect(rotated).toBe(0);
    });
  });
});

describe.runIf(backends.includes("postgres"))("two instances on one PostgreSQL database", () => {
  let server: PostgresTestDatabase;
  const databases: PrismaDatabase[] = [];
  const apps: App[] = [];
  const clock = new ManualClock();

  beforeAll(async () => {
    server = await createPostgresTestDatabase();
    const env = parseEnv({
      NODE_ENV: "test",
      PGLITE_DATA_DIR: "memory://",
      PUBLIC_BASE_URL: "http://api.test",
      LOG_LEVEL: "silent",
      DATABASE_URL: server.databaseUrl,
      TEST_KEYS_PER_DAY_TOTAL: "12",
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
    await server?.drop();
  });

  const post = (instance: number, address: string) =>
    apps[instance % 2]!.handler(new Request("http://api.test/v1/test-keys", { method: "POST" }), {
      remoteAddress: address,
    });

  it("share the per-address limit under a concurrent burst", async () => {
    clock.set("2027-06-01T08:00:00Z");
    const address = freshAddress();
    const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => post(i, address)));
    expect(responses.filter((response) => response.status === 201)).toHaveLength(5);
    const prisma = withPrisma(apps[0]!.db).prisma;
    const minute = await prisma.rateLimitCounter.findFirstOrThrow({
      where: { bucket: `test_keys:addr:${address}:minute` },
    });
    expect(minute.count).toBe(5);
  });

  it("both stop accepting a revoked key within API_KEY_CACHE_TTL_MS", async () => {
    clock.set("2027-06-03T08:00:00Z");
    const created = await post(0, freshAddress());
    const { api_key, project_id } = (await created.json()) as TestKeyBody;
    const probe = (instance: number) =>
      apps[instance]!.handler(
        new Request(`http://api.test/v1/messages/msg_00000000000000000000000000`, {
          headers: { Authorization: `Bearer ${api_key}` },
        }),
        { remoteAddress: "203.0.113.10" },
      );
    expect((await probe(0)).status).toBe(404);
    expect((await probe(1)).status).toBe(404);
    await withPrisma(apps[0]!.db).prisma.apiKey.updateMany({
      where: { projectId: project_id },
      data: { revokedAt: clock.now() },
    });
    clock.advance(apps[0]!.config.apiKeyCacheTtlMs);
    expect((await probe(0)).status).toBe(401);
    expect((await probe(1)).status).toBe(401);
  });

  it("share the service-wide daily allowance", async () => {
    clock.set("2027-06-02T08:00:00Z");
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => post(i, freshAddress())));
    expect(responses.filter((response) => response.status === 201)).toHaveLength(12);
    for (const refused of responses.filter((response) => response.status === 429)) {
      expect((await errorOf(refused)).code).toBe("daily_limit_reached");
    }
  });
});
