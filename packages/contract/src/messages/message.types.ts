import { z } from "zod";
import {
  FINAL_STATUSES,
  MESSAGE_ERROR_CODES,
  MESSAGE_ERROR_TEXT,
  MESSAGE_STATUSES,
  type MessageErrorCode,
  type MessageErrorReason,
} from "../vocabulary.ts";

export const ZMessageError = z
  .strictObject({
    code: z.enum(MESSAGE_ERROR_CODES).meta({ description: "Stable code, safe to branch on." }),
    message: z.string().meta({ description: "Human-readable; wording may change, the code does not." }),
  })
  .meta({
    id: "MessageError",
    description:
      "Why a message failed, was undeliverable, or has an unknown outcome. `provider_rejected`, `sender_not_allowed`, " +
      "`invalid_message`: rejected at submission (`failed`); `invalid_recipient`: the carrier could not deliver it " +
      "(`undeliverable`); `provider_unavailable`: no definitive answer (`unknown`: the SMS may or may not have gone out; " +
      "do not retry automatically); `internal_error`: the service failed while handling it.",
  });

const TIMESTAMP = "ISO 8601 UTC, second precision, `Z` suffix.";

export const ZMessage = z
  .strictObject({
    id: z.string().meta({
      description: "Opaque message identifier; read the message with it.",
      example: "msg_01m81b5h8058wzg6wcqtsa05cx",
    }),
    object: z.literal("message"),
    to: z.string().meta({
      description:
        "Masked recipient: `+9955`, six bullets (U+2022), the last two digits. Never the full number.",
      example: "+9955••••••56",
    }),
    status: z.enum(MESSAGE_STATUSES).meta({
      description:
        "`queued` (written, submission not finished) → `submitted` (the provider accepted it; not a delivery claim) → " +
        "`delivered` or `undeliverable` (reliable final outcomes). `failed` (rejected at submission) and `unknown` " +
        `(no definitive result; do not retry automatically) are final too. Final: ${FINAL_STATUSES.map((s) => `\`${s}\``).join(", ")}.`,
    }),
    segments: z
      .number()
      .int()
      .nonnegative()
      // A count: no upper bound worth stating (zod would say 2^53 - 1).
      .meta({ override: ({ jsonSchema }) => void delete jsonSchema.maximum })
      .nullable()
      .meta({
        description:
          "SMS segments the message occupies (the billing unit: one credit each for live keys). `null` only for messages created before segment counting existed.",
        example: 1,
      }),
    error: ZMessageError.nullable().meta({
      description: "`null` unless the message failed, was undeliverable, or has an unknown outcome.",
    }),
    created_at: z.string().meta({
      format: "date-time",
      description: `When the message was created. ${TIMESTAMP}`,
      example: "2026-11-22T10:00:00Z",
    }),
    updated_at: z.string().meta({
      format: "date-time",
      description: `When its status last changed. ${TIMESTAMP}`,
      example: "2026-11-22T10:00:05Z",
    }),
  })
  .meta({
    id: "Message",
    description: "A message and its current state (spec 2.1). All eight fields are always present.",
  });

/** Real message shapes (a test checks each against ZMessage's schema in the document). */
function example(status: TMessage["status"], error: TMessage["error"], updated = "2026-11-22T10:00:00Z") {
  return {
    id: "msg_01m81b5h8058wzg6wcqtsa05cx",
    object: "message",
    to: "+9955••••••56",
    status,
    segments: 1,
    error,
    created_at: "2026-11-22T10:00:00Z",
    updated_at: updated,
  } satisfies TMessage;
}

const errorOf = (code: MessageErrorCode, reason: MessageErrorReason = code) => ({
  code,
  message: MESSAGE_ERROR_TEXT[reason],
});

export const MESSAGE_EXAMPLES = {
  submitted: { summary: "Accepted by the provider", value: example("submitted", null) },
  failed: {
    summary: "Rejected by the provider (test: +995500000001)",
    value: { ...example("failed", errorOf("provider_rejected")), to: "+9955••••••01" },
  },
  unknown: {
    summary: "No definitive answer: do not retry automatically (test: +995500000003)",
    value: { ...example("unknown", errorOf("provider_unavailable")), to: "+9955••••••03" },
  },
  delivered: {
    summary: "Delivered (final)",
    value: example("delivered", null, "2026-11-22T10:00:20Z"),
  },
  undeliverable: {
    summary: "Could not be delivered (final; test: +995500000004)",
    value: {
      ...example("undeliverable", errorOf("invalid_recipient", "undeliverable"), "2026-11-22T10:00:20Z"),
      to: "+9955••••••04",
    },
  },
} as const;

export type TMessage = z.output<typeof ZMessage>;
