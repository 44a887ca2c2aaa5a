// Issue 51 §2, the tested load-balancer configuration: deploy/haproxy/sms-api.cfg
// as shipped (haproxy -c), run by Debian's HAProxy in front of the real Deno
// service (TRUST_PROXY=1). Clients come from distinct loopback addresses
// (127.0.0.2, .3, ...), so the proxy and the service see distinct callers:
//   - the service's per-address limits see the client HAProxy forwards, not
//     the proxy, and a client's own X-Forwarded-For is replaced, not believed;
//   - the proxy's per-client limits (requests per 10 s, open connections) hold
//     one client back and not the next, in the service's error envelope;
//   - a request body is buffered by the proxy: no server connection is opened
//     until the whole request is there;
//   - with no instance up the proxy answers in the envelope with X-Request-Id.
// The rolling upgrade through the same file is rolling-upgrade.e2e.test.ts.
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerProcess, startServer } from "../harness.ts";
import {
  checkHaproxyConfig,
  type HaproxyProcess,
  haproxyAvailable,
  startHaproxy,
  until,
} from "../support/haproxy.ts";
import { openRaw } from "../support/raw-http.ts";

const runs = haproxyAvailable();

type Answer = { status: number; headers: Record<string, string | string[] | undefined>; text: string };

/** One request from `localAddress` on a connection of its own. */
function requestFrom(
  localAddress: string,
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: "127.0.0.1", port, method, path, headers, localAddress, agent: false },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          text += chunk;
        });
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text }),
        );
      },
    );
    request.on("error", reject);
    request.end();
  });
}

/** The service's error envelope, and X-Request-Id equal to its request_id. */
function expectEnvelope(answer: Answer, code: string) {
  const body = JSON.parse(answer.text) as { error: { code: string; message: string; request_id: string } };
  expect(body.error.code).toBe(code);
  expect(body.error.message.length).toBeGreaterThan(0);
  expect(body.error.request_id).toMatch(/^req_/);
  expect(answer.headers["x-request-id"]).toBe(body.error.request_id);
  expect(answer.headers["content-type"]).toMatch(/^application\/json/);
}

