// GET /openapi.json: valid OpenAPI 3.1, version 0.1.0, every public route of
// spec 1.6 with everything a generated client needs: one request schema per
// template, named components for every body, each status with exactly its
// error codes and headers, standard formats only, true examples, and the
// guide pages of /docs.
import { Validator } from "@seriousme/openapi-schema-validator";
import { API_ERROR_CODES, ERROR_STATUS } from "@sms/contract";
import { LOCALES, TEMPLATE_IDS, TEMPLATES } from "@sms/templates";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FRESH_KEY } from "../../src/docs/code-samples.ts";
import { buildOpenApiDocument } from "../../src/docs/openapi.ts";
import { appRouter } from "../../src/router.ts";
import { startTestApp, type TestApp } from "../harness.ts";
import { documentValidator } from "../support/contract.ts";

type Schema = Record<string, unknown> & { $ref?: string };
type Media = { schema: Schema; example?: unknown; examples?: Record<string, { value: unknown }> };
type Response = {
  description: string;
  headers?: Record<string, { $ref: string }>;
  content?: Record<string, Media>;
};
type Operation = {
  operationId: string;
  tags: string[];
  description: string;
  security: unknown[];
  parameters?: Array<{ name: string; in: string; required?: boolean; schema: Schema; example?: unknown }>;
  requestBody?: { required: boolean; content: Record<string, Media> };
  responses: Record<string, Response>;
};
type Document = {
  openapi: string;
  info: { version: string; description: string };
  tags: Array<{ name: string; description: string }>;
  "x-tagGroups": Array<{ name: string; tags: string[] }>;
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, Schema>;
    headers: Record<string, { required?: boolean; schema: Schema; example?: unknown }>;
    responses: Record<string, Response>;
  };
};

let t: TestApp;
let document: Document;

beforeAll(async () => {
  t = await startTestApp({ backend: "pglite" });
  const response = await t.request("/openapi.json", { headers: { "Accept-Encoding": "identity" } });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  document = (await response.json()) as Document;
});
afterAll(() => t?.close());

const operations = () =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, op })),
  );
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const schemaOf = (schema: Schema): Schema =>
  schema.$ref ? (document.components.schemas[schema.$ref.split("/").pop() as string] as Schema) : schema;
const codesOf = (response: Response): string[] => {
  const envelope = schemaOf(response.content?.["application/json"]?.schema as Schema);
  const error = (envelope.properties as Record<string, Schema>).error as Schema;
  return ((error.properties as Record<string, Schema>).code as { enum: string[] }).enum;
};

/** Every schema object in the document, with where it is. */
function walkSchemas(visit: (schema: Schema, where: string) => void) {
  const walk = (node: unknown, where: string) => {
    if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) walk(item, `${where}/${i}`);
    } else if (node && typeof node === "object") {
      const object = node as Schema;
      if ("type" in object || "anyOf" in object || "oneOf" in object || "$ref" in object)
        visit(object, where);
      for (const [key, value] of Object.entries(object))
        if (key !== "example" && key !== "examples") walk(value, `${where}/${key}`);
    }
  };
  walk(document.components, "#/components");
  walk(document.paths, "#/paths");
}

