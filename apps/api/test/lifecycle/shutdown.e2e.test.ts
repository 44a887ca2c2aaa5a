// Issue 12 §2, shutdown with a deadline, against the real Deno process: on
// SIGTERM the jobs stop at once (no round starts afterwards), in-flight
// requests get until SHUTDOWN_TIMEOUT_SECONDS, and whatever is still open then
// (a send stuck at a provider that never answers, a body that never ends) is
// closed and the process exits 1, saying so. An instance with nothing in
// flight exits 0 at once even with idle keep-alive connections open.
import { createDatabase } from "@sms/db";
import { availableBackends, withPrisma } from "@sms/db/testing";
import { startFakeUbill } from "@sms/provider-ubill/testing";
import { afterAll, describe, expect, it } from "vitest";
import { type ServerProcess, startServer } from "../harness.ts";
import { body, insertLiveKey } from "../support/messages.ts";
import { openRaw, type RawConnection } from "../support/raw-http.ts";

const servers: ServerProcess[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.cleanup()));
});

/** The job names of every "job round" line in `lines`. */
function roundsIn(lines: string[]): string[] {
  return lines
    .filter((line) => line.includes('"msg":"job round"'))
    .map((line) => (JSON.parse(line) as { job: string }).job);
}

describe.skipIf(!(await availableBackends()).includes("postgres"))("shutdown deadline", () => {
  it("closes a stuck send and an endless body at the deadline, exits 1 and starts no job round after SIGTERM", async () => {
    const fake = await startFakeUbill();
    const server = await startServer({
      backend: "postgres",
      env: {
        UBILL_BASE_URL: fake.baseUrl,
        UBILL_API_KEY: fake.apiKey,
        UBILL_DEFAULT_BRAND_ID: "1",
        UBILL_SUBMIT_TIMEOUT_MS: "100000",
        QUEUED_RECOVERY_SECONDS: "200",
        HTTP_BODY_TIMEOUT_SECONDS: "300",
        SHUTDOWN_TIMEOUT_SECONDS: "2",
        // Every job runs every second.
        STATUS_CHECK_INTERVAL_SECONDS: "1",
        PURGE_INTERVAL_SECONDS: "1",
        UNCLAIMED_PURGE_INTERVAL_SECONDS: "1",
      },
    });
    servers.push(server);
    const db = withPrisma(await createDatabase({ databaseUrl: server.databaseUrl, poolSize: 1 }));
    try {
      const { apiKey } = await insertLiveKey(db.prisma, { credits: 10 });
      // The jobs are running.
      await server.waitForOutput((line) => line.includes('"msg":"job round"'));

      // uBill never answers this send (well past the deadline): the request is stuck.
      fake.replyNext({ kind: "slow", delayMs: 300_000 }, "send");
      const stuck = fetch(`${server.baseUrl}/v1/messages`, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${apiKey}`,
          "Idempotency-Key": "stuck-1",
          "Content-Type": "application/json",
        },
        body: JSON.stringify(body()),
      }).then(
        (response) => response.status,
        () => "connection closed" as const,
      );
      for (let i = 0; i < 200 && fake.sends().length === 0; i++) await new Promise((r) => setTimeout(r, 25));
      expect(fake.sends()).toHaveLength(1);
      // And a body that never ends, one byte at a time.
      const endless = await openRaw(server.port);
      endless.write(
        `POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${apiKey}\r\nIdempotency-Key: stuck-2\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
      );
      endless.streamChunks(1, 200);

      const sigtermAt = server.output.length;
      // The harness sends SIGKILL after 15 s: an exit code (not null) means the process ended itself.
      expect(await server.stop("SIGTERM")).toBe(1);
      expect(await stuck).toBe("connection closed");
      await endless.closedByServer(5_000);

      const after = server.output.slice(sigtermAt);
      const text = after.join("\n");
      expect(text).toContain('"msg":"shutting down"');
      expect(text).toContain('"msg":"shutdown deadline reached: closing what remains"');
      expect(text).toMatch(/"forced":true.*"msg":"stopped"/);
      // A round already running when the signal came may finish; none starts after it.
      const rounds = roundsIn(after);
      for (const job of new Set(rounds)) {
        expect(rounds.filter((name) => name === job).length, job).toBeLessThanOrEqual(1);
      }
    } finally {
      await db.close();
      await fake.close();
    }
  });
});

describe("shutdown without work in flight", () => {
  it("exits 0 at once, idle keep-alive connections included", async () => {
    const server = await startServer({ backend: "pglite", env: { SHUTDOWN_TIMEOUT_SECONDS: "20" } });
    servers.push(server);
    const idle = await openRaw(server.port);
    idle.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    await idle.waitForData((text) => text.includes('"status":"alive"'));
    const silent = await openRaw(server.port);

    expect(await server.stop("SIGTERM")).toBe(0);
    // Closed after the drain's grace for a request already on its way (1 s), well before the deadline.
    await Promise.all([idle.closedByServer(10_000), silent.closedByServer(10_000)]);
    const text = server.output.join("\n");
    expect(text).toContain('"msg":"stopped"');
    expect(text).not.toContain("shutdown deadline reached");
  });
});

describe("shutdown and keep-alive", () => {
  const request = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  /** How many responses `raw` received. */
  const responses = (raw: RawConnection) => raw.received().split("HTTP/1.1 200 OK").length - 1;

  it("answers requests sent on idle keep-alive connections just before SIGTERM instead of resetting them", async () => {
    const server = await startServer({ backend: "pglite", env: { SHUTDOWN_TIMEOUT_SECONDS: "20" } });
    servers.push(server);
    const connections = await Promise.all(Array.from({ length: 24 }, () => openRaw(server.port)));
    for (const raw of connections) raw.write(request);
    await Promise.all(connections.map((raw) => raw.waitForData((text) => text.includes('"status":"alive"'))));
    // Idle keep-alive connections (nothing said they would close). On half of them a request
    // is on the wire when the signal comes; the other half have sent only part of one, and
    // send the rest once the server has started to drain.
    const whole = connections.slice(0, 12);
    const partial = connections.slice(12);
    for (const raw of whole) raw.write(request);
    for (const raw of partial) raw.write(request.slice(0, -2));
    const exited = server.stop("SIGTERM");
    await server.waitForOutput((line) => line.includes('"msg":"shutting down"'));
    for (const raw of partial) raw.write("\r\n");
    await Promise.all(connections.map((raw) => raw.closedByServer()));
    expect(await exited).toBe(0);
    expect(connections.map(responses)).toEqual(connections.map(() => 2));
    // An answer given during the drain tells the client that the connection ends.
    for (const raw of partial) {
      expect(raw.received().slice(raw.received().lastIndexOf("HTTP/1.1 200"))).toMatch(
        /\r\nconnection: close\r\n/i,
      );
    }
  });
});
