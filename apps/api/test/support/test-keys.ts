// The test-key response (spec 2.3), as the test-key suites check it.
import { expect } from "vitest";

export type TestKeyBody = {
  api_key: string;
  project_id: string;
  mode: string;
  claim_url: string;
  expires_at: string;
  next_steps: string;
};

/** Exactly the six fields, with the key, project id and claim link in their formats. */
export function expectTestKeyShape(body: TestKeyBody, baseUrl: string): void {
  expect(Object.keys(body).sort()).toEqual([
    "api_key",
    "claim_url",
    "expires_at",
    "mode",
    "next_steps",
    "project_id",
  ]);
  expect(body.api_key).toMatch(/^sk_test_[A-Za-z0-9_-]{43}$/);
  expect(body.project_id).toMatch(/^prj_[0-9a-z]{26}$/);
  expect(body.mode).toBe("test");
  const base = baseUrl.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  expect(body.claim_url).toMatch(new RegExp(`^${base}/claim/[A-Za-z0-9_-]{43}$`));
}
