import { IDEMPOTENCY_KEY_MAX_LENGTH, RECIPIENT_PATTERN } from "@sms/domain";
import { LOCALES, TEMPLATE_IDS } from "@sms/templates";
import { z } from "zod";
import type { Meta } from "../../trpc/trpc.ts";
import { ZMessage } from "./message.types.ts";

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

// Authorization is described by the ApiKey security scheme (OpenAPI ignores a
// header parameter of that name).
export const ZSendMessageHeaders = z.object({
  "Idempotency-Key": z
    .string()
    .min(1)
    .max(IDEMPOTENCY_KEY_MAX_LENGTH)
    .meta({
      description: `1–${IDEMPOTENCY_KEY_MAX_LENGTH} characters, unique per logical send. Retries reuse it.`,
    }),
});

export const sendMessageMeta: Meta = {
  openapi: {
    method: "POST",
    path: "/v1/messages",
    tags: ["messages"],
    summary: "Send a message",
    description:
      "Validates, records and submits one templated SMS. Validation order: authentication, Idempotency-Key, " +
      "content type and size, body shape, `to`, `template`, `variables`; then idempotency, limits, send.",
    protect: true,
    requestHeaders: ZSendMessageHeaders,
  },
  inputErrors: [
    ["to", "invalid_recipient"],
    ["template", "invalid_template"],
    ["variables", "invalid_variables"],
  ],
  responses: {
    201: "A new submission attempt; `status` is `submitted`, `failed` or `unknown`. A provider rejection is still 201.",
    200: "Idempotent replay: the original message, unchanged. No second SMS is sent. A duplicate that arrives while the first request is still in flight waits for its answer and replays it.",
    400: "`invalid_request`, `invalid_recipient`, `invalid_template`, `invalid_variables` or `idempotency_key_required`.",
    401: "`unauthorized` or `invalid_api_key`.",
    402: "`insufficient_credits`: live key, too few credits; nothing sent.",
    403: "`project_suspended`.",
    409: "`idempotency_key_reused`: the same key with a different body.",
    413: "`payload_too_large`.",
    415: "`unsupported_media_type`.",
    429: "`rate_limited` (per project and minute; live keys also per recipient) or `daily_limit_reached`; nothing sent.",
    500: "`internal_error`. With `Retry-After` when the database does not answer, or when the first request with this key never finished: retry then with the same key.",
    503: "`provider_unavailable`: provider not reached, nothing sent; safe to retry with the same key.",
  },
};
