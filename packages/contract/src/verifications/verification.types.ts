// The Verification resource (issue 22, docs/verifications.md) as the API
// returns it, and real examples of it. Never the code.
import { LOCALES } from "@sms/templates";
import { z } from "zod";
import { VERIFICATION_MAX_ATTEMPTS, VERIFICATION_STATUSES, VERIFICATION_TEMPLATES } from "../vocabulary.ts";

const TIMESTAMP = "ISO 8601 UTC, second precision, `Z` suffix.";

export const ZVerification = z
  .strictObject({
    id: z.string().meta({
      description: "Opaque verification identifier: check and read the verification with it.",
      example: "vrf_01m81b5h8058wzg6wcqtsa05cx",
    }),
    object: z.literal("verification"),
    to: z.string().meta({
      description:
        "Masked recipient: `+9955`, six bullets (U+2022), the last two digits. Never the full number.",
      example: "+9955••••••56",
    }),
    status: z.enum(VERIFICATION_STATUSES).meta({
      description:
        "`pending` (the code was sent; checks are accepted) → `approved` (a check gave the right code: let the user in). " +
        "Final otherwise: `expired` (its lifetime passed), `canceled` (a newer verification to the same number replaced it), " +
        "`max_attempts_reached` (five wrong codes), `send_failed` (the SMS was rejected: nothing to check).",
    }),
    template: z.enum(VERIFICATION_TEMPLATES).meta({ description: "The template the code was sent with." }),
    locale: z.enum(LOCALES).meta({ description: "`ka` or `en`." }),
    attempts_remaining: z
      .number()
      .int()
      .min(0)
      .max(VERIFICATION_MAX_ATTEMPTS)
      .meta({ description: "Wrong codes this verification still accepts (5 at the start).", example: 5 }),
    expires_at: z.string().meta({
      format: "date-time",
      description: `When the code stops being accepted (10 minutes after the start by default). ${TIMESTAMP}`,
      example: "2026-11-22T10:10:00Z",
    }),
    message_id: z.string().meta({
      description: "The SMS that carried the code: read it with `GET /v1/messages/{message_id}`.",
      example: "msg_01m81b5h8058wzg6wcqtsa05cx",
    }),
    created_at: z.string().meta({
      format: "date-time",
      description: `When the verification was started. ${TIMESTAMP}`,
      example: "2026-11-22T10:00:00Z",
    }),
    updated_at: z.string().meta({
      format: "date-time",
      description: `When its status or attempts last changed. ${TIMESTAMP}`,
      example: "2026-11-22T10:00:00Z",
    }),
  })
  .meta({
    id: "Verification",
    description:
      "A one-time code the service generated and sent, and its state. All eleven fields are always present; the code never is.",
  });

function example(overrides: Partial<TVerification> = {}): TVerification {
  return {
    id: "vrf_01m81b5h80a4k2x9wq7zt3nd6e",
    object: "verification",
    to: "+9955••••••56",
    status: "pending",
    template: "verification_code",
    locale: "ka",
    attempts_remaining: VERIFICATION_MAX_ATTEMPTS,
    expires_at: "2026-11-22T10:10:00Z",
    message_id: "msg_01m81b5h8058wzg6wcqtsa05cx",
    created_at: "2026-11-22T10:00:00Z",
    updated_at: "2026-11-22T10:00:00Z",
    ...overrides,
  };
}

export const VERIFICATION_EXAMPLES = {
  pending: { summary: "The code was sent", value: example() },
  send_failed: {
    summary: "The SMS was rejected (test: +995500000001)",
    value: example({ status: "send_failed", to: "+9955••••••01" }),
  },
  approved: {
    summary: "The right code: let the user in",
    value: example({ status: "approved", updated_at: "2026-11-22T10:00:41Z" }),
  },
  wrong_code: {
    summary: "A wrong code: still pending, one attempt fewer",
    value: example({ attempts_remaining: 4, updated_at: "2026-11-22T10:00:35Z" }),
  },
  max_attempts_reached: {
    summary: "The fifth wrong code",
    value: example({
      status: "max_attempts_reached",
      attempts_remaining: 0,
      updated_at: "2026-11-22T10:01:30Z",
    }),
  },
  expired: {
    summary: "Not approved within its lifetime",
    value: example({ status: "expired", updated_at: "2026-11-22T10:10:00Z" }),
  },
  canceled: {
    summary: "Replaced by a newer verification to the same number",
    value: example({ status: "canceled", updated_at: "2026-11-22T10:02:00Z" }),
  },
} as const;

export type TVerification = z.output<typeof ZVerification>;
