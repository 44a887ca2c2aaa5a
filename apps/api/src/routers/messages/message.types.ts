import { MESSAGE_ERROR_CODES, MESSAGE_STATUSES } from "@sms/domain";
import { z } from "zod";

export const ZMessageError = z
  .strictObject({
    code: z.enum(MESSAGE_ERROR_CODES).meta({ description: "Stable code, safe to branch on." }),
    message: z.string().meta({ description: "Human-readable; wording may change, the code does not." }),
  })
  .meta({ id: "MessageError" });

export const ZMessage = z
  .strictObject({
    id: z
      .string()
      .meta({ description: "Opaque message identifier.", example: "msg_06f2k3v9c8a1b2c3d4e5f6g7h8" }),
    object: z.literal("message"),
    to: z.string().meta({
      description: "Masked recipient: +9955, six bullets, the last two digits.",
      example: "+9955••••••78",
    }),
    status: z.enum(MESSAGE_STATUSES),
    segments: z.number().int().nullable().meta({ description: "SMS segments (the billing unit)." }),
    error: ZMessageError.nullable(),
    created_at: z
      .string()
      .meta({ description: "ISO 8601 UTC, second precision.", example: "2026-11-22T10:00:00Z" }),
    updated_at: z
      .string()
      .meta({ description: "ISO 8601 UTC, second precision.", example: "2026-11-22T10:00:05Z" }),
  })
  .meta({ id: "Message" });
