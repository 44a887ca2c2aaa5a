// Issue 12 §1: tRPC is served on the internal listener only, behind
// INTERNAL_API_TOKEN, without batching and with the public port's body limit;
// the public port answers 404 for /trpc/*. In-process (startTestApp), through
// the typed client of src/internal-client.ts (these scenarios were
// packages/api-client's integration test while /trpc was public). The same
// listener over real HTTP is in connections.e2e.test.ts and privacy.e2e.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  apiErrorCode,
  apiRequestId,
  createInternalClient,
  type InternalClient,
} from "../../src/internal-client.ts";
import { startTestApp, type TestApp } from "../harness.ts";

const TOKEN = "internal-TEST-token-0123456789abcdef";
const MAX_BODY_BYTES = 2048;
let t: TestApp;
const seen: Array<{ url: string; headers: Headers }> = [];

function clientFor(options: { apiKey?: string; token?: string; operator?: string } = {}): InternalClient {
  return createInternalClient({
    baseUrl: `${t.baseUrl}/`,
    token: options.token ?? TOKEN,
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
    ...(options.operator !== undefined ? { operator: options.operator } : {}),
    fetch: async (input, init) => {
      const request = new Request(input, init);
      seen.push({ url: request.url, headers: request.headers });
      const handler = t.app.internalHandler;
      if (!handler) throw new Error("no internal listener");
      return handler(request, { remoteAddress: "127.0.0.1" });
    },
  });
}

beforeAll(async () => {
  t = await startTestApp({
    backend: "pglite",
    env: {
      INTERNAL_PORT: "0",
      INTERNAL_API_TOKEN: TOKEN,
      MAX_BODY_BYTES: String(MAX_BODY_BYTES),
      JOBS_ENABLED: "false",
    },
  });
});
afterAll(async () => {
  await t?.close();
});

const request = {
  to: "+995555123456",
  template: "verification_code",
  variables: { code: "4821" },
  locale: "en",
} as const;

type Envelope = { error: { code: string; message: string; request_id: string } };

describe("the typed client on the internal listener", () => {
  it("gets a test key, sends, replays and reads a message", async () => {
    const key = await clientFor().testKeys.create.mutate();
    expect(key.api_key).toMatch(/^sk_test_/);
    const sms = clientFor({ apiKey: key.api_key });

    const sent = await sms.messages.send.mutate(request, { context: { idempotencyKey: "client-1" } });
    expect(sent).toMatchObject({ object: "message", status: "submitted", segments: 1, to: "+9955••••••56" });
    const last = seen.at(-1);
    expect(last?.url).toBe(`${t.baseUrl}/trpc/messages.send`);
    expect(last?.headers.get("authorization")).toBe(`Bearer ${TOKEN}`);
    expect(last?.headers.get("x-api-key")).toBe(key.api_key);
    expect(last?.headers.get("idempotency-key")).toBe("client-1");

    const replay = await sms.messages.send.mutate(request, { context: { idempotencyKey: "client-1" } });
    expect(replay).toEqual(sent);

    const read = await sms.messages.get.query({ message_id: sent.id });
    expect(read.id).toBe(sent.id);
    expect(read.to).toBe("+9955••••••56");
  });

  it("surfaces our stable error codes and the request id", async () => {
    const key = await clientFor().testKeys.create.mutate();
    const sms = clientFor({ apiKey: key.api_key });

    const missingKey = await sms.messages.send.mutate(request).catch((error: unknown) => error);
    expect(apiErrorCode(missingKey)).toBe("idempotency_key_required");
    expect(apiRequestId(missingKey)).toMatch(/^req_/);

    await sms.messages.send.mutate(request, { context: { idempotencyKey: "client-2" } });
    const reused = await sms.messages.send
      .mutate({ ...request, to: "+995555123457" }, { context: { idempotencyKey: "client-2" } })
      .catch((error: unknown) => error);
    expect(apiErrorCode(reused)).toBe("idempotency_key_reused");

    const notFound = await sms.messages.get
      .query({ message_id: "msg_nope" })
      .catch((error: unknown) => error);
    expect(apiErrorCode(notFound)).toBe("message_not_found");

    const anonymous = await clientFor()
      .messages.get.query({ message_id: "msg_nope" })
      .catch((error: unknown) => error);
    expect(apiErrorCode(anonymous)).toBe("unauthorized");
    const wrongKey = await clientFor({ apiKey: `sk_test_${"A".repeat(43)}` })
      .messages.get.query({ message_id: "msg_nope" })
      .catch((error: unknown) => error);
    expect(apiErrorCode(wrongKey)).toBe("invalid_api_key");

    expect(apiErrorCode(new Error("not from the API"))).toBeNull();
  });

  it("refuses a wrong token with 401 in the envelope, through the client too", async () => {
    const refused = await clientFor({ token: `${TOKEN}x` })
      .health.liveness.query()
      .catch((error: unknown) => error);
    expect(apiErrorCode(refused)).toBe("unauthorized");
    expect(apiRequestId(refused)).toMatch(/^req_/);
  });
});

