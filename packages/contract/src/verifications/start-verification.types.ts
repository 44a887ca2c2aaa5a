import { DEFAULT_LOCALE, LOCALES } from "@sms/templates";
import { z } from "zod";
import { NEW_SEND_HEADERS, ZSendMessageHeaders } from "../messages/send-message.types.ts";
import type { Meta } from "../meta.ts";
import { RECIPIENT_PATTERN, VERIFICATION_CODE_LENGTH, VERIFICATION_TEMPLATES } from "../vocabulary.ts";
import { VERIFICATION_EXAMPLES, ZVerification } from "./verification.types.ts";

const TO_RULE =
  "must be a string: +9955 followed by exactly eight digits (e.g. +995555123456), no spaces; numbers are never normalised";
const TEMPLATE_RULE = `must be one of: ${VERIFICATION_TEMPLATES.join(", ")} (default verification_code)`;
const LOCALE_RULE = `must be one of: ${LOCALES.join(", ")} (default ka)`;
const { min, max } = VERIFICATION_CODE_LENGTH;
const LENGTH_RULE = `must be a whole number from ${min} to ${max} (default ${VERIFICATION_CODE_LENGTH.default})`;

export const ZStartVerificationRequest = z
  .strictObject({
    to: z.string({ error: TO_RULE }).regex(RECIPIENT_PATTERN, { error: TO_RULE }).meta({
      description:
        "Exactly `+9955` followed by eight digits: no spaces, no other country; never normalised. Test keys: `+995500000001`…`0004` simulate failures.",
      example: "+995555123456",
    }),
    template: z.enum(VERIFICATION_TEMPLATES, { error: TEMPLATE_RULE }).default("verification_code").meta({
      id: "VerificationTemplate",
      description:
        "The SMS's wording: `verification_code` (default), `login_code`, or `password_reset_code` (its `minutes` is the verification's lifetime).",
    }),
    locale: z
      .enum(LOCALES, { error: LOCALE_RULE })
      .default(DEFAULT_LOCALE)
      .meta({ id: "VerificationLocale", description: "`ka` (Georgian, the default) or `en`." }),
    code_length: z
      .number({ error: LENGTH_RULE })
      .int({ error: LENGTH_RULE })
      .min(min, { error: LENGTH_RULE })
      .max(max, { error: LENGTH_RULE })
      .default(VERIFICATION_CODE_LENGTH.default)
      .meta({
        id: "VerificationCodeLength",
        description: `Digits in the code, ${min} to ${max} (default ${VERIFICATION_CODE_LENGTH.default}). Test keys' code is that many zeros.`,
      }),
  })
  .meta({
    id: "StartVerificationRequest",
    description:
      "Who gets the code and how it reads. No other field is accepted: the service draws the code.",
    example: { to: "+995555123456", template: "login_code", locale: "en", code_length: 6 },
  });

export const ZStartVerificationResponse = ZVerification;

export const startVerificationMeta: Meta = {
  openapi: {
    method: "POST",
    path: "/v1/verifications",
    operationId: "startVerification",
    tags: ["Verifications"],
    summary: "Start a verification",
    description:
      "An extension of the contract. The service draws a one-time code (test keys: zeros), sends it as an SMS through " +
      "the same path as `POST /v1/messages` (the same credits, free tier, limits, simulator numbers and exactly-once " +
      "`Idempotency-Key`), and answers the Verification. Then check what the user typed with " +
      "`POST /v1/verifications/{verification_id}/check`. A new verification to the same number replaces a pending one " +
      "(it becomes `canceled`). Live keys: at most a few starts per number per minute and per UTC day (anti-pumping).",
    protect: true,
    requestHeaders: ZSendMessageHeaders,
  },
  inputErrors: [
    ["to", "invalid_recipient"],
    ["template", "invalid_template"],
  ],
  responses: {
    201: {
      description:
        "The code was sent (`pending`), or its SMS was rejected (`send_failed`: start a new one later). Never contains the code.",
      headers: NEW_SEND_HEADERS,
      examples: { pending: VERIFICATION_EXAMPLES.pending, send_failed: VERIFICATION_EXAMPLES.send_failed },
    },
    200: {
      description:
        "Idempotent replay (`Idempotent-Replayed: true`): the first answer, unchanged. No second SMS, no new code.",
      headers: ["Idempotent-Replayed"],
      examples: {
        replay: { summary: "The first answer, replayed", value: VERIFICATION_EXAMPLES.pending.value },
      },
    },
    400: {
      description: "The request is invalid; nothing was stored.",
      codes: ["invalid_request", "invalid_recipient", "invalid_template", "idempotency_key_required"],
    },
    402: { description: "Live key, too few credits; nothing sent.", codes: ["insufficient_credits"] },
    409: {
      description: "The same key with a different request (or one used for a message).",
      codes: ["idempotency_key_reused"],
    },
    415: { description: "The body is not JSON.", codes: ["unsupported_media_type"] },
    429: {
      description:
        "A limit is reached: the message limits, or (live keys) this number's verifications this minute (`rate_limited`, `Retry-After` ≤ 60) or today (`daily_limit_reached`, until midnight UTC); nothing sent.",
      codes: ["rate_limited", "daily_limit_reached"],
      headers: ["Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"],
    },
    500: {
      description:
        "Unexpected error. With `Retry-After` when the database does not answer, or when the first request with this key never finished: retry then with the same key.",
      codes: ["internal_error"],
      headers: ["Retry-After"],
    },
    503: {
      description:
        "The provider was not reached; nothing sent, nothing kept (test: `+995500000002`). Retry with the same key.",
      codes: ["provider_unavailable"],
      headers: ["Retry-After"],
    },
  },
};
