import {
  DEFAULT_LOCALE,
  LOCALES,
  TEMPLATE_IDS,
  TEMPLATES,
  type TemplateId,
  VARIABLE_PATTERNS,
  VARIABLE_RULES,
} from "@sms/templates";
import { z } from "zod";
import { IDEMPOTENCY_KEY_MAX_LENGTH } from "../idempotency-key.ts";
import type { ResponseHeaderName } from "../headers.ts";
import type { Meta } from "../meta.ts";
import { RECIPIENT_PATTERN } from "../vocabulary.ts";
import { MESSAGE_EXAMPLES, ZMessage } from "./message.types.ts";

// One message per field, whatever went wrong with it (missing, wrong type,
// wrong format): the field's stable code comes from `inputErrors` below.
const TO_RULE =
  "must be a string: +9955 followed by exactly eight digits (e.g. +995555123456), no spaces; numbers are never normalised";
const TEMPLATE_RULE = `must be one of: ${TEMPLATE_IDS.join(", ")}`;
const VARIABLES_RULE = 'must be a JSON object of string values, e.g. {"code": "482913"}';
const LOCALE_RULE = `must be one of: ${LOCALES.join(", ")} (default ka)`;

/**
 * `variables` must be a JSON object; its contents are the templates package's
 * to judge. The object is passed on as parsed, never copied: a copy made by
 * assigning its keys (as z.record does) would turn a variable named
 * `__proto__` into the copy's prototype and drop it, so an extra variable
 * would pass unseen.
 */
const ZVariables = z.custom<Record<string, unknown>>(
  (value) => typeof value === "object" && value !== null && !Array.isArray(value),
  { error: VARIABLES_RULE },
);

export const ZSendMessageRequest = z
  .strictObject({
    to: z.string({ error: TO_RULE }).regex(RECIPIENT_PATTERN, { error: TO_RULE }).meta({
      description: "Exactly `+9955` followed by eight digits. Never normalized.",
      example: "+995555123456",
    }),
    template: z
      .enum(TEMPLATE_IDS, { error: TEMPLATE_RULE })
      .meta({ description: "The built-in template to render." }),
    variables: ZVariables.meta({
      description:
        "Exactly the template's variables, all strings: `code` (4–8 digits) and, for password_reset_code, `minutes` (1–999). " +
        "Link- or phone-like values are refused.",
      override: {
        type: "object",
        additionalProperties: { type: "string" },
        example: { code: "482913" },
      },
    }),
    locale: z
      .enum(LOCALES, { error: LOCALE_RULE })
      .optional()
      .meta({ description: "`ka` (default) or `en`." }),
  })
  .meta({ id: "SendMessageRequest" });

export const ZSendMessageResponse = ZMessage;

// The body as the OpenAPI document states it: one schema per template, each
// with exactly its variables and their rules, so that a generated client
// refuses at compile time what the server refuses with 400. The runtime
// schema above stays looser on purpose: its failures map to one stable code
// per field, in the order of docs/messages.md ("Validation order"), and the
// templates package words the variables' problems. A test
// (test/openapi-request.test.ts) holds both to the same verdicts.

const pascal = (id: string) =>
  id.replace(/(^|_)([a-z])/g, (_match, _sep: string, letter: string) => letter.toUpperCase());

const ZRecipientDoc = z.string().regex(RECIPIENT_PATTERN).meta({
  description:
    "Exactly `+9955` followed by eight digits: no spaces, no other country; never normalised. Test keys: `+995500000001`…`0004` simulate failures.",
  example: "+995555123456",
});

// A named schema: generated clients (openapi-typescript) then keep the field
// optional in requests rather than reading `default` as "always present".
const ZLocaleDoc = z
  .enum(LOCALES)
  .default(DEFAULT_LOCALE)
  .meta({ id: "Locale", description: "`ka` (Georgian, the default) or `en`." });

function templateRequest(template: TemplateId) {
  const names = TEMPLATES[template].variables;
  const variables = Object.fromEntries(
    names.map((name) => [
      name,
      z
        .string()
        .regex(VARIABLE_PATTERNS[name])
        .meta({
          description: `A string: ${VARIABLE_RULES[name].requirement}.`,
          example: VARIABLE_RULES[name].example,
        }),
    ]),
  );
  const example = Object.fromEntries(names.map((name) => [name, VARIABLE_RULES[name].example]));
  return z
    .strictObject({
      to: ZRecipientDoc,
      template: z.literal(template),
      variables: z.strictObject(variables).meta({
        description: `Exactly ${names.map((n) => `\`${n}\``).join(" and ")}, as strings (leading zeros survive).`,
      }),
      locale: ZLocaleDoc,
    })
    .meta({
      id: `${pascal(template)}Request`,
      title: template,
      description: `\`${template}\`: “${TEMPLATES[template].text.en}”`,
      example: { to: "+995555123456", template, variables: example, locale: "en" },
    });
}

