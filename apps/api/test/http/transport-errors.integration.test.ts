// Issue 11 §2: every transport error the gateway answers, table-driven and
// in-process (startTestApp): unknown routes, wrong methods, HEAD, oversized
// bodies (declared and actual), wrong content types, bodies that are not a JSON
// object, the body-less POST, and an unexpected crash inside a procedure. Each
// row checks the status, the envelope, X-Request-Id = error.request_id, the
// JSON content type and the request's one access-log line.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { availableBackends } from "@sms/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INTERNAL_ERROR_MESSAGE } from "../../src/contract/wording.ts";
import { createTestKey, startTestApp, type TestApp } from "../harness.ts";

const backends = await availableBackends();
const MAX_BODY_BYTES = 1024;

type Envelope = { error: { code: string; message: string; request_id: string } };
type LogEntry = Record<string, unknown>;

/** The request's one access-log line (exactly one), by its request id. */
function accessLine(t: TestApp, requestId: string | null): LogEntry {
  const lines = t.logs.entries.filter((entry) => entry.msg === "request" && entry.request_id === requestId);
  expect(lines).toHaveLength(1);
  return lines[0] as LogEntry;
}

/** Checks the envelope, the request id and the content type; returns the error. */
async function expectEnvelope(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  const requestId = response.headers.get("x-request-id");
  expect(requestId).toMatch(/^req_[0-9a-z]{26}$/);
  const body = (await response.json()) as Envelope;
  expect(Object.keys(body)).toEqual(["error"]);
  expect(Object.keys(body.error).sort()).toEqual(["code", "message", "request_id"]);
  expect(body.error.code).toBe(code);
  expect(body.error.message.length).toBeGreaterThan(10);
  expect(body.error.request_id).toBe(requestId);
  return body.error;
}

/** A body stream of `size` bytes, sent without Content-Length. */
function streamOf(size: number): ReadableStream<Uint8Array> {
  let left = size;
  return new ReadableStream({
    pull(controller) {
      if (left <= 0) return controller.close();
      const chunk = Math.min(left, 256);
      left -= chunk;
      controller.enqueue(new TextEncoder().encode(" ".repeat(chunk)));
    },
  });
}

