// Spec 5 in-process (startTestApp): every 401/403 path, revocation and
// suspension within the cache bound (ManualClock), the authenticated context,
// and a log scan for keys and Authorization values.
import { newId } from "@sms/crypto";
import { availableBackends } from "@sms/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestKey, sendMessageRequest, startTestApp, type TestApp } from "../harness.ts";

const backends = await availableBackends();
const CACHE_TTL_MS = 2_000;

type ErrorBody = { error: { code: string; message: string; request_id: string } };

describe.each(backends)("API-key authentication on %s", (backend) => {
  let t: TestApp;
  let key: { api_key: string; project_id: string };
  const sentAuthorizations: string[] = [];

  beforeAll(async () => {
    t = await startTestApp({ backend, env: { API_KEY_CACHE_TTL_MS: String(CACHE_TTL_MS) } });
    key = await createTestKey((path, init) => t.request(path, init));
  });
  afterAll(() => t?.close());

  /** GET /v1/messages/{random id}: 404 message_not_found once authenticated. */
  const probe = (authorization?: string) => {
    if (authorization !== undefined) sentAuthorizations.push(authorization);
    return t.request(`/v1/messages/${newId("msg")}`, {
      headers: authorization === undefined ? {} : { Authorization: authorization },
    });
  };

  async function expectError(response: Response, status: number, code: string) {
    expect(response.status).toBe(status);
    const body = (await response.json()) as ErrorBody;
    expect(body.error.code).toBe(code);
    expect(body.error.request_id).toBe(response.headers.get("x-request-id"));
    return body.error.message;
  }

  let callers = 20;
  const issueKey = () => createTestKey((path, init) => t.request(path, init, `203.0.113.${++callers}`));

  it("accepts a valid key (404 for a message that does not exist)", async () => {
    const response = await probe(`Bearer ${key.api_key}`);
    await expectError(response, 404, "message_not_found");
    // The scheme is case-insensitive and surrounding whitespace is ignored.
    await expectError(await probe(`bearer ${key.api_key}`), 404, "message_not_found");
    await expectError(await probe(`BEARER   ${key.api_key}  `), 404, "message_not_found");
  });

  it("answers 401 unauthorized without credentials", async () => {
    for (const authorization of [undefined, "", "   ", "Bearer", "Bearer ", "bearer    "]) {
      const response = await probe(authorization);
      expect(response.headers.get("www-authenticate"), String(authorization)).toBe("Bearer");
      const message = await expectError(response, 401, "unauthorized");
      expect(message).toMatch(/Authorization: Bearer/);
    }
  });

  it("answers 401 invalid_api_key, with one message, for another scheme, a malformed or an unknown key", async () => {
    const secret = key.api_key.slice("sk_test_".length);
    const unknownSecret = `${secret.slice(0, -1)}${secret.endsWith("A") ? "B" : "A"}`;
    const cases = [
      `Basic ${btoa("user:password")}`,
      `Basic ${key.api_key}`,
      `Token ${key.api_key}`,
      `Digest ${key.api_key}`,
      key.api_key,
      `Bearer ${key.api_key}x`,
      `Bearer ${key.api_key.slice(0, -1)}`,
      `Bearer ${key.api_key} ${key.api_key}`,
      `Bearer "${key.api_key}"`,
      `Bearer ${secret}`,
      `Bearer sk_prod_${secret}`,
      "Bearer sk_test_short",
      "Bearer not-a-key",
      `Bearer sk_test_${unknownSecret}`,
      `Bearer sk_live_${secret}`,
      `Bearer ${"x".repeat(5000)}`,
    ];
    const messages = new Set<string>();
    for (const authorization of cases) {
      const response = await probe(authorization);
      expect(response.status, authorization.slice(0, 40)).toBe(401);
      expect(response.headers.get("www-authenticate")).toBe("Bearer");
      const body = (await response.json()) as ErrorBody;
      expect(body.error.code, authorization.slice(0, 40)).toBe("invalid_api_key");
      messages.add(body.error.message);
    }
    expect(messages.size).toBe(1);
  });

  it("stops accepting a revoked key within the cache TTL", async () => {
    const revoked = await issueKey();
    await expectError(await probe(`Bearer ${revoked.api_key}`), 404, "message_not_found");
    const unknownMessage = await expectError(
      await probe(`Bearer sk_test_${"Q".repeat(43)}`),
      401,
      "invalid_api_key",
    );

    await t.app.db.prisma.apiKey.updateMany({
      where: { projectId: revoked.project_id },
      data: { revokedAt: t.clock.now() },
    });
    // Within the TTL the cached lookup may still answer; at the TTL it may not.
    t.clock.advance(CACHE_TTL_MS - 1);
    await expectError(await probe(`Bearer ${revoked.api_key}`), 404, "message_not_found");
    t.clock.advance(1);
    const message = await expectError(await probe(`Bearer ${revoked.api_key}`), 401, "invalid_api_key");
    expect(message).toBe(unknownMessage);
    // Sending is refused too.
    const send = await t.request(
      "/v1/messages",
      sendMessageRequest(revoked.api_key, "revoked-1", {
        to: "+995555123456",
        template: "verification_code",
        variables: { code: "1234" },
      }),
    );
    await expectError(send, 401, "invalid_api_key");
  });

  it("answers 403 project_suspended for a suspended project, and accepts the key again when lifted", async () => {
    const suspended = await issueKey();
    await expectError(await probe(`Bearer ${suspended.api_key}`), 404, "message_not_found");
    await t.app.db.prisma.project.update({
      where: { id: suspended.project_id },
      data: { suspendedAt: t.clock.now() },
    });
    t.clock.advance(CACHE_TTL_MS);
    const response = await probe(`Bearer ${suspended.api_key}`);
    expect(response.headers.get("www-authenticate")).toBeNull();
    const message = await expectError(response, 403, "project_suspended");
    expect(message).toMatch(/suspended/);
    const send = await t.request(
      "/v1/messages",
      sendMessageRequest(suspended.api_key, "suspended-1", {
        to: "+995555123456",
        template: "verification_code",
        variables: { code: "1234" },
      }),
    );
    await expectError(send, 403, "project_suspended");
    expect(await t.app.db.prisma.message.count({ where: { projectId: suspended.project_id } })).toBe(0);

    await t.app.db.prisma.project.update({
      where: { id: suspended.project_id },
      data: { suspendedAt: null },
    });
    t.clock.advance(CACHE_TTL_MS);
    await expectError(await probe(`Bearer ${suspended.api_key}`), 404, "message_not_found");
  });

  it("checks credentials before the body (401 wins over 400)", async () => {
    const response = await t.request("/v1/messages", {
      method: "POST",
      headers: { "Content-Type": "application/json", "Idempotency-Key": "x" },
      body: '{"nonsense": true}',
    });
    await expectError(response, 401, "unauthorized");
  });

  it("carries the project, the key mode and the key id to the route", async () => {
    const owner = await issueKey();
    const other = await issueKey();
    const send = await t.request(
      "/v1/messages",
      sendMessageRequest(owner.api_key, "ctx-1", {
        to: "+995555123456",
        template: "verification_code",
        variables: { code: "1234" },
      }),
    );
    expect(send.status).toBe(201);
    const { id } = (await send.json()) as { id: string };
    const keyRow = await t.app.db.prisma.apiKey.findFirstOrThrow({
      where: { projectId: owner.project_id },
    });
    const message = await t.app.db.prisma.message.findFirstOrThrow({ where: { id } });
    expect({ projectId: message.projectId, mode: message.mode, apiKeyId: message.apiKeyId }).toEqual({
      projectId: owner.project_id,
      mode: "test",
      apiKeyId: keyRow.id,
    });
    const own = await t.request(`/v1/messages/${id}`, {
      headers: { Authorization: `Bearer ${owner.api_key}` },
    });
    expect(own.status).toBe(200);
    // A key reaches only its own project's messages.
    const foreign = await t.request(`/v1/messages/${id}`, {
      headers: { Authorization: `Bearer ${other.api_key}` },
    });
    await expectError(foreign, 404, "message_not_found");
    const entry = t.logs.entries.find((e) => e.route === "/v1/messages" && e.status === 201);
    expect(entry?.project_id).toBe(owner.project_id);
  });

  it("never logs a key, a claim token or an Authorization value", async () => {
    const text = t.logs.text;
    expect(t.logs.entries.length).toBeGreaterThan(20);
    expect(text).not.toMatch(/sk_(test|live)_/);
    expect(text).not.toMatch(/Bearer|Basic /i);
    expect(text).not.toContain("/claim/");
    for (const authorization of sentAuthorizations) {
      const credentials = authorization.trim().split(/\s+/).pop() ?? "";
      if (credentials.length >= 8) expect(text, credentials.slice(0, 12)).not.toContain(credentials);
    }
    expect(text).not.toContain(key.api_key.slice(8));
  });
});

