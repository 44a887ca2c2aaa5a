// The Python client's unit tests (packages/client-python/tests/test_*.py:
// unittest against a scripted http.server stub on loopback: retries with the
// same Idempotency-Key, Retry-After, 503, timeouts, 201 unknown and
// daily_limit_reached not retried, the polling schedule), run under `npm test`
// through this file. It fails when any of them fails, errors or is skipped.
import { describe, expect, it } from "vitest";
import { definedTests, runUnittest } from "../support/python.ts";

describe("the Python client (packages/client-python), unit tests", () => {
  it("python3 -m unittest: every test of tests/test_client.py passes", async () => {
    const run = await runUnittest("test_*.py");
    expect(run.verdict, run.output).toBe("OK");
    expect(run.code, run.output).toBe(0);
    const defined = definedTests("test_client.py");
    expect(defined).toBeGreaterThan(20);
    expect(run.ran, run.output).toBe(defined);
  });
});