describe("transport errors (in-process)", () => {
  let t: TestApp;
  let apiKey = "";

  beforeAll(async () => {
    t = await startTestApp({ backend: "pglite", env: { MAX_BODY_BYTES: String(MAX_BODY_BYTES) } });
    apiKey = (await createTestKey((path, init) => t.request(path, init))).api_key;
  });
  afterAll(() => t?.close());

  /** POST /v1/messages past authentication and the Idempotency-Key check. */
  const send = (
    body: BodyInit | null,
    headers: Record<string, string> = { "Content-Type": "application/json" },
  ) =>
    ({
      method: "POST",
      headers: { Authorization: `Bearer ${apiKey}`, "Idempotency-Key": crypto.randomUUID(), ...headers },
      body,
      duplex: "half",
    }) as RequestInit;

  const oversized = JSON.stringify({ to: "+995577123456", padding: "x".repeat(MAX_BODY_BYTES) });

  type Row = {
    name: string;
    path: string;
    init: () => RequestInit;
    status: number;
    code: string;
    /** The route template in the access log. */
    route: string;
    message?: string | RegExp;
    allow?: string;
  };

  const rows: Row[] = [
    {
      name: "an unknown route",
      path: "/v1/nope",
      init: () => ({}),
      status: 404,
      code: "route_not_found",
      route: "unmatched",
      message: "No route GET /v1/nope. See /docs for the API reference.",
    },
    {
      name: "an unknown route with a body",
      path: "/nope",
      init: () => send("{}"),
      status: 404,
      code: "route_not_found",
      route: "unmatched",
    },
    {
      name: "GET on a POST-only route",
      path: "/v1/test-keys",
      init: () => ({ method: "GET" }),
      status: 405,
      code: "method_not_allowed",
      route: "unmatched",
      allow: "POST",
      message: "GET is not allowed here. Allowed: POST.",
    },
    {
      name: "DELETE on a GET route (HEAD is allowed too)",
      path: "/healthz",
      init: () => ({ method: "DELETE" }),
      status: 405,
      code: "method_not_allowed",
      route: "unmatched",
      allow: "GET, HEAD",
    },
    {
      name: "PUT on a path with a parameter",
      path: "/v1/messages/msg_01jd0000000000000000000000",
      init: () => ({ method: "PUT", body: "{}" }),
      status: 405,
      code: "method_not_allowed",
      route: "unmatched",
      allow: "GET, HEAD",
    },
    {
      name: "a body larger than the limit by Content-Length",
      path: "/v1/messages",
      init: () =>
        send("{}", { "Content-Type": "application/json", "Content-Length": String(MAX_BODY_BYTES + 1) }),
      status: 413,
      code: "payload_too_large",
      route: "/v1/messages",
      message: `The request body is larger than ${MAX_BODY_BYTES} bytes.`,
    },
    {
      name: "a larger body without Content-Length",
      path: "/v1/messages",
      init: () => send(streamOf(MAX_BODY_BYTES * 4)),
      status: 413,
      code: "payload_too_large",
      route: "/v1/messages",
    },
    {
      name: "a larger JSON body without Content-Length",
      path: "/v1/messages",
      init: () => send(oversized),
      status: 413,
      code: "payload_too_large",
      route: "/v1/messages",
    },
    {
      name: "a larger body on the body-less POST /v1/test-keys",
      path: "/v1/test-keys",
      init: () => ({ method: "POST", body: streamOf(MAX_BODY_BYTES + 1), duplex: "half" }) as RequestInit,
      status: 413,
      code: "payload_too_large",
      route: "/v1/test-keys",
    },
    {
      name: "tRPC's endpoint, which is on the internal listener only",
      path: "/trpc/messages.send",
      init: () => send(oversized),
      status: 404,
      code: "route_not_found",
      route: "unmatched",
    },
    {
      name: "a text/plain body",
      path: "/v1/messages",
      init: () => send("{}", { "Content-Type": "text/plain" }),
      status: 415,
      code: "unsupported_media_type",
      route: "/v1/messages",
      message: "Send the request body as JSON with 'Content-Type: application/json'.",
    },
    {
      name: "a form body",
      path: "/v1/messages",
      init: () => send("to=%2B995577123456", { "Content-Type": "application/x-www-form-urlencoded" }),
      status: 415,
      code: "unsupported_media_type",
      route: "/v1/messages",
    },
    {
      name: "a body without Content-Type",
      path: "/v1/messages",
      init: () => send(new TextEncoder().encode("{}"), {}),
      status: 415,
      code: "unsupported_media_type",
      route: "/v1/messages",
    },
    {
      name: "malformed JSON",
      path: "/v1/messages",
      init: () => send('{"to": '),
      status: 400,
      code: "invalid_request",
      route: "/v1/messages",
      message: "The request body is not valid JSON.",
    },
    {
      name: "an empty body",
      path: "/v1/messages",
      init: () => send(""),
      status: 400,
      code: "invalid_request",
      route: "/v1/messages",
      message: "The request body is required: send a JSON object.",
    },
    {
      name: "a blank body",
      path: "/v1/messages",
      init: () => send(" \n "),
      status: 400,
      code: "invalid_request",
      route: "/v1/messages",
      message: "The request body is required: send a JSON object.",
    },
    {
      name: "a JSON array",
      path: "/v1/messages",
      init: () => send('[{"to": "+995577123456"}]'),
      status: 400,
      code: "invalid_request",
      route: "/v1/messages",
      message: "The request body must be a JSON object.",
    },
    {
      name: "JSON null",
      path: "/v1/messages",
      init: () => send("null"),
      status: 400,
      code: "invalid_request",
      route: "/v1/messages",
      message: "The request body must be a JSON object.",
    },
    {
      name: "a JSON number",
      path: "/v1/messages",
      init: () => send("42"),
      status: 400,
      code: "invalid_request",
      route: "/v1/messages",
      message: "The request body must be a JSON object.",
    },
  ];

  it.each(rows)("answers $name with $status $code", async (row) => {
    const init = row.init();
    const response = await t.request(row.path, init);
    const error = await expectEnvelope(response, row.status, row.code);
    if (row.message instanceof RegExp) expect(error.message).toMatch(row.message);
    else if (row.message !== undefined) expect(error.message).toBe(row.message);
    expect(response.headers.get("allow")).toBe(row.allow ?? null);
    expect(accessLine(t, error.request_id)).toMatchObject({
      level: "info",
      method: init.method ?? "GET",
      route: row.route,
      status: row.status,
      duration_ms: expect.any(Number),
    });
  });

  it("answers a body problem only after authentication (401 before 415 and 413)", async () => {
    for (const init of [
      { method: "POST", headers: { "Content-Type": "text/plain" }, body: "{}" },
      { method: "POST", headers: { "Content-Type": "application/json" }, body: oversized },
    ]) {
      const error = await expectEnvelope(await t.request("/v1/messages", init), 401, "unauthorized");
      expect(accessLine(t, error.request_id)).toMatchObject({ route: "/v1/messages", status: 401 });
    }
  });

  it("answers in the order docs/auth-and-limits.md and docs/api-behaviour.md document: 401, then 415/413", async () => {
    const docs = join(dirname(fileURLToPath(import.meta.url)), "../../../../docs");
    const auth = readFileSync(join(docs, "auth-and-limits.md"), "utf8");
    expect(auth).toContain("an unauthenticated `POST /v1/messages` gets `401`, never `415`");
    expect(auth).not.toMatch(/refused earlier/);
    const precedence =
      readFileSync(join(docs, "api-behaviour.md"), "utf8").split("## Error precedence")[1] ?? "";
    expect(precedence.indexOf("2. Authentication")).toBeGreaterThan(0);
    expect(
      precedence.indexOf(
        "4. The transport of the body: `415 unsupported_media_type`, `413 payload_too_large`",
      ),
    ).toBeGreaterThan(precedence.indexOf("2. Authentication"));
    // The behaviour, as documented: without a key 401 whatever the body; with one, 415 and 413.
    const wrongType = { "Content-Type": "text/plain" };
    const json = { "Content-Type": "application/json" };
    const withKey = { Authorization: `Bearer ${apiKey}`, "Idempotency-Key": "order-1" };
    expect((await t.request("/v1/messages", { method: "POST", headers: wrongType, body: "{}" })).status).toBe(
      401,
    );
    expect((await t.request("/v1/messages", { method: "POST", headers: json, body: oversized })).status).toBe(
      401,
    );
    await expectEnvelope(
      await t.request("/v1/messages", { method: "POST", headers: { ...wrongType, ...withKey }, body: "{}" }),
      415,
      "unsupported_media_type",
    );
    await expectEnvelope(
      await t.request("/v1/messages", { method: "POST", headers: { ...json, ...withKey }, body: oversized }),
      413,
      "payload_too_large",
    );
  });

  it("accepts POST /v1/test-keys with no Content-Type and no body (201)", async () => {
    const response = await t.request("/v1/test-keys", { method: "POST" });
    expect(response.status).toBe(201);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await response.json()) as { api_key: string; project_id: string };
    expect(body.api_key).toMatch(/^sk_test_/);
    const requestId = response.headers.get("x-request-id");
    expect(requestId).toMatch(/^req_/);
    expect(response.headers.get("ratelimit-limit")).toMatch(/^\d+$/);
    expect(accessLine(t, requestId)).toMatchObject({
      level: "info",
      method: "POST",
      route: "/v1/test-keys",
      status: 201,
      project_id: body.project_id,
    });
  });

  /** HEAD answers like GET: same status and headers, no body, its own access-log line. */
  it.each([
    { path: "/healthz", status: 200, route: "/healthz" },
    { path: "/readyz", status: 200, route: "/readyz" },
    { path: "/openapi.json", status: 200, route: "/openapi.json" },
    { path: "/v1/nope", status: 404, route: "unmatched" },
    { path: "/v1/messages/msg_01jd0000000000000000000000", status: 401, route: "/v1/messages/{message_id}" },
    { path: "/v1/test-keys", status: 405, route: "unmatched" },
  ])("answers HEAD $path like GET, without a body ($status)", async ({ path, status, route }) => {
    const get = await t.request(path);
    const head = await t.request(path, { method: "HEAD" });
    expect(get.status).toBe(status);
    expect(head.status).toBe(status);
    expect(await head.text()).toBe("");
    const headers = (response: Response) =>
      [...response.headers].filter(([name]) => name !== "x-request-id" && name !== "content-length");
    expect(headers(head)).toEqual(headers(get));
    const requestId = head.headers.get("x-request-id");
    expect(requestId).toMatch(/^req_/);
    expect(requestId).not.toBe(get.headers.get("x-request-id"));
    expect(accessLine(t, requestId)).toMatchObject({ method: "HEAD", route, status });
    if (status >= 400) {
      const error = await expectEnvelope(get, status, (await get.clone().json()).error.code);
      expect(accessLine(t, error.request_id)).toMatchObject({ method: "GET", route, status });
    }
  });
});

describe.each(backends)("an unexpected crash inside a procedure on %s", (backend) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ backend });
  });
  afterAll(() => t?.close());

  it("answers 500 internal_error with a message that reveals nothing, and logs the cause", async () => {
    const before = await t.request("/v1/test-keys", { method: "POST" });
    expect(before.status).toBe(201);
    // The database goes away under the running application: the procedure's
    // first query throws.
    await t.app.db.close();

    const response = await t.request("/v1/test-keys", { method: "POST" });
    const error = await expectEnvelope(response, 500, "internal_error");
    expect(error.message).toBe(INTERNAL_ERROR_MESSAGE);

    const failures = t.logs.entries.filter(
      (entry) => entry.msg === "procedure failed" && entry.request_id === error.request_id,
    );
    expect(failures).toHaveLength(1);
    const cause = (failures[0]?.err as { message?: string } | undefined)?.message ?? "";
    expect(cause.length).toBeGreaterThan(0);
    expect(error.message).not.toContain(cause);
    expect(accessLine(t, error.request_id)).toMatchObject({
      level: "error",
      method: "POST",
      route: "/v1/test-keys",
      status: 500,
    });

    // The process still answers what does not need the database.
    expect((await t.request("/healthz")).status).toBe(200);
  });
});
