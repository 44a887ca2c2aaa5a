// Issue 2, point 6 and "Bad input": the HTTP plumbing over real HTTP against
// the Deno process. Every error uses the envelope, with request_id equal to
// the X-Request-Id header.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_DIR, type ServerProcess, startServer } from "../harness.ts";
import { openRaw } from "../support/raw-http.ts";

let server: ServerProcess;

beforeAll(async () => {
  server = await startServer({ backend: "pglite", env: { MAX_BODY_BYTES: "16384" } });
});
afterAll(async () => {
  await server?.cleanup();
});

async function expectEnvelope(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  const requestId = response.headers.get("x-request-id");
  expect(requestId).toMatch(/^req_[0-9a-z]{26}$/);
  const body = (await response.json()) as { error: { code: string; message: string; request_id: string } };
  expect(Object.keys(body)).toEqual(["error"]);
  expect(Object.keys(body.error).sort()).toEqual(["code", "message", "request_id"]);
  expect(body.error.code).toBe(code);
  expect(body.error.message.length).toBeGreaterThan(10);
  expect(body.error.request_id).toBe(requestId);
  return body.error;
}

const url = (path: string) => `${server.baseUrl}${path}`;

/** One test key for the whole file (test keys are limited per address and minute). */
let sharedKey: Promise<string> | undefined;
function testKey(): Promise<string> {
  sharedKey ??= fetch(url("/v1/test-keys"), { method: "POST" })
    .then((response) => response.json())
    .then((body) => (body as { api_key: string }).api_key);
  return sharedKey;
}

describe("routing", () => {
  it("answers an unknown route with 404 route_not_found", async () => {
    await expectEnvelope(await fetch(url("/nope")), 404, "route_not_found");
    await expectEnvelope(await fetch(url("/v2/messages")), 404, "route_not_found");
  });

  it("answers a wrong method with 405 and Allow", async () => {
    const response = await fetch(url("/v1/test-keys"), { method: "GET" });
    expect(response.headers.get("allow")).toBe("POST");
    await expectEnvelope(response, 405, "method_not_allowed");
    const del = await fetch(url("/healthz"), { method: "DELETE" });
    expect(del.headers.get("allow")).toBe("GET, HEAD");
    await expectEnvelope(del, 405, "method_not_allowed");
    const put = await fetch(url("/v1/messages"), { method: "PUT", body: "{}" });
    expect(put.headers.get("allow")).toBe("POST");
    await expectEnvelope(put, 405, "method_not_allowed");
  });

  it("is exact about paths: case and odd characters do not match", async () => {
    await expectEnvelope(await fetch(url("/V1/TEST-KEYS"), { method: "POST" }), 404, "route_not_found");
    await expectEnvelope(await fetch(url("/v1/test-keys%00")), 404, "route_not_found");
    await expectEnvelope(await fetch(url("/%E2%80%A2/..%2F..%2Fetc%2Fpasswd")), 404, "route_not_found");
    await expectEnvelope(await fetch(url("/v1/messages/a/b")), 404, "route_not_found");
  });

  it("echoes at most 200 characters of an unknown path (a 51 KB URL does not give a 51 KB body)", async () => {
    const long = `/${"a".repeat(51 * 1024)}`;
    const response = await fetch(url(long));
    const error = await expectEnvelope(response, 404, "route_not_found");
    expect(error.message).toContain(`/${"a".repeat(199)}…`);
    expect(error.message).not.toContain("a".repeat(201));
    expect(error.message.length).toBeLessThan(300);
  });

  it("answers HEAD with the Content-Length GET's body has (never 0 for a non-empty body)", async () => {
    const bundle = /src="(\/docs\/assets\/[^"]+)"/.exec(await (await fetch(url("/docs"))).text())?.[1] ?? "";
    expect(bundle).toMatch(/^\/docs\/assets\/api-reference\..+\.js$/);
    const paths = [
      "/healthz",
      "/openapi.json",
      "/docs",
      bundle,
      "/docs/assets/nope.js",
      "/v1/messages/msg_x",
    ];
    for (const path of paths) {
      // Bytes as sent (fetch would decode a compressed body).
      const identity = { "Accept-Encoding": "identity" };
      const get = await fetch(url(path), { headers: identity });
      const length = (await get.arrayBuffer()).byteLength;
      expect(length, path).toBeGreaterThan(0);
      const head = await fetch(url(path), { method: "HEAD", headers: identity });
      expect(head.status, path).toBe(get.status);
      expect(head.headers.get("content-length"), path).toBe(String(length));
      expect((await head.arrayBuffer()).byteLength, path).toBe(0);
    }
  });

  it("sends X-Content-Type-Options: nosniff on every response", async () => {
    const apiKey = await testKey();
    const responses = await Promise.all([
      fetch(url("/healthz")),
      fetch(url("/readyz")),
      fetch(url("/openapi.json")),
      fetch(url("/docs")),
      fetch(url("/favicon.ico")),
      fetch(url("/nope")),
      fetch(url("/healthz"), { method: "DELETE" }),
      fetch(url("/healthz"), { method: "HEAD" }),
      fetch(url("/v1/messages/msg_x")),
      fetch(url("/v1/messages/msg_x"), { headers: { Authorization: `Bearer ${apiKey}` } }),
      fetch(url("/v1/messages"), {
        method: "POST",
        headers: { Authorization: `Bearer ${apiKey}` },
        body: "{",
      }),
      fetch(url("/dashboard")),
    ]);
    for (const response of responses) {
      await response.arrayBuffer();
      expect(response.headers.get("x-content-type-options"), `${response.url} ${response.status}`).toBe(
        "nosniff",
      );
    }
  });

  it("answers HEAD like GET without a body", async () => {
    const response = await fetch(url("/healthz"), { method: "HEAD" });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-request-id")).toMatch(/^req_/);
    expect(await response.text()).toBe("");
  });
});

