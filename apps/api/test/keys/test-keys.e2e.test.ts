// POST /v1/test-keys, the claim page and API-key authentication over real HTTP
// against the Deno process (startServer). The servers run on the real clock:
// limits are exercised away from window edges (see awayFromWindowEdge), and
// per-caller limits use X-Forwarded-For through a trusted loopback proxy so
// that every test has a caller address of its own.
import { createDatabase } from "@sms/db";
import { availableBackends, type PrismaDatabase, withPrisma } from "@sms/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerProcess, startServer } from "../harness.ts";
import { expectOnlyOwnStylesheet } from "../support/claim-html.ts";
import { expectTestKeyShape, type TestKeyBody } from "../support/test-keys.ts";

const backends = await availableBackends();
const DAY_MS = 86_400_000;

type ErrorBody = { error: { code: string; message: string; request_id: string } };

/**
 * Waits (at most `marginMs`) when the current minute or UTC day is about to
 * end, so a short sequence of requests falls into one window.
 */
async function awayFromWindowEdge(windowMs: number, marginMs = 10_000): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 250));
}

let callerCounter = 0;
const freshCaller = () => `198.18.${Math.floor(++callerCounter / 250)}.${(callerCounter % 250) + 1}`;

async function expectError(response: Response, status: number, code: string): Promise<ErrorBody["error"]> {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  const body = (await response.json()) as ErrorBody;
  expect(body.error.code).toBe(code);
  expect(body.error.request_id).toBe(response.headers.get("x-request-id"));
  return body.error;
}

/** Nothing the service printed contains a key, a claim token or an Authorization value. */
function expectCleanOutput(output: string[], secrets: string[]) {
  const text = output.join("\n");
  expect(text).toMatch(/"msg":"request"/);
  expect(text).not.toMatch(/sk_(test|live)_/);
  expect(text).not.toMatch(/Bearer/i);
  expect(text).not.toMatch(/\/claim\/(?!\{token\})/);
  for (const secret of secrets) expect(text).not.toContain(secret);
}

