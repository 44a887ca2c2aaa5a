// The Python client (packages/client-python) against the real Deno server over
// HTTP, on PGlite and on PostgreSQL: tests/e2e_client.py, run with BASE_URL
// and packages/provider-sim's SIMULATOR_NUMBERS, creates a test key, sends to
// every simulator number and an ordinary one and waits for each final state
// (failed, 503 retried with one key then raised keeping nothing, unknown never
// retried, undeliverable, delivered), replays, reads the API's errors as typed
// exceptions, and starts and checks a verification with the test key's zeros.
// This file fails when any Python test fails, errors or is skipped.
import { availableBackends } from "@sms/db/testing";
import { SIMULATOR_NUMBERS } from "@sms/provider-sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerProcess, startServer } from "./harness.ts";
import { definedTests, runUnittest } from "./support/python.ts";

const backends = await availableBackends();
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

describe.each(backends)("the Python client against the service on %s", (backend) => {
  let server: ServerProcess;

  beforeAll(async () => {
    server = await startServer({
      backend,
      // Settle simulated deliveries in about a second, so the shortened polling in the Python test ends soon.
      env: { STATUS_CHECK_INTERVAL_SECONDS: "1", SIMULATOR_DELIVERY_DELAY_MS: "500" },
    });
    cleanups.push(() => server.cleanup());
  }, 120_000);

  it("python3 -m unittest tests/e2e_client.py with BASE_URL: every test passes, none skipped", async () => {
    const run = await runUnittest("e2e_*.py", {
      BASE_URL: server.baseUrl,
      SIMULATOR_NUMBERS: JSON.stringify(SIMULATOR_NUMBERS),
    });
    expect(run.verdict, run.output).toBe("OK");
    expect(run.code, run.output).toBe(0);
    const defined = definedTests("e2e_client.py");
    expect(defined).toBeGreaterThanOrEqual(5);
    expect(run.ran, run.output).toBe(defined);
    // What the server saw: each unreachable send twice (one retry), every send logged, no number in the clear.
    const requests = server.output.flatMap((line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; method?: string; route?: string; status?: number };
        return entry.msg === "request" ? [entry] : [];
      } catch {
        return [];
      }
    });
    const sends = (status: number) =>
      requests.filter((r) => r.method === "POST" && r.route === "/v1/messages" && r.status === status).length;
    expect(sends(503)).toBe(4);
    expect(sends(201)).toBeGreaterThanOrEqual(6);
    expect(sends(409)).toBe(1);
    const numbers = ["+995555123456", ...Object.values(SIMULATOR_NUMBERS)];
    expect(server.output.filter((line) => numbers.some((n) => line.includes(n.slice(1))))).toEqual([]);
  }, 240_000);
});
