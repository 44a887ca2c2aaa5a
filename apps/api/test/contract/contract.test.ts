// The contract checker itself (support/contract.ts, run by test/setup.ts
// after every test file): it catches what breaks the document, and it really
// records the harness's answers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../harness.ts";
import {
  contractDocument,
  contractProblems,
  documentValidator,
  type RecordedResponse,
  responseProblems,
} from "../support/contract.ts";

const document = contractDocument();
const validate = documentValidator(document);
const check = (response: Partial<Omit<RecordedResponse, "headers">> & { headers?: Record<string, string> }) =>
  responseProblems(document, validate, {
    method: "GET",
    path: "/healthz",
    status: 200,
    body: '{"status":"alive"}',
    ...response,
    headers: new Headers({
      "Content-Type": "application/json",
      "X-Request-Id": "req_1",
      ...response.headers,
    }),
  });

const errorBody = (code: string) => JSON.stringify({ error: { code, message: "m", request_id: "req_1" } });

describe("the contract checker", () => {
  it("accepts conforming answers, including the gateway's 404 and 405", () => {
    expect(check({})).toEqual([]);
    expect(check({ path: "/nope", status: 404, body: errorBody("route_not_found") })).toEqual([]);
    expect(
      check({
        method: "DELETE",
        path: "/v1/messages",
        status: 405,
        body: errorBody("method_not_allowed"),
        headers: { Allow: "POST" },
      }),
    ).toEqual([]);
    expect(check({ method: "HEAD", body: null })).toEqual([]);
  });

  it("reports an undeclared status, a body its schema refuses, and a code the status does not list", () => {
    expect(check({ status: 418 })).toEqual([expect.stringContaining("status not declared")]);
    expect(check({ body: '{"status":"dead"}' })).toEqual([expect.stringContaining("body")]);
    expect(
      check({ method: "POST", path: "/v1/messages", status: 401, body: errorBody("invalid_recipient") }),
    ).toEqual([expect.stringContaining("must be equal to one of the allowed values")]);
    expect(check({ path: "/v1/messages/msg_1", status: 200, body: '{"id":"msg_1"}' }).length).toBeGreaterThan(
      0,
    );
  });

  it("reports missing required headers, undeclared documented headers and malformed header values", () => {
    expect(
      responseProblems(document, validate, {
        method: "GET",
        path: "/healthz",
        status: 200,
        body: '{"status":"alive"}',
        headers: new Headers({ "Content-Type": "application/json" }),
      }),
    ).toEqual([expect.stringContaining("X-Request-Id is missing")]);
    expect(check({ headers: { "Retry-After": "5" } })).toEqual([
      expect.stringContaining("Retry-After is sent but not declared"),
    ]);
    expect(
      check({
        method: "POST",
        path: "/v1/test-keys",
        status: 429,
        body: errorBody("rate_limited"),
        headers: { "Retry-After": "soon" },
      }),
    ).toEqual([expect.stringContaining("header Retry-After")]);
    expect(
      check({ method: "DELETE", path: "/v1/messages", status: 405, body: errorBody("method_not_allowed") }),
    ).toEqual([expect.stringContaining("Allow is missing")]);
  });

  it("leaves pages that are not part of the API alone, but not other answers on API paths", () => {
    expect(
      check({ path: "/docs", status: 200, body: "<html>", headers: { "Content-Type": "text/html" } }),
    ).toEqual([]);
    expect(
      check({ path: "/healthz", body: "alive", headers: { "Content-Type": "text/plain" } }).length,
    ).toBeGreaterThan(0);
  });
});

describe("recording", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ backend: "pglite" });
  });
  afterAll(() => t?.close());

  it("records the harness's answers", async () => {
    const before = (await contractProblems()).checked;
    await t.request("/healthz");
    await t.request("/v1/messages", { method: "PUT" });
    const after = await contractProblems();
    expect(after.checked).toBe(before + 2);
    expect(after.problems).toEqual([]);
  });
});