describe("the internal listener's transport", () => {
  const liveness = "/trpc/health.liveness";

  it("answers only with the token: missing, wrong, other scheme or a prefix get 401", async () => {
    const before = t.logs.entries.length;
    const attempts: Array<Record<string, string>> = [
      {},
      { Authorization: `Bearer ${TOKEN.slice(0, -1)}` },
      { Authorization: `Bearer ${TOKEN}0` },
      { Authorization: `Basic ${TOKEN}` },
      { Authorization: TOKEN },
      { "X-Api-Key": TOKEN },
    ];
    for (const headers of attempts) {
      const response = await t.internal(liveness, { headers });
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toBe("Bearer");
      const body = (await response.json()) as Envelope;
      expect(body.error.code).toBe("unauthorized");
      expect(body.error.request_id).toBe(response.headers.get("x-request-id"));
    }
    const ok = await t.internal(liveness, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ result: { data: { status: "alive" } } });
    // The token never reaches the log, right or wrong.
    expect(t.logs.text).not.toContain(TOKEN.slice(0, 20));
    const lines = t.logs.entries
      .slice(before)
      .filter((entry) => entry.listener === "internal" && entry.msg === "request");
    expect(lines.map((line) => line.status)).toEqual([401, 401, 401, 401, 401, 401, 200]);
  });

  it("refuses batches: three readiness calls in one request run none", async () => {
    const before = t.logs.entries.length;
    const response = await t.internal(
      `/trpc/health.readiness,health.readiness,health.readiness?batch=1&input=${encodeURIComponent("{}")}`,
      { headers: { Authorization: `Bearer ${TOKEN}` } },
    );
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { data: { apiCode: string } } };
    expect(body.error.data.apiCode).toBe("invalid_request");
    // One request, one access-log line, and no procedure ran.
    const lines = t.logs.entries.slice(before).filter((entry) => entry.msg === "request");
    expect(lines).toHaveLength(1);
  });

  it("holds the body limit: a larger body gets 413 in the envelope, never reaching the procedure", async () => {
    const key = (await clientFor().testKeys.create.mutate()).api_key;
    const response = await t.internal("/trpc/messages.send", {
      method: "POST",
      headers: {
        Authorization: `Bearer ${TOKEN}`,
        "X-Api-Key": key,
        "Idempotency-Key": "too-big",
        "Content-Type": "application/json",
      },
      body: JSON.stringify({ ...request, padding: "x".repeat(MAX_BODY_BYTES) }),
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as Envelope).error.code).toBe("payload_too_large");
  });

  it("serves nothing but /trpc/*", async () => {
    const response = await t.internal("/v1/test-keys", {
      method: "POST",
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    expect(response.status).toBe(404);
    expect(((await response.json()) as Envelope).error.code).toBe("route_not_found");
  });
});

describe("the public port", () => {
  it("answers 404 route_not_found in the envelope for every /trpc path", async () => {
    for (const [path, init] of [
      ["/trpc/health.liveness", {}],
      ["/trpc/health.readiness,health.readiness?batch=1&input=%7B%7D", {}],
      ["/trpc/testKeys.create", { method: "POST" }],
      [
        "/trpc/messages.send",
        {
          method: "POST",
          headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
          body: JSON.stringify(request),
        },
      ],
    ] as const) {
      const response = await t.request(path, init as RequestInit);
      expect(response.status, path).toBe(404);
      const body = (await response.json()) as Envelope;
      expect(body.error.code).toBe("route_not_found");
    }
  });
});

describe("the operator's procedures on the internal listener (the operator tool's road)", () => {
  it("are refused unless the caller names its operator; the named operator is the audit row's actor", async () => {
    const key = (await (await t.request("/v1/test-keys", { method: "POST" })).json()) as {
      project_id: string;
    };
    const anonymous = clientFor();
    const refused = await anonymous.operator.projects.get
      .query({ project_id: key.project_id })
      .catch((e) => e);
    expect(apiErrorCode(refused)).not.toBeNull();
    expect(refused.data?.code).toBe("UNAUTHORIZED");

    const nino = clientFor({ operator: "nino" });
    const shown = await nino.operator.projects.get.query({ project_id: key.project_id });
    expect(shown).toMatchObject({ ok: true, project: { id: key.project_id } });
    const suspended = await nino.operator.projects.suspend.mutate({ project_id: key.project_id });
    expect(suspended).toMatchObject({ ok: true, changed: true });
    const audit = await t.app.db.prisma.auditEntry.findMany({ where: { projectId: key.project_id } });
    expect(audit.map((entry) => [entry.actor, entry.action])).toContainEqual(["nino", "project.suspended"]);

    // Refusals come back as values, worded for a terminal.
    const again = await nino.operator.keys.createLive.mutate({ project_id: key.project_id });
    expect(again).toEqual({
      ok: false,
      code: "project_not_claimed",
      message: `Project ${key.project_id} has not been claimed: live keys and paid credits are only for projects a human has claimed in the browser.`,
    });
    // A token holder with a wrong token reaches nothing.
    const wrong = await clientFor({ token: "x".repeat(40), operator: "nino" })
      .operator.projects.get.query({ project_id: key.project_id })
      .catch((e) => e);
    expect(apiErrorCode(wrong)).toBe("unauthorized");
  });
});
