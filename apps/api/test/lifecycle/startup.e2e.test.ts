// Issue 12 §3 (start-up): the real Deno process started while PostgreSQL
// cannot be reached (its URL points at a closed port) keeps running: it
// retries with backoff, logging each attempt without the URL's password,
// answers /healthz (alive), /readyz (503 not_ready) and the documents, and
// every other route with 500 internal_error and Retry-After. When the port
// starts forwarding to PostgreSQL, it migrates, starts the jobs and serves.
import net from "node:net";
import { availableBackends, createPostgresTestDatabase } from "@sms/db/testing";
import { afterAll, describe, expect, it } from "vitest";
import { freePort, type ServerProcess, startServer } from "../harness.ts";
import { body } from "../support/messages.ts";
import { eventually } from "../support/raw-http.ts";

const PASSWORD = "startup-PASSWORD-7f3e";
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

/** A TCP forwarder to `target` that starts listening on `port` only when told. */
function laterProxy(port: number, target: URL) {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((downstream) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const socket of [downstream, upstream]) {
      sockets.add(socket);
      socket.on("error", () => undefined);
      socket.on("close", () => sockets.delete(socket));
    }
    downstream.pipe(upstream);
    upstream.pipe(downstream);
    downstream.on("close", () => upstream.destroy());
    upstream.on("close", () => downstream.destroy());
  });
  return {
    open: () => new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve)),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

type Envelope = { error: { code: string; message: string; request_id: string } };

describe.skipIf(!(await availableBackends()).includes("postgres"))("start-up with the database down", () => {
  it("serves health and a clear 500 meanwhile, then everything once the database answers", async () => {
    const database = await createPostgresTestDatabase({ migrate: false });
    cleanups.push(database.drop);
    const real = new URL(database.databaseUrl);
    const port = await freePort(); // nothing listens here yet
    const proxied = new URL(database.databaseUrl);
    proxied.hostname = "127.0.0.1";
    proxied.port = String(port);
    proxied.username = proxied.username || "postgres";
    proxied.password = PASSWORD;
    const proxy = laterProxy(port, real);
    cleanups.push(proxy.close);

    const server: ServerProcess = await startServer({
      backend: "postgres",
      databaseUrl: proxied.toString(),
      waitForDatabase: false,
      env: { STATUS_CHECK_INTERVAL_SECONDS: "1" },
    });
    cleanups.push(() => server.cleanup());
    const url = (path: string) => `${server.baseUrl}${path}`;

    // It keeps trying, one line per attempt.
    await server.waitForOutput(
      (line) => line.includes("database unreachable at start-up") && line.includes('"attempt":2'),
    );

    const live = await fetch(url("/healthz"));
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: "alive" });
    const ready = await fetch(url("/readyz"));
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: "not_ready", database: "unreachable" });
    expect((await fetch(url("/openapi.json"))).status).toBe(200);
    expect((await fetch(url("/nope"))).status).toBe(404);

    for (const [path, init] of [
      ["/v1/test-keys", { method: "POST" }],
      ["/v1/messages/msg_01", { headers: { Authorization: `Bearer sk_test_${"A".repeat(43)}` } }],
    ] as const) {
      const response = await fetch(url(path), init);
      expect(response.status, path).toBe(500);
      expect(response.headers.get("retry-after"), path).toBe("5");
      const envelope = (await response.json()) as Envelope;
      expect(envelope.error.code).toBe("internal_error");
      expect(envelope.error.request_id).toBe(response.headers.get("x-request-id"));
    }
    // The browser pages say the same in HTML, with the same Retry-After.
    for (const path of ["/dashboard/sign-in", "/claim/some-token"]) {
      const page = await fetch(url(path));
      expect(page.status, path).toBe(500);
      expect(page.headers.get("retry-after"), path).toBe("5");
      expect(page.headers.get("content-type"), path).toMatch(/^text\/html/);
      const html = await page.text();
      expect(html, path).toContain("Something went wrong");
      expect(html, path).toContain(page.headers.get("x-request-id") ?? "no request id");
    }
    expect(server.child.exitCode).toBeNull();
    // No job round before the database is there.
    expect(server.output.some((line) => line.includes('"msg":"job round"'))).toBe(false);

    // The database appears.
    await proxy.open();
    await eventually(
      async () => (await fetch(url("/readyz"))).status === 200,
      30_000,
      "/readyz to answer 200",
    );
    const key = await fetch(url("/v1/test-keys"), { method: "POST" });
    expect(key.status).toBe(201);
    const { api_key: apiKey } = (await key.json()) as { api_key: string };
    const sent = await fetch(url("/v1/messages"), {
      method: "POST",
      headers: {
        Authorization: `Bearer ${apiKey}`,
        "Idempotency-Key": "after-start",
        "Content-Type": "application/json",
      },
      body: JSON.stringify(body()),
    });
    expect(sent.status).toBe(201);
    await server.waitForOutput((line) => line.includes('"msg":"job round"'));

    const text = server.output.join("\n");
    expect(text).toContain('"msg":"database migrated"');
    expect(text).toContain('"msg":"database reached"');
    const attempts = server.output.filter((line) => line.includes("database unreachable at start-up"));
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    expect(attempts[0]).toContain(`127.0.0.1:${port}`);
    // The password is never printed, in any line.
    expect(text).not.toContain(PASSWORD);
  });
});

describe("where it listens (issue 25, safer defaults)", () => {
  it("listens on loopback only by default outside production and says so; HOST opens it", async () => {
    const [closed, open] = await Promise.all([
      startServer({
        backend: "pglite",
        pgliteDataDir: "memory://",
        env: { HOST: "", JOBS_ENABLED: "false" },
      }),
      startServer({
        backend: "pglite",
        pgliteDataDir: "memory://",
        env: { HOST: "0.0.0.0", JOBS_ENABLED: "false" },
      }),
    ]);
    cleanups.push(
      () => closed.cleanup(),
      () => open.cleanup(),
    );
    const line = (server: ServerProcess) =>
      JSON.parse(server.output.find((text) => text.includes('"msg":"listening on')) ?? "{}") as {
        hostname: string;
        msg: string;
      };
    expect(line(closed).hostname).toBe("127.0.0.1");
    expect(line(closed).msg).toContain("loopback only; set HOST");
    expect(line(open).hostname).toBe("0.0.0.0");
    expect(line(open).msg).toContain("(HOST=0.0.0.0)");
  });
});