describe("headers sent more than once", () => {
  /** One raw request on its own connection; the whole answer as text. */
  async function raw(
    head: string,
    body = "",
  ): Promise<{ status: number | null; body: string; text: string }> {
    const connection = await openRaw(server.port);
    connection.write(`${head}Connection: close\r\n\r\n${body}`);
    await connection.closedByServer();
    const text = connection.received();
    return { status: connection.status(), body: text.slice(text.indexOf("\r\n\r\n") + 4), text };
  }

  it("refuses two Idempotency-Key lines with 400 invalid_request naming the header, and sends nothing", async () => {
    const apiKey = await testKey();
    const body = JSON.stringify({
      to: "+995555123456",
      template: "verification_code",
      variables: { code: "4821" },
    });
    const head = (keys: string[]) =>
      `POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\n${keys.map((key) => `Idempotency-Key: ${key}\r\n`).join("")}Content-Length: ${body.length}\r\n`;
    const answer = await raw(head(["dup-k", "dup-k"]), body);
    expect(answer.status).toBe(400);
    const error = (
      JSON.parse(answer.body) as { error: { code: string; message: string; request_id: string } }
    ).error;
    expect(error.code).toBe("invalid_request");
    expect(error.message).toContain("'Idempotency-Key'");
    expect(answer.text).toMatch(new RegExp(`\r\nx-request-id: ${error.request_id}\r\n`, "i"));
    // Nothing was stored under "dup-k, dup-k": a send with that one key is a new message (201), not a replay.
    const single = await fetch(url("/v1/messages"), {
      method: "POST",
      headers: {
        Authorization: `Bearer ${apiKey}`,
        "Content-Type": "application/json",
        "Idempotency-Key": "dup-k, dup-k",
      },
      body,
    });
    expect(single.status).toBe(201);
  });

  it("refuses two Authorization lines with 400 invalid_request naming the header", async () => {
    const answer = await raw(
      "GET /v1/messages/msg_x HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer sk_test_a\r\nAuthorization: Bearer sk_test_b\r\n",
    );
    expect(answer.status).toBe(400);
    const error = (JSON.parse(answer.body) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe("invalid_request");
    expect(error.message).toContain("'Authorization'");
  });

  it("accepts one Idempotency-Key line whose value contains a comma", async () => {
    const answer = await raw(
      "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nIdempotency-Key: a, b\r\nContent-Length: 0\r\n",
    );
    // Past the header check: the missing key is what is refused.
    expect(answer.status).toBe(401);
  });
});

describe("bare LF line endings (documented as safe: docs/operations.md#bare-lf-line-endings)", () => {
  it("answers a request with bare LFs as the same request with CRLFs, and splits a pipelined mix where either would", async () => {
    const connection = await openRaw(server.port);
    connection.write(
      "GET /healthz HTTP/1.1\nHost: 127.0.0.1\n\nGET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /readyz HTTP/1.1\nHost: 127.0.0.1\nConnection: close\n\n",
    );
    await connection.closedByServer();
    const statuses = [...connection.received().matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => match[1]);
    expect(statuses).toEqual(["200", "404", "200"]);
    const operations = readFileSync(join(API_DIR, "../../docs/operations.md"), "utf8");
    expect(operations).toContain("### Bare LF line endings");
  });
});

describe("bodies", () => {
  it("accepts a body-less POST /v1/test-keys without Content-Type", async () => {
    const response = await fetch(url("/v1/test-keys"), { method: "POST" });
    expect(response.status).toBe(201);
    expect(response.headers.get("x-request-id")).toMatch(/^req_/);
  });

  const key = async () =>
    ((await (await fetch(url("/v1/test-keys"), { method: "POST" })).json()) as { api_key: string }).api_key;
  const post = (apiKey: string, body: BodyInit | null, contentType: string | null = "application/json") =>
    fetch(url("/v1/messages"), {
      method: "POST",
      headers: {
        Authorization: `Bearer ${apiKey}`,
        "Idempotency-Key": crypto.randomUUID(),
        ...(contentType ? { "Content-Type": contentType } : {}),
      },
      body,
    });

  it("rejects malformed JSON, an empty body, [] and non-objects with invalid_request", async () => {
    const apiKey = await key();
    const malformed = await expectEnvelope(await post(apiKey, '{"to": '), 400, "invalid_request");
    expect(malformed.message).toMatch(/not valid JSON/);
    await expectEnvelope(await post(apiKey, ""), 400, "invalid_request");
    await expectEnvelope(await post(apiKey, "[]"), 400, "invalid_request");
    await expectEnvelope(await post(apiKey, "42"), 400, "invalid_request");
    await expectEnvelope(await post(apiKey, "null"), 400, "invalid_request");
  });

  it("answers a non-JSON content type with 415", async () => {
    const apiKey = await key();
    await expectEnvelope(
      await post(apiKey, "to=1", "application/x-www-form-urlencoded"),
      415,
      "unsupported_media_type",
    );
    await expectEnvelope(await post(apiKey, "{}", "text/plain"), 415, "unsupported_media_type");
    await expectEnvelope(await post(apiKey, "{}", null), 415, "unsupported_media_type");
  });

  it("answers a 2 MB body with 413, with or without Content-Length", async () => {
    const apiKey = await key();
    const big = JSON.stringify({ to: "+995555123456", padding: "x".repeat(2 * 1024 * 1024) });
    await expectEnvelope(await post(apiKey, big), 413, "payload_too_large");
    const stream = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 32; i++) controller.enqueue(new TextEncoder().encode("x".repeat(65536)));
        controller.close();
      },
    });
    const chunked = await fetch(url("/v1/messages"), {
      method: "POST",
      headers: {
        Authorization: `Bearer ${apiKey}`,
        "Idempotency-Key": "k",
        "Content-Type": "application/json",
      },
      body: stream,
      duplex: "half",
    } as RequestInit);
    await expectEnvelope(chunked, 413, "payload_too_large");
  });

  it("logs a client that closes its connection mid-body as 499, not as a 500", async () => {
    const raw = await openRaw(server.port);
    raw.write(
      'POST /v1/test-keys HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"to":',
    );
    // The headers are read and the body is awaited; then the client goes away (no assertion on time).
    await new Promise((resolve) => setTimeout(resolve, 500));
    raw.destroy();
    const line = await server.waitForOutput(
      (text) =>
        text.includes('"msg":"request"') &&
        text.includes('"route":"/v1/test-keys"') &&
        text.includes('"method":"POST"') &&
        text.includes('"status":499'),
      15_000,
    );
    expect(line).toContain('"level":"info"');
    const requestId = (JSON.parse(line) as { request_id: string }).request_id;
    const lines = server.output.filter((text) => text.includes(requestId));
    expect(lines.some((text) => text.includes('"status":500'))).toBe(false);
    expect(lines.some((text) => text.includes('"level":"error"'))).toBe(false);
  });

  it("answers a body that is not valid UTF-8 with 400 invalid_request, not a field's code", async () => {
    const apiKey = await testKey();
    const encoder = new TextEncoder();
    // {"to":"+99555512345\xff", …}: one byte that is not UTF-8 inside the number.
    const body = new Uint8Array([
      ...encoder.encode('{"to":"+99555512345'),
      0xff,
      ...encoder.encode('","template":"verification_code","variables":{"code":"4821"}}'),
    ]);
    const response = await fetch(url("/v1/messages"), {
      method: "POST",
      headers: {
        Authorization: `Bearer ${apiKey}`,
        "Content-Type": "application/json",
        "Idempotency-Key": "utf8-1",
      },
      body,
    });
    const error = await expectEnvelope(response, 400, "invalid_request");
    expect(error.message).toContain("UTF-8");
    // Authentication still comes first.
    const anonymous = await fetch(url("/v1/messages"), {
      method: "POST",
      headers: { "Content-Type": "application/json", "Idempotency-Key": "utf8-2" },
      body,
    });
    await expectEnvelope(anonymous, 401, "unauthorized");
  });

  it("still answers after bad input (the process did not crash)", async () => {
    const response = await fetch(url("/healthz"));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "alive" });
  });
});
