// The PHP client (packages/client-php) under Debian's php-cli: its unit tests
// (tests/unit.php, against a scripted `php -S` stub on loopback), then its
// end-to-end script (tests/e2e.php) against the real Deno server on each
// backend: a test key, every simulator number and an ordinary one polled to
// their final statuses, replays and refusals, a verification started and
// checked, each check outcome in the REST words, and a send through two fake
// gateways (support/fake-proxy.ts: nginx's 502 page before the service saw it,
// HAProxy's 504 page after it sent it) retried with the same Idempotency-Key,
// one message each. The script's exit code decides; what it saw is then checked
// against the service over HTTP and, on PostgreSQL, against the rows. Where
// php is missing the suite is skipped with a warning, and fails under CI.
import { join } from "node:path";
import { createDatabase } from "@sms/db";
import { availableBackends, withPrisma } from "@sms/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_DIR, type ServerProcess, startServer } from "../harness.ts";
import { debianToolAvailable } from "../support/debian-tool.ts";
import { type FakeProxy, sendThroughProxy, startFakeProxy } from "../support/fake-proxy.ts";
import { type CommandRun, childEnv, runCommand } from "../support/run.ts";

const PHP = "/usr/bin/php";
const CLIENT_DIR = join(API_DIR, "..", "..", "packages", "client-php");
const hasPhp = debianToolAvailable(PHP, "the PHP client's tests", "php-cli");
const backends = await availableBackends();

/** Runs one of the client's test scripts to its end (at most 3 minutes), whatever its exit code. */
function runPhp(script: string, env: Record<string, string> = {}, args: string[] = []): Promise<CommandRun> {
  return runCommand(PHP, [script, ...args], { cwd: CLIENT_DIR, env: childEnv(env), timeoutMs: 180_000 });
}

/** The runner's summary line: how many passed and failed (nothing parsed: the run is a failure). */
function summary(run: CommandRun): { passed: number; failed: number } {
  const match = /^# (\d+) passed, (\d+) failed$/m.exec(run.stdout);
  return match ? { passed: Number(match[1]), failed: Number(match[2]) } : { passed: 0, failed: -1 };
}

type E2eResult = {
  apiKey: string;
  projectId: string;
  messages: Record<
    "ordinary" | "rejected" | "indeterminate" | "undeliverable",
    { id: string; status: string }
  >;
  keys: Record<string, string>;
  verification: { id: string; messageId: string; key: string };
  proxies: Record<"502" | "504", string>;
  /** The SMS of the two verifications the outcome test started. */
  outcomeMessages: string[];
};