describe("GET /openapi.json", () => {
  it("is a valid OpenAPI 3.1 document with version 0.1.0, exactly what the service builds", async () => {
    const validator = new Validator();
    const result = await validator.validate(document as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
    expect(document.openapi).toBe("3.1.0");
    expect(document.info.version).toBe("0.1.0");
    expect(document).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument(appRouter, t.baseUrl))));
  });

  it("documents exactly the public routes of spec 1.6 and the verifications extension, messages first and health last", () => {
    expect(
      operations()
        .map(({ route }) => route)
        .sort(),
    ).toEqual(
      [
        "GET /healthz",
        "GET /readyz",
        "GET /v1/messages/{message_id}",
        "POST /v1/messages",
        "POST /v1/test-keys",
        // The verifications extension (issue 22).
        "POST /v1/verifications",
        "POST /v1/verifications/{verification_id}/check",
        "GET /v1/verifications/{verification_id}",
      ].sort(),
    );
    expect(
      operations()
        .map(({ op }) => op.operationId)
        .sort(),
    ).toEqual(
      [
        "createTestKey",
        "getMessage",
        "liveness",
        "readiness",
        "sendMessage",
        "startVerification",
        "checkVerification",
        "getVerification",
      ].sort(),
    );
    const reference = document["x-tagGroups"].find((group) => group.name === "Reference");
    expect(reference?.tags).toEqual(["Messages", "Verifications", "Test keys", "Health"]);
  });

  it("describes the request body of POST /v1/messages as one schema per template", () => {
    const op = document.paths["/v1/messages"]?.post as Operation;
    expect(op.security).toEqual([{ ApiKey: [] }]);
    const idempotencyKey = op.parameters?.find((p) => p.name === "Idempotency-Key");
    expect(idempotencyKey).toMatchObject({
      in: "header",
      required: true,
      schema: { minLength: 1, maxLength: 200 },
    });
    // The curl example of the reference sends a real key, not an empty one.
    expect(idempotencyKey?.schema.example).toMatch(/^[0-9a-f-]{36}$/);
    expect(op.parameters?.find((p) => p.name === "Authorization")).toBeUndefined();
    expect(op.requestBody?.required).toBe(true);
    expect(op.requestBody?.content["application/json"]?.schema).toEqual(ref("SendMessageRequest"));

    const union = document.components.schemas.SendMessageRequest as Schema & {
      oneOf: Schema[];
      discriminator: { propertyName: string; mapping: Record<string, string> };
    };
    expect(union.discriminator.propertyName).toBe("template");
    expect(Object.keys(union.discriminator.mapping)).toEqual([...TEMPLATE_IDS]);
    expect(union.oneOf).toHaveLength(TEMPLATE_IDS.length);
    for (const template of TEMPLATE_IDS) {
      const branch = schemaOf({ $ref: union.discriminator.mapping[template] as string }) as Schema & {
        properties: Record<string, Schema & { properties?: Record<string, Schema>; required?: string[] }>;
        required: string[];
      };
      expect(branch.additionalProperties).toBe(false);
      expect(branch.required.sort()).toEqual(["template", "to", "variables"]);
      expect(Object.keys(branch.properties).sort()).toEqual(["locale", "template", "to", "variables"]);
      expect(branch.properties.template).toMatchObject({ const: template });
      expect(branch.properties.to?.pattern).toBe("^\\+9955[0-9]{8}$");
      expect(schemaOf(branch.properties.locale as Schema)).toMatchObject({
        enum: [...LOCALES],
        default: "ka",
      });
      const variables = branch.properties.variables as Schema & {
        properties: Record<string, Schema>;
        required: string[];
      };
      expect(variables.additionalProperties).toBe(false);
      expect(variables.required).toEqual([...TEMPLATES[template].variables]);
      expect(Object.keys(variables.properties)).toEqual([...TEMPLATES[template].variables]);
      expect(variables.properties.code).toMatchObject({ type: "string", pattern: "^[0-9]{4,8}$" });
      if (template === "password_reset_code")
        expect(variables.properties.minutes).toMatchObject({ type: "string", pattern: "^[1-9][0-9]{0,2}$" });
    }
  });

  it("declares every status each route answers with, and the headers of each", () => {
    const expected: Record<string, string[]> = {
      "POST /v1/messages": [
        "200",
        "201",
        "400",
        "401",
        "402",
        "403",
        "404",
        "409",
        "413",
        "415",
        "429",
        "500",
        "503",
      ],
      "GET /v1/messages/{message_id}": ["200", "304", "400", "401", "403", "404", "429", "500"],
      "POST /v1/verifications": [
        "200",
        "201",
        "400",
        "401",
        "402",
        "403",
        "404",
        "409",
        "413",
        "415",
        "429",
        "500",
        "503",
      ],
      "POST /v1/verifications/{verification_id}/check": [
        "200",
        "400",
        "401",
        "403",
        "404",
        "409",
        "413",
        "415",
        "429",
        "500",
      ],
      "GET /v1/verifications/{verification_id}": ["200", "304", "400", "401", "403", "404", "429", "500"],
      "POST /v1/test-keys": ["201", "404", "413", "429", "500"],
      "GET /healthz": ["200", "404", "500"],
      "GET /readyz": ["200", "404", "500", "503"],
    };
    for (const { route, op } of operations()) {
      expect(Object.keys(op.responses).sort(), route).toEqual(expected[route]);
      for (const [status, response] of Object.entries(op.responses)) {
        expect(response.headers, `${route} ${status}`).toHaveProperty("X-Request-Id");
        if (status === "429") {
          for (const header of ["Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"])
            expect(response.headers, `${route} 429`).toHaveProperty(header);
        }
        if (status === "500" || status === "503") {
          if (route !== "GET /readyz" || status === "500")
            expect(response.headers, `${route} ${status}`).toHaveProperty("Retry-After");
        }
      }
    }
    // The conditional reads (an extension): ETag on the 200, a body-less 304, the two request headers.
    for (const path of ["/v1/messages/{message_id}", "/v1/verifications/{verification_id}"]) {
      const read = document.paths[path]?.get as Operation;
      expect(read.responses["200"]?.headers, path).toHaveProperty("ETag");
      expect(read.responses["200"]?.headers, path).toHaveProperty("Preference-Applied");
      expect(read.responses["304"]?.headers, path).toHaveProperty("ETag");
      expect(read.responses["304"]?.headers, path).toHaveProperty("X-Request-Id");
      expect(read.responses["304"], path).not.toHaveProperty("content");
      const headers = (read.parameters ?? []).filter((p) => p.in === "header");
      expect(headers.map((p) => [p.name, p.required ?? false]).sort(), path).toEqual([
        ["If-None-Match", false],
        ["Prefer", false],
      ]);
    }
    const send = document.paths["/v1/messages"]?.post as Operation;
    // 201 and the 200 replay are distinct responses.
    expect(send.responses["201"]?.description).not.toEqual(send.responses["200"]?.description);
    expect(send.responses["200"]?.headers).toHaveProperty("Idempotent-Replayed");
    expect(send.responses["201"]?.headers).not.toHaveProperty("Idempotent-Replayed");
    expect(send.responses["201"]?.headers).toHaveProperty("RateLimit-Remaining");
    expect(document.components.headers["Idempotent-Replayed"]).toMatchObject({
      required: true,
      schema: { enum: ["true"] },
    });
    expect(document.components.headers["X-Request-Id"]?.required).toBe(true);
    // Answers no operation owns: an unknown path, an unserved method.
    expect(document.components.responses.RouteNotFound?.content?.["application/json"]?.schema).toBeDefined();
    expect(document.components.responses.MethodNotAllowed?.headers).toHaveProperty("Allow");
  });

  it("lists, for each error status, only the codes the error table gives that status", () => {
    for (const { route, op } of operations()) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400 || (route === "GET /readyz" && status === "503")) continue;
        const codes = codesOf(response);
        expect(codes.length, `${route} ${status}`).toBeGreaterThan(0);
        for (const code of codes)
          expect(ERROR_STATUS[code as keyof typeof ERROR_STATUS], `${route} ${status} ${code}`).toBe(
            Number(status),
          );
        for (const code of codes) expect(response.description, `${route} ${status}`).toContain(`\`${code}\``);
      }
    }
    const send = document.paths["/v1/messages"]?.post as Operation;
    expect(codesOf(send.responses["401"] as Response).sort()).toEqual(["invalid_api_key", "unauthorized"]);
    expect(codesOf(send.responses["400"] as Response).sort()).toEqual([
      "idempotency_key_required",
      "invalid_recipient",
      "invalid_request",
      "invalid_template",
      "invalid_variables",
    ]);
    expect(codesOf(send.responses["404"] as Response)).toEqual(["route_not_found"]);
    const get = document.paths["/v1/messages/{message_id}"]?.get as Operation;
    expect(codesOf(get.responses["404"] as Response).sort()).toEqual([
      "message_not_found",
      "route_not_found",
    ]);
    const testKeys = document.paths["/v1/test-keys"]?.post as Operation;
    expect(codesOf(testKeys.responses["413"] as Response)).toEqual(["payload_too_large"]);
    expect(codesOf(testKeys.responses["429"] as Response).sort()).toEqual([
      "daily_limit_reached",
      "rate_limited",
    ]);
    // The generic envelope still names every code.
    const all = (
      ((document.components.schemas.Error as Schema).properties as Record<string, Schema>).error as Schema
    ).properties as Record<string, { enum: string[] }>;
    expect(all.code?.enum.sort()).toEqual([...API_ERROR_CODES].sort());
  });

  it("names a component schema for every body", () => {
    for (const { route, op } of operations()) {
      const contents = [
        ...Object.values(op.responses).map((r) => r.content?.["application/json"]),
        op.requestBody?.content["application/json"],
      ].filter(Boolean) as Media[];
      for (const media of contents) expect(media.schema.$ref, route).toMatch(/^#\/components\/schemas\/\w+$/);
    }
    for (const name of [
      "Message",
      "MessageError",
      "TestKey",
      "Liveness",
      "Readiness",
      "Error",
      "SendMessageRequest",
    ])
      expect(document.components.schemas).toHaveProperty(name);
  });

  it("types a check's 200 with the three statuses it can answer, a read's with all six (issue 53, item 2b)", () => {
    const statusOf = (path: string, method: string, status: string) => {
      const media = document.paths[path]?.[method]?.responses[status]?.content?.["application/json"] as Media;
      const schema = schemaOf(media.schema);
      return { ref: media.schema.$ref, status: (schema.properties as Record<string, Schema>).status };
    };
    const checked = statusOf("/v1/verifications/{verification_id}/check", "post", "200");
    expect(checked.ref).toBe("#/components/schemas/CheckedVerification");
    expect(checked.status?.enum).toEqual(["approved", "pending", "max_attempts_reached"]);
    // The other fields are a Verification's, in its order.
    const fields = (name: string) => Object.keys(document.components.schemas[name]?.properties as object);
    expect(fields("CheckedVerification")).toEqual(fields("Verification"));
    for (const [path, method, status] of [
      ["/v1/verifications/{verification_id}", "get", "200"],
      ["/v1/verifications", "post", "201"],
    ] as const) {
      expect(statusOf(path, method, status).status?.enum).toEqual([
        "pending",
        "approved",
        "expired",
        "canceled",
        "max_attempts_reached",
        "send_failed",
      ]);
    }
  });

  it("uses standard formats only, date-time timestamps, and a non-negative or null segment count", () => {
    const formats = new Set<string>();
    walkSchemas((schema) => {
      if (typeof schema.format === "string") formats.add(schema.format);
    });
    for (const format of formats)
      expect(["date-time", "uri", "email", "uuid", "int32", "int64"]).toContain(format);
    const message = document.components.schemas.Message as { properties: Record<string, Schema> };
    expect(message.properties.created_at).toMatchObject({ type: "string", format: "date-time" });
    expect(message.properties.updated_at).toMatchObject({ type: "string", format: "date-time" });
    expect(message.properties.segments).toMatchObject({
      anyOf: [{ type: "integer", minimum: 0 }, { type: "null" }],
    });
    const testKey = document.components.schemas.TestKey as { properties: Record<string, Schema> };
    expect(testKey.properties.expires_at).toMatchObject({ format: "date-time" });
    expect(testKey.properties.api_key?.pattern).toBe("^sk_test_[A-Za-z0-9_-]{43}$");
    expect(testKey.properties.claim_url?.format).toBe("uri");
  });

  it("has only true examples: each one validates against its schema", () => {
    const validate = documentValidator(document as never);
    let checked = 0;
    const problems: string[] = [];
    const check = (schema: Schema, value: unknown, where: string) => {
      checked++;
      for (const problem of validate(schema, value)) problems.push(`${where}: ${problem}`);
    };
    walkSchemas((schema, where) => {
      if ("example" in schema) check(schema, schema.example, where);
      for (const [i, example] of ((schema.examples as unknown[]) ?? []).entries())
        check(schema, example, `${where}[${i}]`);
    });
    for (const { route, op } of operations()) {
      for (const [status, response] of Object.entries(op.responses)) {
        const media = response.content?.["application/json"];
        if (!media) continue;
        expect(
          media.examples ?? schemaOf(media.schema).example,
          `${route} ${status} has examples`,
        ).toBeDefined();
        for (const [name, example] of Object.entries(media.examples ?? {}))
          check(media.schema, example.value, `${route} ${status} ${name}`);
      }
      for (const parameter of op.parameters ?? [])
        if (parameter.schema.example !== undefined)
          check(parameter.schema, parameter.schema.example, `${route} ${parameter.name}`);
    }
    for (const [name, header] of Object.entries(document.components.headers))
      if (header.example !== undefined) check(header.schema, header.example, `header ${name}`);
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(40);
    // The examples people see first are the real shapes, never placeholders.
    const text = JSON.stringify(document);
    expect(/"(example|value)":"string"/.test(text), "a placeholder example").toBe(false);
    expect(text.includes("9007199254740991"), "a 2^53 bound").toBe(false);
    const send = document.paths["/v1/messages"]?.post as Operation;
    const created = send.responses["201"]?.content?.["application/json"]?.examples ?? {};
    for (const example of Object.values(created)) {
      const message = example.value as { status: string; error: unknown };
      expect(["submitted", "failed", "unknown"]).toContain(message.status);
      expect(message.error === null).toBe(message.status === "submitted");
    }
  });

  it("carries the simulator numbers, the polling recommendation and the guide pages", () => {
    const text = JSON.stringify(document);
    for (const number of ["+995500000001", "+995500000002", "+995500000003", "+995500000004"])
      expect(text).toContain(number);
    const get = document.paths["/v1/messages/{message_id}"]?.get as Operation;
    expect(get.description).toMatch(/2 s.*doubl.*30 s/);
    const guide = document["x-tagGroups"].find((group) => group.name === "Guide");
    expect(guide?.tags).toEqual([
      "Getting started",
      "Test mode and the simulator",
      "Idempotency and retries",
      "Errors",
      "Polling and the status lifecycle",
      "Limits",
      "Verify a phone number",
      "Client libraries",
    ]);
    const page = (name: string) => document.tags.find((tag) => tag.name === name)?.description ?? "";
    for (const code of API_ERROR_CODES) expect(page("Errors")).toContain(`\`${code}\``);
    expect(page("Getting started")).toContain("/v1/test-keys");
    // A new key per message, made with tools Linux and macOS both have (no /proc on macOS).
    expect(page("Getting started")).toContain(`Idempotency-Key: ${FRESH_KEY.shell}`);
    expect(page("Getting started")).not.toMatch(/\/proc\//);
    // The per-number limits test keys never meet, named where an integrator starts (issue 53, item 3).
    expect(page("Getting started")).toMatch(/2 messages a minute and 10 a UTC day to one\s+number/);
    expect(page("Limits")).toMatch(/Messages to one number \(live keys[^|]*\| 2 per minute and 10 per UTC day/);
    expect(page("Test mode and the simulator")).toContain("+995500000004");
    expect(page("Polling and the status lifecycle")).toMatch(/2 seconds.*30 seconds/s);
    // The verifications guide: the user is in only on 200 + approved; a timeout is not approved.
    expect(page("Verify a phone number")).toContain(
      'Let the user in only on `200` with `"status": "approved"`',
    );
    expect(page("Verify a phone number")).toMatch(/timeout.*\*\*Not approved\.\*\*/);
    expect(page("Verify a phone number")).toContain("`000000` by default");
    // The clients, and how to install each (issue 54, item 1).
    expect(page("Client libraries")).toContain("npm install ./sms-api-client-0.1.0.tgz");
    expect(page("Client libraries")).toContain("pip install ./packages/client-python");
    expect(page("Client libraries")).toContain("require 'packages/client-php/autoload.php';");
    expect(page("Client libraries")).toContain("SmsApi\\Client(baseUrl");
  });
});
