// Issue 12 §1 and §2 over real HTTP against the Deno process, with raw TCP
// sockets: a body that never ends is cut off at MAX_BODY_BYTES on every kind
// of route and both listeners, answered, and its socket closed; silent,
// half-sent, idle and slow connections are closed by their deadlines; beyond
// MAX_CONNECTIONS new connections get a 503 and the process lives on; running
// out of file descriptors pauses accepting instead of ending the process.
// Loopback only; every wait is bounded and nothing asserts a duration.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiErrorCode, createInternalClient } from "../../src/internal-client.ts";
import { type ServerProcess, startServer } from "../harness.ts";
import {
  eventually,
  openFileDescriptors,
  openRaw,
  type RawConnection,
  requestOnce,
} from "../support/raw-http.ts";

const TOKEN = "connections-TEST-internal-token-0123456789";
const servers: ServerProcess[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.cleanup()));
});

async function start(options: Parameters<typeof startServer>[0]): Promise<ServerProcess> {
  const server = await startServer(options);
  servers.push(server);
  return server;
}

function portOf(url: string): number {
  return Number(new URL(url).port);
}

/** Everything after the head of the first response. */
function bodyOf(raw: RawConnection): string {
  const text = raw.received();
  return text.slice(text.indexOf("\r\n\r\n") + 4);
}

function alive(server: ServerProcess): boolean {
  return server.child.exitCode === null && server.child.signalCode === null;
}