describe.runIf(hasPhp)("the PHP client (packages/client-php)", () => {
  it("passes its unit tests against the scripted stub server (tests/unit.php)", async () => {
    const run = await runPhp("tests/unit.php");
    const output = `${run.stdout}\n${run.stderr}`;
    expect(summary(run), output).toEqual({ passed: 28, failed: 0 });
    expect(run.code, output).toBe(0);
  });

  it("the runner fails a run in which no test ran (exit 1)", async () => {
    // The filter matches nothing: no test ran, which the runner counts as a failure.
    const none = await runPhp("tests/unit.php", {}, ["no test has this name"]);
    expect(summary(none)).toEqual({ passed: 0, failed: 0 });
    expect(none.code).toBe(1);
  });

  describe.each(backends)("against the real service on %s", (backend) => {
    let server: ServerProcess;
    const proxies = new Map<502 | 504, FakeProxy>();

    beforeAll(async () => {
      server = await startServer({
        backend,
        env: { STATUS_CHECK_INTERVAL_SECONDS: "1", SIMULATOR_DELIVERY_DELAY_MS: "0" },
      });
      for (const [status, forward] of [
        [502, false],
        [504, true],
      ] as const)
        proxies.set(status, await startFakeProxy({ upstream: server.baseUrl, fault: { status, forward } }));
    }, 120_000);
    afterAll(async () => {
      for (const proxy of proxies.values()) await proxy.close();
      await server?.cleanup();
    });

    it("tests/e2e.php passes, and the service holds what it saw", async () => {
      const run = await runPhp("tests/e2e.php", {
        BASE_URL: server.baseUrl,
        PROXY_502_URL: proxies.get(502)?.url ?? "",
        PROXY_504_URL: proxies.get(504)?.url ?? "",
      });
      const output = `${run.stdout}\n${run.stderr}`;
      expect(summary(run), output).toEqual({ passed: 10, failed: 0 });
      expect(run.code, output).toBe(0);
      const line = /^# result (.+)$/m.exec(run.stdout)?.[1];
      expect(line, output).toBeDefined();
      const result = JSON.parse(line as string) as E2eResult;

      // Every message the script waited for is in that final state for the service too.
      const statuses: Record<string, string> = {};
      for (const [name, { id }] of Object.entries(result.messages)) {
        const response = await fetch(`${server.baseUrl}/v1/messages/${id}`, {
          headers: { Authorization: `Bearer ${result.apiKey}` },
        });
        expect(response.status).toBe(200);
        statuses[name] = ((await response.json()) as { status: string }).status;
      }
      expect(statuses).toEqual({
        ordinary: "delivered",
        rejected: "failed",
        indeterminate: "unknown",
        undeliverable: "undeliverable",
      });
      const verification = await fetch(`${server.baseUrl}/v1/verifications/${result.verification.id}`, {
        headers: { Authorization: `Bearer ${result.apiKey}` },
      });
      expect(((await verification.json()) as { status: string }).status).toBe("approved");

      // Through each gateway: the same key twice, the first answered with the gateway's page, one message.
      for (const [status, proxy] of proxies)
        expect(sendThroughProxy(proxy, server.output, `php-proxy-${status}`)).toEqual({
          keys: [`php-proxy-${status}`, `php-proxy-${status}`],
          answered: [status, status === 504 ? 200 : 201],
          upstream: status === 504 ? [201, 200] : [null, 201],
          projectId: result.proxies[`${status}`],
          messagesCreated: 1,
        });
      // No 409 is retried: the reused key once, and each check of an ended verification once.
      const answered409 = (route: string) =>
        server.output.filter(
          (line) =>
            line.includes(`"project_id":"${result.projectId}"`) &&
            line.includes(`"route":"${route}"`) &&
            line.includes('"status":409,'),
        ).length;
      expect(answered409("/v1/messages")).toBe(1);
      expect(answered409("/v1/verifications/{verification_id}/check")).toBe(3);

      if (backend !== "postgres") return;
      // The rows: one message per logical send (the replay and the 409 made none, the 503's three
      // attempts kept nothing), each Idempotency-Key the client used held once, against its message.
      const db = withPrisma(await createDatabase({ databaseUrl: server.databaseUrl as string, poolSize: 1 }));
      try {
        const messages = await db.prisma.message.findMany({
          where: { projectId: result.projectId },
          select: { id: true, status: true },
        });
        expect(new Map(messages.map((m) => [m.id, m.status]))).toEqual(
          new Map([
            [result.messages.ordinary.id, "delivered"],
            [result.messages.rejected.id, "failed"],
            [result.messages.indeterminate.id, "unknown"],
            [result.messages.undeliverable.id, "undeliverable"],
            [result.verification.messageId, expect.any(String)],
            ...result.outcomeMessages.map((id) => [id, expect.any(String)] as const),
          ]),
        );
        const records = await db.prisma.idempotencyRecord.findMany({
          where: { projectId: result.projectId },
          select: { key: true, messageId: true },
        });
        const byKey = new Map(records.map((r) => [r.key, r.messageId]));
        expect(records).toHaveLength(byKey.size);
        for (const name of ["ordinary", "rejected", "indeterminate", "undeliverable"] as const)
          expect(byKey.get(result.keys[name] as string)).toBe(result.messages[name].id);
        expect(byKey.has(result.keys.unreachable as string)).toBe(false);
        // Each gateway's project holds exactly one message, under the key the client sent twice.
        for (const status of ["502", "504"] as const) {
          const projectId = result.proxies[status];
          expect(await db.prisma.message.count({ where: { projectId } })).toBe(1);
          expect(
            (await db.prisma.idempotencyRecord.findMany({ where: { projectId }, select: { key: true } })).map(
              (r) => r.key,
            ),
          ).toEqual([`php-proxy-${status}`]);
        }
      } finally {
        await db.close();
      }
    }, 180_000);
  });
});