describe.each(backends)("failed API-key authentication, throttled per address, on %s", (backend) => {
  const LIMIT = 5;
  let t: TestApp;
  let valid: { api_key: string };
  let lookups = 0;
  const ATTACKER = "198.51.100.7";
  const NEIGHBOUR = "198.51.100.8";

  beforeAll(async () => {
    t = await startTestApp({ backend, env: { AUTH_FAILURES_PER_MINUTE: String(LIMIT) } });
    t.clock.set("2026-11-22T10:00:05Z");
    valid = await createTestKey((path, init) => t.request(path, init, NEIGHBOUR));
    const keys = t.app.store.keys;
    const lookup = keys.lookup.bind(keys);
    keys.lookup = (hash) => {
      lookups += 1;
      return lookup(hash);
    };
  });
  afterAll(() => t?.close());

  const read = (apiKey: string, address: string) =>
    t.request(`/v1/messages/${newId("msg")}`, { headers: { Authorization: `Bearer ${apiKey}` } }, address);
  const randomKey = () => `sk_test_${"x".repeat(11)}${crypto.randomUUID().replaceAll("-", "")}`;

  it("answers 401 for the first failures, then 429 rate_limited without a lookup; valid keys pass throughout", async () => {
    // The valid key has authenticated once from the attacker's address (a shared NAT) before the flood.
    expect((await read(valid.api_key, ATTACKER)).status).toBe(404);
    const before = lookups;
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await read(randomKey(), ATTACKER)).status);
    expect(statuses).toEqual([...Array(LIMIT).fill(401), ...Array(30 - LIMIT).fill(429)]);
    // Only the first failures reached the database.
    expect(lookups - before).toBe(LIMIT);

    const throttled = await read(randomKey(), ATTACKER);
    expect(throttled.status).toBe(429);
    const body = (await throttled.json()) as ErrorBody;
    expect(body.error.code).toBe("rate_limited");
    // A client that retries 429s must not hide a misconfigured key: the message says the key was refused.
    expect(body.error.message).toContain("This API key was refused");
    expect(body.error.request_id).toBe(throttled.headers.get("x-request-id"));
    expect(Number(throttled.headers.get("retry-after"))).toBe(55);

    // The valid key still works from that address, and from another one; the neighbour's own failures count apart.
    expect((await read(valid.api_key, ATTACKER)).status).toBe(404);
    expect((await read(valid.api_key, NEIGHBOUR)).status).toBe(404);
    expect((await read(randomKey(), NEIGHBOUR)).status).toBe(401);

    // The next minute, the address is answered again (401 for a wrong key).
    t.clock.advance(60_000);
    expect((await read(randomKey(), ATTACKER)).status).toBe(401);
  });

  it("answers a repeated wrong key from memory past the lookup cache (one lookup), still 401", async () => {
    t.clock.advance(60_000);
    const wrong = randomKey();
    const before = lookups;
    for (let i = 0; i < 3; i++) {
      expect((await read(wrong, "192.0.2.50")).status).toBe(401);
      // Past the key-lookup cache's TTL (2 s): only the refusal memory can answer.
      t.clock.advance(3_000);
    }
    expect(lookups - before).toBe(1);
  });
});