describe("a body that never ends", () => {
  let server: ServerProcess;
  let apiKey = "";
  let claimToken = "";

  beforeAll(async () => {
    server = await start({
      backend: "pglite",
      internalToken: TOKEN,
      // Twenty endless bodies from one address at once (below): above the per-address cap on unfinished bodies.
      env: { MAX_BODY_BYTES: "4096", MAX_UNFINISHED_BODIES_PER_PEER: "32", JOBS_ENABLED: "false" },
    });
    const key = JSON.parse((await requestOnce(server.port, "POST", "/v1/test-keys")).text) as {
      api_key: string;
      claim_url: string;
    };
    apiKey = key.api_key;
    claimToken = key.claim_url.split("/").pop() ?? "";
  });

  type Case = {
    name: string;
    internal?: boolean;
    head: () => string;
    status: number;
    /** What the answer's body contains. */
    contains: string;
  };
  const chunked = (method: string, path: string, headers: Record<string, string> = {}) =>
    `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n${Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join("")}\r\n`;
  const json = { "Content-Type": "application/json" };
  const cases: Case[] = [
    {
      name: "POST /v1/messages with a valid key",
      head: () =>
        chunked("POST", "/v1/messages", {
          ...json,
          Authorization: `Bearer ${apiKey}`,
          "Idempotency-Key": "endless-1",
        }),
      status: 413,
      contains: '"code":"payload_too_large"',
    },
    {
      name: "POST /v1/messages without a key (401 comes first)",
      head: () => chunked("POST", "/v1/messages", { ...json, "Idempotency-Key": "endless-2" }),
      status: 401,
      contains: '"code":"unauthorized"',
    },
    {
      name: "the body-less POST /v1/test-keys",
      head: () => chunked("POST", "/v1/test-keys"),
      status: 413,
      contains: '"code":"payload_too_large"',
    },
    {
      name: "GET /healthz, which reads no body",
      head: () => chunked("GET", "/healthz"),
      status: 200,
      contains: '"status":"alive"',
    },
    {
      name: "GET /docs",
      head: () => chunked("GET", "/docs"),
      status: 200,
      contains: "<!doctype html>",
    },
    {
      name: "POST /trpc/messages.send on the public port",
      head: () => chunked("POST", "/trpc/messages.send", { ...json, Authorization: `Bearer ${apiKey}` }),
      status: 404,
      contains: '"code":"route_not_found"',
    },
    {
      name: "an unknown route",
      head: () => chunked("POST", "/nope", json),
      status: 404,
      contains: '"code":"route_not_found"',
    },
    {
      name: "the claim page's sign-in form (the page equivalent)",
      head: () =>
        chunked("POST", `/claim/${claimToken}/sign-in`, {
          "Content-Type": "application/x-www-form-urlencoded",
        }),
      status: 413,
      contains: "Form too large",
    },
    {
      name: "the internal listener, with its token",
      internal: true,
      head: () =>
        chunked("POST", "/trpc/messages.send", {
          ...json,
          Authorization: `Bearer ${TOKEN}`,
          "X-Api-Key": apiKey,
          "Idempotency-Key": "endless-3",
        }),
      status: 413,
      contains: '"code":"payload_too_large"',
    },
    {
      name: "the internal listener, without its token",
      internal: true,
      head: () => chunked("POST", "/trpc/messages.send", json),
      status: 401,
      contains: '"code":"unauthorized"',
    },
  ];

  it("is answered and its connection closed, on every kind of route and both listeners", async () => {
    const results = await Promise.all(
      cases.map(async (testCase) => {
        const raw = await openRaw(portOf(testCase.internal ? (server.internalUrl ?? "") : server.baseUrl));
        raw.write(testCase.head());
        raw.streamChunks(1024, 5);
        // The client never stops sending: only the server can end this.
        await raw.closedByServer(20_000);
        return { name: testCase.name, status: raw.status(), body: bodyOf(raw), testCase };
      }),
    );
    for (const { name, status, body, testCase } of results) {
      expect(status, name).toBe(testCase.status);
      expect(body, name).toContain(testCase.contains);
    }
    expect(alive(server)).toBe(true);
  });

  it("serves the typed client on the internal listener (loopback, token required) and nowhere else", async () => {
    const internalUrl = server.internalUrl ?? "";
    expect(server.output.join("\n")).toContain(`"msg":"internal listener on ${internalUrl}"`);
    const client = createInternalClient({ baseUrl: internalUrl, token: TOKEN, apiKey });
    expect(await client.health.readiness.query()).toEqual({ status: "ready", database: "ok" });
    const read = await client.messages.get.query({ message_id: "msg_nope" }).catch((error: unknown) => error);
    expect(apiErrorCode(read)).toBe("message_not_found");
    const wrong = await createInternalClient({ baseUrl: internalUrl, token: `${TOKEN}x` })
      .health.liveness.query()
      .catch((error: unknown) => error);
    expect(apiErrorCode(wrong)).toBe("unauthorized");
    const publicTrpc = await createInternalClient({ baseUrl: server.baseUrl, token: TOKEN })
      .health.liveness.query()
      .catch((error: unknown) => error);
    expect(apiErrorCode(publicTrpc)).toBe("route_not_found");
    expect(server.output.join("\n")).not.toContain(TOKEN);
  });

  it("serves Prometheus metrics on the internal listener with its token, never on the public port", async () => {
    const internalUrl = server.internalUrl ?? "";
    // A request the scrape must have counted, by its route template.
    expect(
      (
        await fetch(`${server.baseUrl}/v1/messages/msg_metrics`, {
          headers: { Authorization: `Bearer ${apiKey}` },
        })
      ).status,
    ).toBe(404);
    const scrape = await fetch(`${internalUrl}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get("content-type")).toContain("text/plain");
    const text = await scrape.text();
    expect(text).toMatch(
      /^sms_http_requests_total\{route="\/v1\/messages\/\{message_id\}",method="GET",status="404"\} [1-9]/m,
    );
    expect(text).toMatch(/^sms_messages_backlog\{state="due"\} \d+/m);
    // The alerts' own metrics, as the Deno server serves them (deploy/prometheus/alerts.yml).
    expect(text).toMatch(
      /^sms_http_errors_total\{code="[a-z_]+",route="\/v1\/messages\/\{message_id\}"\} [1-9]/m,
    );
    expect(text).toMatch(/^sms_ready 1$/m);
    expect(text).toMatch(/^sms_messages_backlog_oldest_due_seconds \d/m);
    // The resident set as Deno reports it (prom-client's own reading of /proc is 0 under Deno).
    const rss = Number(/^process_resident_memory_bytes (\S+)$/m.exec(text)?.[1]);
    expect(rss).toBeGreaterThan(20 * 1024 * 1024);
    expect(text).not.toContain(apiKey);
    expect(text).not.toContain("msg_metrics");

    const anonymous = await fetch(`${internalUrl}/metrics`);
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    const publicPort = await fetch(`${server.baseUrl}/metrics`);
    expect(publicPort.status).toBe(404);
    expect(((await publicPort.json()) as { error: { code: string } }).error.code).toBe("route_not_found");
  });

  it("keeps nothing per connection: 20 at once are all closed and their descriptors released", async () => {
    const pid = server.child.pid ?? 0;
    // Warm up: the first requests open files once (bundles, the database).
    await requestOnce(server.port, "GET", "/healthz");
    const baseline = openFileDescriptors(pid);
    const raws = await Promise.all(Array.from({ length: 20 }, () => openRaw(server.port)));
    for (const raw of raws) {
      raw.write(chunked("POST", "/v1/test-keys"));
      raw.streamChunks(2048, 5);
    }
    await Promise.all(raws.map((raw) => raw.closedByServer(20_000)));
    expect(raws.map((raw) => raw.status())).toEqual(raws.map(() => 413));
    await eventually(() => openFileDescriptors(pid) <= baseline, 10_000, "the descriptors to be released");
  });
});

describe("deadlines", () => {
  let server: ServerProcess;
  let apiKey = "";

  beforeAll(async () => {
    server = await start({
      backend: "pglite",
      env: {
        HTTP_HEADERS_TIMEOUT_SECONDS: "1",
        HTTP_IDLE_TIMEOUT_SECONDS: "2",
        HTTP_BODY_TIMEOUT_SECONDS: "2",
        JOBS_ENABLED: "false",
      },
    });
    apiKey = (
      JSON.parse((await requestOnce(server.port, "POST", "/v1/test-keys")).text) as { api_key: string }
    ).api_key;
  });

  it("closes a connection that never sends a request", async () => {
    const raw = await openRaw(server.port);
    await raw.closedByServer();
    expect(raw.received()).toBe("");
  });

  it("closes a connection whose headers never finish", async () => {
    const raw = await openRaw(server.port);
    raw.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
    const drip = setInterval(() => raw.write("a"), 200);
    try {
      await raw.closedByServer();
    } finally {
      clearInterval(drip);
    }
    expect(raw.received()).toBe("");
  });

  it("closes an idle keep-alive connection after a request was served", async () => {
    const raw = await openRaw(server.port);
    raw.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    await raw.waitForData((text) => text.includes('"status":"alive"'));
    await raw.closedByServer();
    expect(raw.status()).toBe(200);
  });

  it("closes a connection whose client does not take its responses", async () => {
    const pid = server.child.pid ?? 0;
    const baseline = openFileDescriptors(pid);
    const raw = await openRaw(server.port);
    // Never read: eight pipelined copies of the 4 MB documentation bundle fill every buffer.
    raw.socket.pause();
    raw.write("GET /docs/assets/api-reference.js HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".repeat(3));
    await eventually(() => openFileDescriptors(pid) > baseline, 10_000, "the connection to be accepted");
    // The client, not reading, cannot see the close; the server's descriptor tells.
    await eventually(() => openFileDescriptors(pid) <= baseline, 15_000, "the server to let go of it");
    raw.destroy();
  });

  it("answers a body that does not arrive in time with 408 and closes the connection", async () => {
    const declared = await openRaw(server.port);
    declared.write(
      `POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${apiKey}\r\nIdempotency-Key: slow-1\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"to":`,
    );
    const dripping = await openRaw(server.port);
    dripping.write(
      `POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${apiKey}\r\nIdempotency-Key: slow-2\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    // One byte every 300 ms: far below the size limit, never finished.
    dripping.streamChunks(1, 300);
    await Promise.all([declared.closedByServer(), dripping.closedByServer()]);
    for (const raw of [declared, dripping]) {
      expect(raw.status()).toBe(408);
      expect(bodyOf(raw)).toContain('"code":"request_timeout"');
    }
    // Nothing was stored for either key: the send never ran.
    const first = await requestOnce(
      server.port,
      "POST",
      "/v1/messages",
      { Authorization: `Bearer ${apiKey}`, "Idempotency-Key": "slow-1", "Content-Type": "application/json" },
      JSON.stringify({ to: "+995555123456", template: "verification_code", variables: { code: "4821" } }),
    );
    expect(first.status).toBe(201);
  });
});

describe("the connection cap", () => {
  const HEALTH = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  /**
   * A request that stays in flight: its key lookup waits on a lock the test holds on `api_keys` (the
   * statement deadline is raised past the test). A request still waiting for its body is not busy in this
   * sense: it is closed for a newcomer like an idle connection (issue 53, G1; slow-bodies.e2e).
   */
  const BUSY = `GET /v1/messages/msg_busy HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer sk_test_${"b".repeat(43)}\r\n\r\n`;

  /** Holds ACCESS EXCLUSIVE on `table` from a psql session of its own until the returned function is called. */
  async function holdLock(databaseUrl: string, table: string): Promise<() => Promise<void>> {
    const { spawn } = await import("node:child_process");
    const psql = spawn("psql", [databaseUrl, "-v", "ON_ERROR_STOP=1"], { stdio: ["pipe", "pipe", "pipe"] });
    // One statement at a time on standard input: psql prints each result as it completes.
    psql.stdin.write(
      `SET client_connection_check_interval = 200;\nBEGIN;\nLOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE;\nSELECT 'locked';\nSELECT pg_sleep(600);\n`,
    );
    let output = "";
    psql.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    await eventually(() => output.includes("locked"), 15_000, "the lock to be held");
    return async () => {
      const exited = new Promise((resolve) => psql.once("exit", resolve));
      psql.kill("SIGKILL");
      await exited;
    };
  }

  it("closes idle connections for new ones; when all are busy, serves health routes and refuses the rest, and recovers", async () => {
    const server = await start({
      backend: "postgres",
      env: {
        MAX_CONNECTIONS: "8",
        HTTP_IDLE_TIMEOUT_SECONDS: "120",
        DATABASE_STATEMENT_TIMEOUT_MS: "120000",
        JOBS_ENABLED: "false",
      },
    });
    const releaseLock = await holdLock(server.databaseUrl ?? "", "api_keys");
    // Eight connections, each provably accepted (served once), then idle.
    const idle = await Promise.all(Array.from({ length: 8 }, () => openRaw(server.port)));
    for (const raw of idle) raw.write(HEALTH);
    await Promise.all(idle.map((raw) => raw.waitForData((text) => text.includes('"status":"alive"'))));
    // Eight newcomers: each takes the place of the oldest idle connection.
    const busy: RawConnection[] = [];
    for (let i = 0; i < 8; i++) {
      const raw = await openRaw(server.port);
      raw.write(BUSY);
      busy.push(raw);
      await eventually(
        () => idle.filter((connection) => connection.isClosed()).length === i + 1,
        15_000,
        "an idle connection to make room",
      );
    }
    expect(idle.every((raw) => raw.isClosed())).toBe(true);
    expect(busy.every((raw) => !raw.isClosed())).toBe(true);

    // Every connection is busy now: /healthz and /readyz are still answered,
    // anything else gets the 503 envelope, and each such connection is closed.
    const probes = await Promise.all(
      ["/healthz", "/readyz", "/v1/messages/msg_x"].map(async (path) => {
        const raw = await openRaw(server.port);
        raw.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
        await raw.closedByServer();
        return raw;
      }),
    );
    expect(probes.map((raw) => raw.status())).toEqual([200, 200, 503]);
    expect(probes[2]?.received()).toMatch(/\r\nretry-after: 1\r\n/i);
    expect(probes[2]?.received()).toMatch(/\r\nx-request-id: req_/i);
    expect(bodyOf(probes[2] as RawConnection)).toContain('"code":"too_many_connections"');

    // Past the few connections over the cap that are read, new ones get the 503 at once.
    const refused = await Promise.all(Array.from({ length: 12 }, () => openRaw(server.port)));
    await eventually(
      () => refused.filter((raw) => raw.isClosed()).length >= 8,
      15_000,
      "the connections past the reserve to be refused",
    );
    for (const raw of refused.filter((connection) => connection.isClosed())) {
      expect(raw.status()).toBe(503);
      expect(raw.received()).toMatch(/\r\nRetry-After: 1\r\n/);
      expect(raw.received()).toMatch(/\r\nX-Content-Type-Options: nosniff\r\n/i);
      expect(bodyOf(raw)).toContain('"code":"too_many_connections"');
    }
    for (const raw of refused) raw.destroy();
    expect(alive(server)).toBe(true);
    expect(busy.every((raw) => !raw.isClosed())).toBe(true);

    for (const raw of busy) raw.destroy();
    await releaseLock();
    await eventually(
      async () =>
        (await requestOnce(server.port, "GET", "/v1/messages/msg_x").catch(() => null))?.status === 401,
      15_000,
      "the API to answer again",
    );
    const warnings = server.output.filter((line) => line.includes("connection limit reached"));
    expect(warnings.length).toBeGreaterThanOrEqual(1);
    // Many events, at most one line per 10 s interval (the test takes far less than 30 s).
    expect(warnings.length).toBeLessThanOrEqual(3);
  });

  it("one address flooding connections holds at most its share; another address is served", async () => {
    const server = await start({
      backend: "pglite",
      env: {
        MAX_CONNECTIONS: "16",
        MAX_CONNECTIONS_PER_PEER: "4",
        HTTP_HEADERS_TIMEOUT_SECONDS: "120",
        JOBS_ENABLED: "false",
      },
    });
    // The flood: silent connections from 127.0.0.2, opened one after another while the legitimate
    // client (127.0.0.1) makes requests, each on a new connection.
    const flood: RawConnection[] = [];
    let flooding = true;
    const flooder = (async () => {
      while (flooding) flood.push(await openRaw(server.port, "127.0.0.1", "127.0.0.2"));
    })().catch((error: unknown) => {
      flooding = false;
      throw error;
    });
    await eventually(() => flood.length >= 20, 20_000, "the flood to start");
    const served: number[] = [];
    for (let i = 0; i < 10; i++) {
      served.push((await requestOnce(server.port, "GET", "/healthz")).status);
      served.push((await requestOnce(server.port, "GET", "/v1/messages/msg_x")).status);
    }
    flooding = false;
    await flooder;
    // The flooding address is not locked out either: a new connection of its own takes the place of its oldest.
    const ownProbe = await openRaw(server.port, "127.0.0.1", "127.0.0.2");
    ownProbe.write(HEALTH);
    await ownProbe.waitForData((text) => text.includes('"status":"alive"'));
    expect(served).toEqual(Array.from({ length: 10 }, () => [200, 401]).flat());
    expect(ownProbe.status()).toBe(200);
    // The flooder's older connections were closed for its newer ones: at most
    // its share (4) is open at the server, and none got a 503.
    await eventually(
      () => flood.filter((raw) => !raw.isClosed()).length <= 4,
      15_000,
      "the flood's connections to be closed",
    );
    expect(flood.filter((raw) => !raw.isClosed()).length).toBeGreaterThan(0);
    expect(flood.every((raw) => raw.received() === "")).toBe(true);
    for (const raw of [...flood, ownProbe]) raw.destroy();
    expect(alive(server)).toBe(true);
  });

  it("at the global cap, the address holding the most gives way", async () => {
    const server = await start({
      backend: "pglite",
      env: {
        MAX_CONNECTIONS: "8",
        MAX_CONNECTIONS_PER_PEER: "6",
        HTTP_HEADERS_TIMEOUT_SECONDS: "120",
        JOBS_ENABLED: "false",
      },
    });
    // 127.0.0.2 holds six silent connections, 127.0.0.3 two idle keep-alive ones: the cap is full.
    const flood = [];
    for (let i = 0; i < 6; i++) flood.push(await openRaw(server.port, "127.0.0.1", "127.0.0.2"));
    const other = await Promise.all([0, 1].map(() => openRaw(server.port, "127.0.0.1", "127.0.0.3")));
    for (const raw of other) raw.write(HEALTH);
    await Promise.all(other.map((raw) => raw.waitForData((text) => text.includes('"status":"alive"'))));
    // A new client is served; the flood's oldest connection made room, 127.0.0.3 kept both of its own.
    const status = (await requestOnce(server.port, "GET", "/healthz")).status;
    expect(status).toBe(200);
    await flood[0]?.closedByServer();
    expect(flood.slice(1).every((raw) => !raw.isClosed())).toBe(true);
    expect(other.every((raw) => !raw.isClosed())).toBe(true);
    for (const raw of [...flood, ...other]) raw.destroy();
  });
});

describe("file descriptors", () => {
  it("running out of them pauses accepting; the process lives and serves again", async () => {
    const server = await start({
      backend: "pglite",
      pgliteDataDir: "memory://",
      ulimit: "-n 64",
      env: { MAX_CONNECTIONS: "1000", HTTP_HEADERS_TIMEOUT_SECONDS: "120", JOBS_ENABLED: "false" },
    });
    const raws: RawConnection[] = [];
    for (let i = 0; i < 100; i++) raws.push(await openRaw(server.port));
    const failure = await server.waitForOutput(
      (line) => line.includes("accepting a connection failed"),
      20_000,
    );
    expect(failure).toContain("Too many open files");
    expect(alive(server)).toBe(true);

    for (const raw of raws) raw.destroy();
    await eventually(
      async () => (await fetch(`${server.baseUrl}/healthz`).catch(() => null))?.status === 200,
      20_000,
      "/healthz to answer again",
    );
    expect(alive(server)).toBe(true);
    const warnings = server.output.filter((line) => line.includes("accepting a connection failed"));
    expect(warnings.length).toBeLessThanOrEqual(3);
  });

  it("starts with the soft limit raised to the hard limit (Deno does it at start-up)", async () => {
    const server = await start({
      backend: "pglite",
      pgliteDataDir: "memory://",
      ulimit: "-S -n 64",
      env: { JOBS_ENABLED: "false" },
    });
    const { readFile } = await import("node:fs/promises");
    const limits = await readFile(`/proc/${server.child.pid}/limits`, "utf8");
    const [soft, hard] = (limits.split("\n").find((line) => line.startsWith("Max open files")) ?? "")
      .split(/\s{2,}/)
      .slice(1, 3);
    expect(Number(soft)).toBeGreaterThan(64);
    expect(soft).toBe(hard);
  });
});
