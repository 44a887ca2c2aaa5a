// The document states the request body of POST /v1/messages more precisely
// than the runtime schema (one schema per template; the runtime maps failures
// to one code per field, docs/messages.md "Validation order"). Here both give
// the same verdict on a table of bodies, and the codes are the runtime's. And
// the error messages the document and the guide show are the real ones.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_GUIDE } from "../../src/contract/wording.ts";
import { createTestKey, sendMessageRequest, startTestApp, type TestApp } from "../harness.ts";
import { documentValidator, type OpenApiDocument } from "../support/contract.ts";

let t: TestApp;
let apiKey: string;
let accepts: (body: unknown) => boolean;

beforeAll(async () => {
  t = await startTestApp({ backend: "pglite" });
  apiKey = (await createTestKey(t.request)).api_key;
  const document = (await (await t.request("/openapi.json")).json()) as OpenApiDocument;
  const validate = documentValidator(document);
  accepts = (body) => validate({ $ref: "#/components/schemas/SendMessageRequest" }, body).length === 0;
});
afterAll(() => t?.close());

const to = "+995555123456";
const verification = { to, template: "verification_code", variables: { code: "482913" } };
const reset = { to, template: "password_reset_code", variables: { code: "482913", minutes: "15" } };

/** [what, body, the runtime's answer: 201 or the 400 code]. */
const TABLE: Array<[string, unknown, "created" | string]> = [
  ["verification code", verification, "created"],
  ["login code in English", { ...verification, template: "login_code", locale: "en" }, "created"],
  ["password reset", reset, "created"],
  ["locale ka", { ...reset, locale: "ka" }, "created"],
  ["8-digit code, 999 minutes", { ...reset, variables: { code: "00000000", minutes: "999" } }, "created"],
  ["4-digit code, 1 minute", { ...reset, variables: { code: "0123", minutes: "1" } }, "created"],
  ["missing minutes", { ...reset, variables: { code: "482913" } }, "invalid_variables"],
  [
    "an extra variable",
    { ...verification, variables: { code: "482913", minutes: "15" } },
    "invalid_variables",
  ],
  [
    "minutes with a leading zero",
    { ...reset, variables: { code: "482913", minutes: "015" } },
    "invalid_variables",
  ],
  ["zero minutes", { ...reset, variables: { code: "482913", minutes: "0" } }, "invalid_variables"],
  ["1000 minutes", { ...reset, variables: { code: "482913", minutes: "1000" } }, "invalid_variables"],
  ["a 3-digit code", { ...verification, variables: { code: "123" } }, "invalid_variables"],
  ["a 9-digit code", { ...verification, variables: { code: "123456789" } }, "invalid_variables"],
  ["a numeric code", { ...verification, variables: { code: 482913 } }, "invalid_variables"],
  ["a code with a space", { ...verification, variables: { code: "4829 13" } }, "invalid_variables"],
  ["variables an array", { ...verification, variables: ["482913"] }, "invalid_variables"],
  ["variables missing", { to, template: "verification_code" }, "invalid_variables"],
  ["no variables for a template that takes some", { ...verification, variables: {} }, "invalid_variables"],
  ["unknown template", { ...verification, template: "marketing" }, "invalid_template"],
  ["template missing", { to, variables: { code: "482913" } }, "invalid_template"],
  ["recipient with spaces", { ...verification, to: "+995 555 123 456" }, "invalid_recipient"],
  ["recipient of another country", { ...verification, to: "+14155550100" }, "invalid_recipient"],
  [
    "recipient missing",
    { template: "verification_code", variables: { code: "482913" } },
    "invalid_recipient",
  ],
  ["a text field", { ...verification, text: "hello" }, "invalid_request"],
  ["a from field", { ...verification, from: "ACME" }, "invalid_request"],
  ["an unknown locale", { ...verification, locale: "ru" }, "invalid_request"],
  ["a null locale", { ...verification, locale: null }, "invalid_request"],
  ["not an object", ["+995555123456"], "invalid_request"],
];

describe("POST /v1/messages: the document and the runtime agree", () => {
  it.each(TABLE)("%s", async (_what, body, expected) => {
    const response = await t.request("/v1/messages", sendMessageRequest(apiKey, randomUUID(), body));
    const answer = (await response.json()) as { error?: { code: string } };
    if (expected === "created") {
      expect(response.status, JSON.stringify(answer)).toBe(201);
      expect(accepts(body), "the document accepts it").toBe(true);
    } else {
      expect(response.status).toBe(400);
      expect(answer.error?.code).toBe(expected);
      expect(accepts(body), "the document refuses it").toBe(false);
    }
  });
});

describe("the error messages the document shows are real", () => {
  const message = async (response: Response) =>
    ((await response.json()) as { error: { message: string } }).error.message;
  const post = (body: unknown, headers: Record<string, string> = {}, key: string | null = randomUUID()) =>
    t.request("/v1/messages", sendMessageRequest(apiKey, key, body, headers));

  it("for every code a caller can cause on its own", async () => {
    const real: Record<string, string> = {
      invalid_request: await message(await post({ ...verification, text: "hello" })),
      invalid_recipient: await message(await post({ ...verification, to: "555" })),
      invalid_template: await message(await post({ ...verification, template: "marketing" })),
      invalid_variables: await message(await post({ ...reset, variables: { code: "482913" } })),
      idempotency_key_required: await message(await post(verification, {}, null)),
      unsupported_media_type: await message(await post(verification, { "Content-Type": "text/plain" })),
      payload_too_large: await message(await post({ ...verification, pad: "x".repeat(20_000) })),
      unauthorized: await message(await t.request("/v1/messages/msg_x")),
      invalid_api_key: await message(
        await t.request("/v1/messages/msg_x", { headers: { Authorization: "Bearer nope" } }),
      ),
      message_not_found: await message(
        await t.request("/v1/messages/msg_x", { headers: { Authorization: `Bearer ${apiKey}` } }),
      ),
      route_not_found: await message(await t.request("/v1/message")),
      method_not_allowed: await message(await t.request("/v1/messages", { method: "DELETE" })),
      provider_unavailable: await message(await post({ ...verification, to: "+995500000002" })),
    };
    const key = randomUUID();
    await post(verification, {}, key);
    real.idempotency_key_reused = await message(
      await post({ ...verification, to: "+995555123457" }, {}, key),
    );
    for (const [code, text] of Object.entries(real))
      expect(text, code).toBe(ERROR_GUIDE[code as keyof typeof ERROR_GUIDE].example);
  });
});
