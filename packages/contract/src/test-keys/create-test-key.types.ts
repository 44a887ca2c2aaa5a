import { z } from "zod";
import type { Meta } from "../meta.ts";

export const ZCreateTestKeyRequest = z.void();

/** The response's one line for a caller with no human attached (spec 2.3). */
export const TEST_KEY_NEXT_STEPS =
  "Send test messages now with this key (POST /v1/messages; +995500000001 to +995500000004 simulate failures, any other valid number is delivered), " +
  "and give claim_url to a human, who signs in to claim the project and add free credits before expires_at.";

/** A real response's shape (the key and token are random; these are made up). */
export const TEST_KEY_EXAMPLE = {
  api_key: "sk_test_EXAMPLEkeyEXAMPLEkeyEXAMPLEkeyEXAMPLEkey123",
  project_id: "prj_01m81b5h80n1d0vxttw5qkxvx5",
  mode: "test",
  claim_url: "https://sms.example.ge/claim/HiuEQ4teHBceUms-jFvdrfEPpm2th2z1GHA3HxZkh2M",
  expires_at: "2026-12-22T10:00:00Z",
  next_steps: TEST_KEY_NEXT_STEPS,
} as const;

export const ZCreateTestKeyResponse = z
  .strictObject({
    api_key: z
      .string()
      .regex(/^sk_test_[A-Za-z0-9_-]{43}$/)
      .meta({
        description:
          "The key: `sk_test_` and 43 base64url characters. Displayed only in this response; treat it as a password.",
        example: TEST_KEY_EXAMPLE.api_key,
      }),
    project_id: z
      .string()
      .meta({ description: "The project the key belongs to.", example: TEST_KEY_EXAMPLE.project_id }),
    mode: z.literal("test"),
    claim_url: z.url().meta({
      description:
        "Link for a human to open in a browser, sign in and claim the project (free credits, live keys). Works once; expires at `expires_at`.",
      example: TEST_KEY_EXAMPLE.claim_url,
    }),
    expires_at: z.string().meta({
      format: "date-time",
      description:
        "When `claim_url` stops working (ISO 8601 UTC, 30 days after issue). The key is unaffected.",
      example: TEST_KEY_EXAMPLE.expires_at,
    }),
    next_steps: z.string().meta({ description: "What a caller with no human attached does next." }),
  })
  .meta({ id: "TestKey", description: "A new test key (spec 2.3). All six fields are always present." });

export const createTestKeyMeta: Meta = {
  openapi: {
    method: "POST",
    path: "/v1/test-keys",
    operationId: "createTestKey",
    tags: ["Test keys"],
    summary: "Get an instant test key",
    description:
      "No authentication and no body. Issues a test key (the simulator: no real SMS, no credits) for a new unclaimed " +
      "project, and a claim link for a human. Limited per caller address (a few per minute, a few dozen per day).",
  },
  responses: {
    201: {
      description: "A new test key.",
      headers: ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"],
      examples: { key: { summary: "A new test key", value: TEST_KEY_EXAMPLE } },
    },
    429: {
      description:
        "`rate_limited`: too many this minute from this address; `daily_limit_reached`: today's share is used up (the message names the reset time). Existing keys keep working.",
      codes: ["rate_limited", "daily_limit_reached"],
    },
  },
};