export const ZSendMessageBody = z
  .discriminatedUnion(
    "template",
    TEMPLATE_IDS.map(templateRequest) as unknown as [
      ReturnType<typeof templateRequest>,
      ...ReturnType<typeof templateRequest>[],
    ],
  )
  .meta({
    id: "SendMessageRequest",
    description:
      "One of the built-in templates with exactly its variables. No other field is accepted (there is no `text` and no `from`).",
    example: {
      to: "+995555123456",
      template: "verification_code",
      variables: { code: "482913" },
      locale: "en",
    },
  });

// Authorization is described by the ApiKey security scheme (OpenAPI ignores a
// header parameter of that name).
/**
 * The headers of a new send's `201`, on both routes that send through the message path (POST /v1/messages and
 * POST /v1/verifications): the project's minute, and on test keys the live per-number allowance (an extension).
 */
export const NEW_SEND_HEADERS: readonly ResponseHeaderName[] = [
  "RateLimit-Limit",
  "RateLimit-Remaining",
  "RateLimit-Reset",
  "Live-Recipient-Limit",
  "Live-Recipient-Remaining",
];

export const ZSendMessageHeaders = z.object({
  "Idempotency-Key": z
    .string()
    .min(1)
    .max(IDEMPOTENCY_KEY_MAX_LENGTH)
    .meta({
      description: `1–${IDEMPOTENCY_KEY_MAX_LENGTH} characters, unique per logical send (a UUID is ideal). Retries of the same message reuse it; kept 24 hours.`,
      example: "5f0c7f4e-2b8a-4d1e-9c3a-7e6b1d2f8a90",
    }),
});

export const sendMessageMeta: Meta = {
  openapi: {
    method: "POST",
    path: "/v1/messages",
    operationId: "sendMessage",
    tags: ["Messages"],
    summary: "Send a message",
    description:
      "Validates, records and submits one templated SMS. Send a new `Idempotency-Key` per message and reuse it to retry " +
      "that message: a retry answers `200` with the original message and never sends twice.\n\n" +
      "Validation order: authentication, `Idempotency-Key`, content type and size, body shape, `to`, `template`, " +
      "`variables`; then idempotency, limits, send. Then poll `GET /v1/messages/{message_id}` for the outcome.",
    protect: true,
    requestHeaders: ZSendMessageHeaders,
  },
  inputErrors: [
    ["to", "invalid_recipient"],
    ["template", "invalid_template"],
    ["variables", "invalid_variables"],
  ],
  documentBody: ZSendMessageBody,
  responses: {
    201: {
      description:
        "A new submission attempt; `status` is `submitted`, `failed` or `unknown`. A provider rejection is still `201`.",
      headers: NEW_SEND_HEADERS,
      examples: {
        submitted: MESSAGE_EXAMPLES.submitted,
        failed: MESSAGE_EXAMPLES.failed,
        unknown: MESSAGE_EXAMPLES.unknown,
      },
    },
    200: {
      description:
        "Idempotent replay (`Idempotent-Replayed: true`): the original response, unchanged, even if the message has moved on since. No second SMS is sent. A duplicate that arrives while the first request is still in flight waits for its answer and replays it.",
      headers: ["Idempotent-Replayed"],
      examples: {
        replay: { summary: "The first answer, replayed", value: MESSAGE_EXAMPLES.submitted.value },
      },
    },
    400: {
      description:
        "The request is invalid; nothing was stored, so the same key can be used with a corrected body.",
      codes: [
        "invalid_request",
        "invalid_recipient",
        "invalid_template",
        "invalid_variables",
        "idempotency_key_required",
      ],
    },
    402: { description: "Live key, too few credits; nothing sent.", codes: ["insufficient_credits"] },
    409: {
      description: "The same key with a different body.",
      codes: ["idempotency_key_reused"],
    },
    415: { description: "The body is not JSON.", codes: ["unsupported_media_type"] },
    429: {
      description:
        "A limit is reached (per project and minute; live keys also per recipient, or the free tier's day); nothing sent.",
      codes: ["rate_limited", "daily_limit_reached"],
    },
    500: {
      description:
        "Unexpected error. With `Retry-After` when the database does not answer, or when the first request with this key never finished: retry then with the same key.",
      codes: ["internal_error"],
      headers: ["Retry-After"],
    },
    503: { description: "The provider was not reached; nothing sent.", codes: ["provider_unavailable"] },
  },
};
