// Helpers for the verification suites (issue 22): the three routes' requests
// and the shape of a Verification.
import { expect } from "vitest";

export type Call = (path: string, init?: RequestInit) => Promise<Response>;

export type VerificationJson = {
  id: string;
  object: string;
  to: string;
  status: string;
  template: string;
  locale: string;
  attempts_remaining: number;
  expires_at: string;
  message_id: string;
  created_at: string;
  updated_at: string;
};

export type ErrorJson = { error: { code: string; message: string; request_id: string } };

export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

export function verificationClient(call: Call) {
  const start = (
    apiKey: string,
    idempotencyKey: string | null,
    body: unknown,
    headers: Record<string, string> = {},
  ) =>
    call("/v1/verifications", {
      method: "POST",
      headers: {
        Authorization: `Bearer ${apiKey}`,
        "Content-Type": "application/json",
        ...(idempotencyKey === null ? {} : { "Idempotency-Key": idempotencyKey }),
        ...headers,
      },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  const check = (apiKey: string, id: string, body: unknown) =>
    call(`/v1/verifications/${id}/check`, {
      method: "POST",
      headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  const get = (apiKey: string, id: string) =>
    call(`/v1/verifications/${id}`, { headers: { Authorization: `Bearer ${apiKey}` } });
  return { start, check, get };
}

/** All eleven fields, in the documented formats, with the number masked and no code anywhere. */
export function expectVerificationShape(verification: VerificationJson, to: string): void {
  expect(Object.keys(verification)).toEqual([
    "id",
    "object",
    "to",
    "status",
    "template",
    "locale",
    "attempts_remaining",
    "expires_at",
    "message_id",
    "created_at",
    "updated_at",
  ]);
  expect(verification.id).toMatch(/^vrf_[0-9a-z]{26}$/);
  expect(verification.object).toBe("verification");
  expect(verification.to).toBe(`+9955\u2022\u2022\u2022\u2022\u2022\u2022${to.slice(-2)}`);
  expect(verification.message_id).toMatch(/^msg_[0-9a-z]{26}$/);
  for (const field of ["expires_at", "created_at", "updated_at"] as const)
    expect(verification[field]).toMatch(TIMESTAMP);
}

export async function expectError(response: Response, status: number, code: string): Promise<ErrorJson> {
  const body = (await response.json()) as ErrorJson;
  expect({ status: response.status, code: body.error?.code }).toEqual({ status, code });
  expect(body.error.request_id).toBe(response.headers.get("x-request-id"));
  return body;
}

/** The code in an SMS text the fake uBill received (the only place a live code exists outside the service). */
export function codeInText(text: string): string {
  const match = /(\d{4,8})/.exec(text);
  if (!match?.[1]) throw new Error("no code in the SMS text");
  return match[1];
}
