// Issue 2, point 8: GET /openapi.json is valid OpenAPI 3.1, version 0.1.0, and
// documents every public route of spec 1.6 with its real schemas, headers and
// statuses.
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./harness.ts";

type Operation = {
  security: unknown[];
  parameters?: Array<{ name: string; in: string; required?: boolean; schema: Record<string, unknown> }>;
  requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<
    string,
    { headers?: Record<string, unknown>; content?: Record<string, { schema: Record<string, unknown> }> }
  >;
};
type Document = {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Record<string, unknown>>; headers: Record<string, unknown> };
};

let t: TestApp;
let document: Document;

beforeAll(async () => {
  t = await startTestApp({ backend: "pglite" });
  const response = await t.request("/openapi.json");
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  document = (await response.json()) as Document;
});
afterAll(() => t?.close());

const errorRef = { $ref: "#/components/schemas/Error" };

describe("GET /openapi.json", () => {
  it("is a valid OpenAPI 3.1 document with version 0.1.0", async () => {
    const validator = new Validator();
    const result = await validator.validate(document as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
    expect(document.openapi).toBe("3.1.0");
    expect(document.info.version).toBe("0.1.0");
  });

  it("documents exactly the public routes of spec 1.6", () => {
    const routes = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(routes.sort()).toEqual(
      [
        "GET /healthz",
        "GET /readyz",
        "GET /v1/messages/{message_id}",
        "POST /v1/messages",
        "POST /v1/test-keys",
      ].sort(),
    );
  });

  it("describes POST /v1/messages fully", () => {
    const op = document.paths["/v1/messages"]?.post as Operation;
    expect(op.security).toEqual([{ ApiKey: [] }]);
    const params = Object.fromEntries((op.parameters ?? []).map((p) => [p.name, p]));
    expect(params["Idempotency-Key"]).toMatchObject({
      in: "header",
      required: true,
      schema: { minLength: 1, maxLength: 200 },
    });
    expect(params.Authorization).toBeUndefined();
    const scheme = (document.components as unknown as { securitySchemes: Record<string, unknown> })
      .securitySchemes.ApiKey;
    expect(scheme).toMatchObject({ type: "http", scheme: "bearer" });
    const body = op.requestBody?.content["application/json"]?.schema as Record<string, unknown>;
    expect(body.additionalProperties).toBe(false);
    expect(body.required).toEqual(["to", "template", "variables"]);
    expect(Object.keys(body.properties as object).sort()).toEqual(["locale", "template", "to", "variables"]);
    expect((body.properties as Record<string, { pattern?: string; enum?: string[] }>).to?.pattern).toBe(
      "^\\+9955[0-9]{8}$",
    );
    expect((body.properties as Record<string, { enum?: string[] }>).template?.enum).toEqual([
      "verification_code",
      "login_code",
      "password_reset_code",
    ]);
    expect(Object.keys(op.responses).sort()).toEqual(
      ["200", "201", "400", "401", "402", "403", "409", "413", "415", "429", "500", "503"].sort(),
    );
    for (const status of ["200", "201"]) {
      expect(op.responses[status]?.content?.["application/json"]?.schema).toEqual({
        $ref: "#/components/schemas/Message",
      });
    }
    expect(op.responses["200"]?.headers).toHaveProperty("Idempotent-Replayed");
    expect(op.responses["429"]?.headers).toHaveProperty("Retry-After");
    for (const [status, response] of Object.entries(op.responses)) {
      expect(response.headers).toHaveProperty("X-Request-Id");
      if (Number(status) >= 400) expect(response.content?.["application/json"]?.schema).toEqual(errorRef);
    }
  });

  it("describes the other routes with their statuses and security", () => {
    const testKeys = document.paths["/v1/test-keys"]?.post as Operation;
    expect(testKeys.security).toEqual([]);
    expect(testKeys.requestBody).toBeUndefined();
    expect(Object.keys(testKeys.responses).sort()).toEqual(["201", "429", "500"]);
    expect(testKeys.responses["201"]?.content?.["application/json"]?.schema).toEqual({
      $ref: "#/components/schemas/TestKey",
    });

    const get = document.paths["/v1/messages/{message_id}"]?.get as Operation;
    expect(get.security).toEqual([{ ApiKey: [] }]);
    expect(get.parameters?.find((p) => p.name === "message_id")).toMatchObject({
      in: "path",
      required: true,
    });
    expect(Object.keys(get.responses).sort()).toEqual(["200", "401", "403", "404", "500"]);
    expect(get.responses["404"]?.content?.["application/json"]?.schema).toEqual(errorRef);

    const ready = document.paths["/readyz"]?.get as Operation;
    expect(ready.security).toEqual([]);
    expect(Object.keys(ready.responses).sort()).toEqual(["200", "503"]);
    expect(ready.responses["503"]?.content?.["application/json"]?.schema).toEqual({
      $ref: "#/components/schemas/Readiness",
    });
    expect((document.paths["/healthz"]!.get as Operation).security).toEqual([]);
  });

  it("defines the Message, TestKey and Error schemas as the spec says", () => {
    const { Message, TestKey, Error: Envelope } = document.components.schemas;
    expect(Object.keys(Message!.properties as object).sort()).toEqual(
      ["created_at", "error", "id", "object", "segments", "status", "to", "updated_at"].sort(),
    );
    expect((Message!.required as string[]).sort()).toEqual(
      ["created_at", "error", "id", "object", "segments", "status", "to", "updated_at"].sort(),
    );
    expect((TestKey!.required as string[]).sort()).toEqual(
      ["api_key", "claim_url", "expires_at", "mode", "next_steps", "project_id"].sort(),
    );
    expect(JSON.stringify(Envelope)).toContain("request_id");
    const codes = ((
      Envelope!.properties as Record<string, { properties: Record<string, { enum: string[] }> }>
    ).error?.properties.code?.enum ?? []) as string[];
    for (const code of [
      "invalid_request",
      "invalid_recipient",
      "invalid_template",
      "invalid_variables",
      "idempotency_key_required",
      "unauthorized",
      "invalid_api_key",
      "insufficient_credits",
      "project_suspended",
      "message_not_found",
      "idempotency_key_reused",
      "rate_limited",
      "daily_limit_reached",
      "provider_unavailable",
      "internal_error",
    ]) {
      expect(codes).toContain(code);
    }
  });
});