describe.runIf(runs)("deploy/haproxy/sms-api.cfg", () => {
  it("passes haproxy -c as shipped (production defaults) and with the tests' variables; a wrong value fails it", () => {
    const shipped = checkHaproxyConfig({});
    expect(shipped.output).toContain("Configuration file is valid");
    expect(shipped.status).toBe(0);
    const loopback = checkHaproxyConfig({
      SMS_HAPROXY_BIND: "127.0.0.1:18080",
      SMS_HAPROXY_STATS_SOCKET: "/tmp/sms-haproxy-check.sock",
      SMS_API_1: "127.0.0.1:18081",
      SMS_API_2: "127.0.0.1:18082",
    });
    expect(loopback.status).toBe(0);
    // The check can fail: an instance address HAProxy cannot parse.
    expect(checkHaproxyConfig({ SMS_API_1: "127.0.0.1:notaport" }).status).not.toBe(0);
  });

  describe("in front of the service", () => {
    let server: ServerProcess;
    let haproxy: HaproxyProcess;

    beforeAll(async () => {
      server = await startServer({
        backend: "pglite",
        env: { TRUST_PROXY: "1", TEST_KEYS_PER_MINUTE: "2", LOG_LEVEL: "info" },
      });
      haproxy = await startHaproxy({
        servers: { api1: `127.0.0.1:${server.port}` },
        env: {
          SMS_HAPROXY_CHECK_INTER: "300ms",
          SMS_HAPROXY_SLOWSTART: "1s",
          SMS_HAPROXY_CLIENT_REQUESTS_10S: "10",
          SMS_HAPROXY_CLIENT_CONNECTIONS: "3",
        },
      });
      await until("api1 UP", async () => (await haproxy.serverState("api1")).operational === 2);
    }, 120_000);

    afterAll(async () => {
      await haproxy?.stop();
      await server?.cleanup();
    });

    it("the service's per-address limit sees the client, not the proxy, and not the client's own X-Forwarded-For", async () => {
      const key = (from: string, headers: Record<string, string> = {}) =>
        requestFrom(from, haproxy.port, "POST", "/v1/test-keys", headers).then((answer) => answer.status);
      // 127.0.0.2 spends its two test keys a minute, then the service refuses it.
      expect([await key("127.0.0.2"), await key("127.0.0.2")]).toEqual([201, 201]);
      const refused = await requestFrom("127.0.0.2", haproxy.port, "POST", "/v1/test-keys");
      expect(refused.status).toBe(429);
      expectEnvelope(refused, "rate_limited");
      expect(refused.text).toContain("test keys");
      // Another client behind the same proxy is another caller.
      expect(await key("127.0.0.3")).toBe(201);
      // A client claiming to be someone else is still itself: its X-Forwarded-For is replaced.
      expect(await key("127.0.0.4", { "X-Forwarded-For": "127.0.0.2" })).toBe(201);
      expect(await key("127.0.0.3", { "X-Forwarded-For": "127.0.0.9" })).toBe(201);
      expect(await key("127.0.0.3", { "X-Forwarded-For": "127.0.0.9" })).toBe(429);
    });

    it("the proxy holds back one client over its request rate, in the envelope, and not the next", async () => {
      const statuses: number[] = [];
      let last: Answer | undefined;
      for (let i = 0; i < 12; i++) {
        last = await requestFrom("127.0.0.5", haproxy.port, "GET", "/healthz");
        statuses.push(last.status);
      }
      expect(statuses.slice(0, 10)).toEqual(Array(10).fill(200));
      expect(statuses.slice(10)).toEqual([429, 429]);
      if (!last) throw new Error("no answer");
      expectEnvelope(last, "rate_limited");
      expect(last.headers["x-request-id"]).toMatch(/^req_proxy/);
      expect(last.headers["retry-after"]).toBe("10");
      expect((await requestFrom("127.0.0.6", haproxy.port, "GET", "/healthz")).status).toBe(200);
    });

    it("the proxy refuses a client's connection over its cap, and not the next client's", async () => {
      const held = await Promise.all([1, 2, 3].map(() => openRaw(haproxy.port, "127.0.0.1", "127.0.0.7")));
      try {
        // The stick table counts them once HAProxy has accepted them.
        await until("three connections tracked", async () =>
          (await haproxy.command("show table sms_api")).includes("conn_cur=3"),
        );
        // Closed at once, nothing answered (a reset while connecting, or an empty close).
        const fourth = await openRaw(haproxy.port, "127.0.0.1", "127.0.0.7").then(
          async (connection) => {
            connection.write("GET /healthz HTTP/1.1\r\nHost: sms\r\n\r\n");
            await connection.closedByServer(5_000);
            return connection.received();
          },
          (error: NodeJS.ErrnoException) => error.code ?? String(error),
        );
        expect(["", "ECONNRESET"]).toContain(fourth);
        expect((await requestFrom("127.0.0.8", haproxy.port, "GET", "/healthz")).status).toBe(200);
      } finally {
        for (const connection of held) connection.destroy();
      }
    });

    it("buffers a request body: no connection to the service until the whole request has arrived", async () => {
      const sessions = async () => (await haproxy.command("show stat")).split("\n");
      const total = async () => {
        const lines = await sessions();
        const header = lines[0]?.replace(/^# /, "").split(",") ?? [];
        const row = lines.map((line) => line.split(",")).find((f) => f[0] === "api" && f[1] === "api1");
        return Number(row?.[header.indexOf("stot")]);
      };
      const before = await total();
      const body = JSON.stringify({
        to: "+995571234567",
        template: "verification_code",
        variables: { code: "1" },
      });
      const slow = await openRaw(haproxy.port, "127.0.0.1", "127.0.0.11");
      slow.write(
        `POST /v1/messages HTTP/1.1\r\nHost: sms\r\nAuthorization: Bearer sk_test_nope\r\nIdempotency-Key: b-1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 10)}`,
      );
      // Health checks do not count in stot; a request forwarded would.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await total()).toBe(before);
      expect(slow.received()).toBe("");
      slow.write(body.slice(10));
      await slow.waitForData((text) => text.includes("\r\n\r\n"), 10_000);
      expect(slow.status()).toBe(401);
      expect(await total()).toBe(before + 1);
      slow.destroy();
    });

    it("answers in the envelope, with X-Request-Id, when no instance is up", async () => {
      await haproxy.command("set server api/api1 state maint");
      try {
        const answer = await requestFrom("127.0.0.12", haproxy.port, "GET", "/v1/messages/msg_x");
        expect(answer.status).toBe(503);
        expectEnvelope(answer, "internal_error");
        expect(answer.headers["retry-after"]).toBe("1");
      } finally {
        await haproxy.command("set server api/api1 state ready");
        await until("api1 UP again", async () => (await haproxy.serverState("api1")).operational === 2);
      }
    });
  });
});
