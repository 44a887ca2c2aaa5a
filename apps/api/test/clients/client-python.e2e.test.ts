// The Python client (packages/client-python) against the real Deno server over
// HTTP, on PGlite and on PostgreSQL: tests/e2e_client.py, run with BASE_URL
// and packages/provider-sim's SIMULATOR_NUMBERS, creates a test key, sends to
// every simulator number and an ordinary one and waits for each final state
// (failed, 503 retried with one key then raised keeping nothing, unknown never
// retried, undeliverable, delivered), replays, reads the API's errors as typed
// exceptions, and starts and checks a verification with the test key's zeros,
// each check outcome in the REST words. Two fake gateways in front of the
// server (support/fake-proxy.ts: nginx's 502 page before the service saw the
// send, HAProxy's 504 page after it sent it): the send is retried with the
// same Idempotency-Key and its project gets exactly one message.
// This file fails when any Python test fails, errors or is skipped.
import { availableBackends } from "@sms/db/testing";
import { SIMULATOR_NUMBERS } from "@sms/provider-sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerProcess, startServer } from "../harness.ts";
import { type FakeProxy, sendThroughProxy, startFakeProxy } from "../support/fake-proxy.ts";
import { definedTests, runUnittest } from "../support/python.ts";

const backends = await availableBackends();
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

describe.each(backends)("the Python client against the service on %s", (backend) => {
  let server: ServerProcess;
  const proxies = new Map<502 | 504, FakeProxy>();

  beforeAll(async () => {
    server = await startServer({
      backend,
      // Settle simulated deliveries in about a second, so the shortened polling in the Python test ends soon.
      env: { STATUS_CHECK_INTERVAL_SECONDS: "1", SIMULATOR_DELIVERY_DELAY_MS: "500" },
    });
    cleanups.push(() => server.cleanup());
    for (const [status, forward] of [
      [502, false],
      [504, true],
    ] as const) {
      const proxy = await startFakeProxy({ upstream: server.baseUrl, fault: { status, forward } });
      proxies.set(status, proxy);
      cleanups.push(() => proxy.close());
    }
  }, 120_000);

  it("python3 -m unittest tests/e2e_client.py with BASE_URL: every test passes, none skipped", async () => {
    const run = await runUnittest("e2e_*.py", {
      BASE_URL: server.baseUrl,
      SIMULATOR_NUMBERS: JSON.stringify(SIMULATOR_NUMBERS),
      PROXY_502_URL: proxies.get(502)?.url ?? "",
      PROXY_504_URL: proxies.get(504)?.url ?? "",
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
    // Through each gateway: the same key twice, the first answered with the gateway's page, one message.
    for (const [status, proxy] of proxies) {
      const projectId = new RegExp(`# proxy ${status} (prj_\\w+)`).exec(run.output)?.[1];
      expect(projectId, run.output).toBeDefined();
      expect(sendThroughProxy(proxy, server.output, `py-proxy-${status}`)).toEqual({
        keys: [`py-proxy-${status}`, `py-proxy-${status}`],
        answered: [status, status === 504 ? 200 : 201],
        upstream: status === 504 ? [201, 200] : [null, 201],
        projectId,
        messagesCreated: 1,
      });
    }
    // No 409 is retried: the reused key and each check of an ended verification were answered once.
    const checks409 = requests.filter(
      (r) =>
        r.method === "POST" && r.route === "/v1/verifications/{verification_id}/check" && r.status === 409,
    ).length;
    expect(checks409).toBe(3);
    const numbers = ["+995555123456", ...Object.values(SIMULATOR_NUMBERS)];
    expect(server.output.filter((line) => numbers.some((n) => line.includes(n.slice(1))))).toEqual([]);
  }, 240_000);
});