describe.each(backends)("test keys over HTTP on %s (TRUST_PROXY=127.0.0.1)", (backend) => {
  let server: ServerProcess;
  let db: PrismaDatabase | undefined;
  const secrets: string[] = [];
  const url = (path: string) => `${server.baseUrl}${path}`;
  const issue = (caller: string, init: RequestInit = {}) =>
    fetch(url("/v1/test-keys"), {
      method: "POST",
      ...init,
      headers: { "X-Forwarded-For": caller, ...init.headers },
    });
  const issueOk = async (caller = freshCaller()) => {
    const response = await issue(caller);
    expect(response.status).toBe(201);
    const body = (await response.json()) as TestKeyBody;
    secrets.push(body.api_key.slice(8), body.claim_url.split("/").pop() ?? "");
    return body;
  };
  const probe = (authorization?: string) =>
    fetch(url("/v1/messages/msg_00000000000000000000000000"), {
      headers: authorization === undefined ? {} : { Authorization: authorization },
    });

  beforeAll(async () => {
    server = await startServer({
      backend,
      env: {
        TRUST_PROXY: "127.0.0.1",
        TEST_KEYS_PER_MINUTE: "5",
        TEST_KEYS_PER_DAY: "3",
        API_KEY_CACHE_TTL_MS: "0",
      },
    });
    if (server.databaseUrl)
      db = withPrisma(await createDatabase({ databaseUrl: server.databaseUrl, poolSize: 2 }));
  });
  afterAll(async () => {
    await db?.close();
    await server?.cleanup();
  });

  it("issues a key: 201, exactly the six fields, RateLimit headers", async () => {
    await awayFromWindowEdge(DAY_MS);
    const response = await issue(freshCaller());
    expect(response.status).toBe(201);
    expect(response.headers.get("x-request-id")).toMatch(/^req_[0-9a-z]{26}$/);
    // The tightest window is this caller's day: 3, 2 left.
    expect(response.headers.get("ratelimit-limit")).toBe("3");
    expect(response.headers.get("ratelimit-remaining")).toBe("2");
    expect(Number(response.headers.get("ratelimit-reset"))).toBeGreaterThan(0);
    const body = (await response.json()) as TestKeyBody;
    secrets.push(body.api_key.slice(8), body.claim_url.split("/").pop() ?? "");
    expectTestKeyShape(body, server.baseUrl);
    expect(body.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // 30 days after issue; the Date header is the issue second, give or take a slow response.
    const issued = Date.parse(response.headers.get("date") ?? "");
    expect(Math.abs(Date.parse(body.expires_at) - 30 * DAY_MS - issued)).toBeLessThanOrEqual(5000);
    expect(body.next_steps.length).toBeGreaterThan(40);
    expect(body.next_steps).not.toMatch(/[\r\n]/);
  });

  it("issues distinct keys, projects and claim links", async () => {
    const bodies = await Promise.all(Array.from({ length: 5 }, () => issueOk()));
    for (const field of ["api_key", "project_id", "claim_url"] as const) {
      expect(new Set(bodies.map((body) => body[field])).size).toBe(5);
    }
    const tokens = bodies.map((body) => body.claim_url.split("/").pop() ?? "");
    for (const body of bodies) for (const token of tokens) expect(body.api_key).not.toContain(token);
  });

  it("refuses the caller's fourth key of the day with daily_limit_reached, Retry-After and the reset time", async () => {
    await awayFromWindowEdge(DAY_MS);
    const caller = freshCaller();
    for (let i = 0; i < 3; i++) await issueOk(caller);
    const refused = await issue(caller);
    const error = await expectError(refused, 429, "daily_limit_reached");
    const midnight = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS);
    expect(error.message).toContain(midnight.toISOString().replace(".000Z", "Z"));
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(Number.isInteger(retryAfter)).toBe(true);
    const expected = (midnight.getTime() - Date.parse(refused.headers.get("date") ?? "")) / 1000;
    expect(Math.abs(retryAfter - expected)).toBeLessThanOrEqual(2);
    expect(refused.headers.get("ratelimit-limit")).toBe("3");
    expect(refused.headers.get("ratelimit-remaining")).toBe("0");
    expect(refused.headers.get("ratelimit-reset")).toBe(String(retryAfter));
  });

  it("lets exactly 3 of 30 concurrent requests from one caller through", async () => {
    await awayFromWindowEdge(DAY_MS);
    const caller = freshCaller();
    const responses = await Promise.all(Array.from({ length: 30 }, () => issue(caller)));
    const created = responses.filter((response) => response.status === 201);
    expect(created).toHaveLength(3);
    for (const response of created) {
      const body = (await response.json()) as TestKeyBody;
      secrets.push(body.api_key.slice(8), body.claim_url.split("/").pop() ?? "");
    }
    for (const response of responses.filter((r) => r.status !== 201)) {
      await expectError(response, 429, "daily_limit_reached");
      expect(response.headers.get("retry-after")).toMatch(/^\d+$/);
    }
  });

  it("limits the address the trusted proxy saw, not what the client prepends", async () => {
    await awayFromWindowEdge(DAY_MS);
    const caller = freshCaller();
    for (let i = 0; i < 3; i++) {
      const response = await issue(`10.66.0.${i}, ${caller}`);
      expect(response.status).toBe(201);
      const body = (await response.json()) as TestKeyBody;
      secrets.push(body.api_key.slice(8), body.claim_url.split("/").pop() ?? "");
    }
    await expectError(await issue(`10.66.0.99, ${caller}`), 429, "daily_limit_reached");
    await expectError(await issue(caller), 429, "daily_limit_reached");
    expect((await issue(`10.66.0.99, ${freshCaller()}`)).status).toBe(201);
  });

  describe("the claim link", () => {
    it("answers 200 with a page explaining claiming", async () => {
      const body = await issueOk();
      const response = await fetch(body.claim_url);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(response.headers.get("x-request-id")).toMatch(/^req_[0-9a-z]{26}$/);
      expect(response.headers.get("referrer-policy")).toBe("no-referrer");
      const html = await response.text();
      expect(html).toMatch(/^<!doctype html>/i);
      expect(html).toMatch(/free credits/);
      expect(html).toMatch(/keeps working/);
      expectOnlyOwnStylesheet(html);
    });

    it("answers 404 for an unknown token and 405 for POST", async () => {
      const unknown = await fetch(url(`/claim/${"z".repeat(43)}`));
      expect(unknown.status).toBe(404);
      expect(unknown.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(unknown.headers.get("x-request-id")).toMatch(/^req_/);
      const post = await fetch(url(`/claim/${"z".repeat(43)}`), { method: "POST" });
      expect(post.status).toBe(405);
    });

    it.runIf(backend === "postgres")("answers 410 once used or expired", async () => {
      const used = await issueOk();
      const expired = await issueOk();
      await db?.prisma.claimToken.updateMany({
        where: { projectId: used.project_id },
        data: { usedAt: new Date() },
      });
      await db?.prisma.claimToken.updateMany({
        where: { projectId: expired.project_id },
        data: { expiresAt: new Date(Date.now() - 1000) },
      });
      for (const body of [used, expired]) {
        const response = await fetch(body.claim_url);
        expect(response.status).toBe(410);
        expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
      }
    });
  });

  describe("authentication", () => {
    it("accepts the key it issued", async () => {
      const { api_key } = await issueOk();
      await expectError(await probe(`Bearer ${api_key}`), 404, "message_not_found");
    });

    it("answers 401 unauthorized without credentials and 401 invalid_api_key with one message otherwise", async () => {
      const { api_key } = await issueOk();
      for (const authorization of [undefined, "", "Bearer", "Bearer   "]) {
        const response = await probe(authorization);
        expect(response.headers.get("www-authenticate")).toBe("Bearer");
        await expectError(response, 401, "unauthorized");
      }
      const messages = new Set<string>();
      for (const authorization of [
        `Basic ${btoa("user:password")}`,
        `Token ${api_key}`,
        `Bearer ${api_key.slice(0, -2)}`,
        "Bearer sk_test_malformed",
        `Bearer sk_test_${"A".repeat(43)}`,
        `Bearer sk_live_${"A".repeat(43)}`,
      ]) {
        const response = await probe(authorization);
        expect(response.headers.get("www-authenticate")).toBe("Bearer");
        messages.add((await expectError(response, 401, "invalid_api_key")).message);
      }
      expect(messages.size).toBe(1);
    });

    it.runIf(backend === "postgres")(
      "answers 401 for a revoked key and 403 for a suspended project",
      async () => {
        const revoked = await issueOk();
        const suspended = await issueOk();
        await db?.prisma.apiKey.updateMany({
          where: { projectId: revoked.project_id },
          data: { revokedAt: new Date() },
        });
        await db?.prisma.project.update({
          where: { id: suspended.project_id },
          data: { suspendedAt: new Date() },
        });
        await expectError(await probe(`Bearer ${revoked.api_key}`), 401, "invalid_api_key");
        const response = await probe(`Bearer ${suspended.api_key}`);
        expect(response.headers.get("www-authenticate")).toBeNull();
        await expectError(response, 403, "project_suspended");
      },
    );
  });

  it("never printed a key, a claim token or an Authorization value", () => {
    expect(secrets.length).toBeGreaterThan(10);
    expectCleanOutput(server.output, secrets);
  });
});

describe("test keys over HTTP without TRUST_PROXY (defaults)", () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServer({ backend: "pglite" });
  });
  afterAll(() => server?.cleanup());

  it("limits the socket peer to 5 a minute, whatever X-Forwarded-For claims", async () => {
    await awayFromWindowEdge(60_000);
    const secrets: string[] = [];
    for (let i = 0; i < 5; i++) {
      // Body-less, no Content-Type.
      const response = await fetch(`${server.baseUrl}/v1/test-keys`, {
        method: "POST",
        headers: { "X-Forwarded-For": `192.0.2.${i}` },
      });
      expect(response.status).toBe(201);
      expect(response.headers.get("ratelimit-limit")).toBe("5");
      expect(response.headers.get("ratelimit-remaining")).toBe(String(4 - i));
      const body = (await response.json()) as TestKeyBody;
      secrets.push(body.api_key.slice(8), body.claim_url.split("/").pop() ?? "");
    }
    const refused = await fetch(`${server.baseUrl}/v1/test-keys`, {
      method: "POST",
      headers: { "X-Forwarded-For": "192.0.2.200" },
    });
    const error = await expectError(refused, 429, "rate_limited");
    expect(error.message).toMatch(/minute/);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers.get("ratelimit-reset")).toBe(String(retryAfter));
    expect(refused.headers.get("ratelimit-remaining")).toBe("0");
    expectCleanOutput(server.output, secrets);
  });
});
