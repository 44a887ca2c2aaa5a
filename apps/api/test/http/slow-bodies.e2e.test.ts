// Issue 53, G1, over raw TCP against the real Deno server: request bodies that
// trickle in cost their senders, not everyone. Eleven addresses keeping slow
// bodies open (one byte every 5 s) no longer lock a twelfth out: at the cap the
// oldest connection still waiting for its body makes room; one address holds at
// most MAX_UNFINISHED_BODIES_PER_PEER of them; a body below the minimum rate is
// answered 408 long before its whole-body deadline. Distinct loopback addresses
// (127.0.0.x) stand for distinct clients. Statuses are asserted, never times.
import { afterAll, describe, expect, it } from "vitest";
import { type ServerProcess, startServer } from "../harness.ts";
import { eventually, openRaw, type RawConnection, requestOnce } from "../support/raw-http.ts";

const servers: ServerProcess[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.cleanup()));
});

async function start(env: Record<string, string>): Promise<ServerProcess> {
  const server = await startServer({ backend: "pglite", env: { JOBS_ENABLED: "false", ...env } });
  servers.push(server);
  return server;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A send whose headers arrive at once and whose 200-byte body then comes one byte every `everyMs`. */
async function slowBody(port: number, address: string, everyMs = 5000): Promise<RawConnection> {
  const raw = await openRaw(port, "127.0.0.1", address);
  raw.write(
    "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nIdempotency-Key: slow\r\nContent-Length: 200\r\n\r\n{",
  );
  const drip = setInterval(() => raw.write(" "), everyMs);
  raw.socket.on("close", () => clearInterval(drip));
  return raw;
}

function send(port: number, apiKey: string, key: string) {
  return requestOnce(
    port,
    "POST",
    "/v1/messages",
    { Authorization: `Bearer ${apiKey}`, "Idempotency-Key": key, "Content-Type": "application/json" },
    JSON.stringify({ to: "+995555123456", template: "verification_code", variables: { code: "4821" } }),
  );
}

describe("slow request bodies", () => {
  it("from 11 addresses do not lock out a 12th: the legitimate client is served", async () => {
    // MAX_CONNECTIONS / MAX_CONNECTIONS_PER_PEER = 8: eleven addresses can fill the cap (issue 53, G1).
    // The whole-body deadline is long: only the new mechanisms can make room.
    const server = await start({
      MAX_CONNECTIONS: "16",
      MAX_CONNECTIONS_PER_PEER: "2",
      HTTP_BODY_TIMEOUT_SECONDS: "120",
    });
    const apiKey = (
      JSON.parse((await requestOnce(server.port, "POST", "/v1/test-keys")).text) as { api_key: string }
    ).api_key;

    const attackers = Array.from({ length: 11 }, (_, index) => `127.0.0.${index + 2}`);
    const opened: RawConnection[] = [];
    let flooding = true;
    // Each address keeps two slow bodies open, and opens a new one whenever the server closes one.
    const flood = attackers.flatMap((address) =>
      [0, 1].map(async () => {
        while (flooding) {
          const raw = await slowBody(server.port, address);
          opened.push(raw);
          while (flooding && !raw.isClosed()) await sleep(50);
        }
      }),
    );
    await eventually(() => opened.length >= 22, 20_000, "the slow bodies to be open");
    // Give the server time to read every head: the cap is full of requests waiting for their bodies.
    await sleep(1000);

    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await send(server.port, apiKey, `legit-${i}`)).status);
    statuses.push((await requestOnce(server.port, "GET", "/v1/messages/msg_x")).status);
    flooding = false;
    for (const raw of opened) raw.destroy();
    await Promise.all(flood);

    expect(statuses).toEqual([...Array.from({ length: 10 }, () => 201), 401]);
    // Room was made by closing slow bodies: never with an answer they could use.
    const closedByServer = opened.filter((raw) => raw.received() === "" || raw.status() === 408);
    expect(closedByServer.length).toBe(opened.length);
    expect(opened.length).toBeGreaterThan(22);
  });

  it("one address holds at most MAX_UNFINISHED_BODIES_PER_PEER of them: a new one closes its oldest", async () => {
    const server = await start({
      MAX_UNFINISHED_BODIES_PER_PEER: "2",
      HTTP_BODY_READ_TIMEOUT_SECONDS: "120",
      HTTP_BODY_TIMEOUT_SECONDS: "120",
    });
    const bodies: RawConnection[] = [];
    for (let i = 0; i < 3; i++) {
      bodies.push(await slowBody(server.port, "127.0.0.2", 1000));
      // The head must have been read before the next one comes.
      await sleep(500);
    }
    await (bodies[0] as RawConnection).closedByServer();
    expect(bodies[0]?.received()).toBe("");
    expect(bodies.slice(1).every((raw) => !raw.isClosed())).toBe(true);
    // Another address is not counted with it.
    const other = await slowBody(server.port, "127.0.0.3", 1000);
    await sleep(500);
    expect(bodies.slice(1).every((raw) => !raw.isClosed())).toBe(true);
    expect((await requestOnce(server.port, "GET", "/healthz")).status).toBe(200);
    for (const raw of [...bodies, other]) raw.destroy();
  });

  it("below the minimum rate is answered 408 request_timeout well before its whole-body deadline", async () => {
    const server = await start({
      HTTP_BODY_READ_TIMEOUT_SECONDS: "2",
      HTTP_BODY_TIMEOUT_SECONDS: "600",
    });
    // One byte a second: never silent for the read timeout, far below 240 bytes a second.
    const raw = await slowBody(server.port, "127.0.0.2", 1000);
    await raw.closedByServer(60_000);
    expect(raw.status()).toBe(408);
    expect(raw.received()).toContain('"code":"request_timeout"');
    // A body that arrives at once is read as usual.
    expect((await requestOnce(server.port, "POST", "/v1/test-keys", {}, "{}")).status).toBe(201);
  });
});
