import { z } from "zod";
import type { Meta } from "../../trpc/trpc.ts";

export const ZCreateTestKeyRequest = z.void();

/** The response's one line for a caller with no human attached (spec 2.3). */
export const TEST_KEY_NEXT_STEPS =
  "Send test messages now with this key (POST /v1/messages; +995500000001 to +995500000004 simulate failures, any other valid number is delivered), " +
  "and give claim_url to a human, who signs in to claim the project and add free credits before expires_at.";

export const ZCreateTestKeyResponse = z
  .strictObject({
    api_key: z
      .string()
      .startsWith("sk_test_")
      .meta({ description: "The key. Displayed only in this response." }),
    project_id: z.string().meta({ description: "The project the key belongs to." }),
    mode: z.literal("test"),
    claim_url: z.url().meta({
      description:
        "Link for a human to open in a browser, sign in and claim the project. Works once; expires at expires_at.",
    }),
    expires_at: z
      .string()
      .meta({ description: "When claim_url stops working (ISO 8601 UTC, 30 days after issue)." }),
    next_steps: z.string().meta({ description: "What a caller with no human attached does next." }),
  })
  .meta({ id: "TestKey" });

export const createTestKeyMeta: Meta = {
  openapi: {
    method: "POST",
    path: "/v1/test-keys",
    tags: ["test keys"],
    summary: "Get an instant test key",
    description:
      "No authentication and no body. Issues a test key (fake provider: no real SMS, no credits) for a new unclaimed project, " +
      "and a claim link for a human.",
  },
  responses: {
    201: "A new test key.",
    429: "`rate_limited` (too many this minute from this address) or `daily_limit_reached` (daily share used up; the message names the reset time).",
    500: "`internal_error`.",
  },
};
