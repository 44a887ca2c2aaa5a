// Issue 53, item 8, over raw TCP against the real Deno server: the HTTP edges
// the service answers itself. An HTTP/1.1 request without `Host` is a `400` in
// the envelope (RFC 9112 §3.2); an error answer that closes its connection
// says `Connection: close` once; a body whose chunked framing turns out
// malformed is a `400` in the envelope, even on an authenticated send. A
// request whose framing is broken before the service sees it stays the
// parser's (docs/api-behaviour.md, "Requests the HTTP parser refuses").
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerProcess, startServer } from "../harness.ts";
import { openRaw, type RawConnection, requestOnce } from "../support/raw-http.ts";

let server: ServerProcess;
let apiKey = "";

beforeAll(async () => {
  server = await startServer({ backend: "pglite", env: { JOBS_ENABLED: "false" } });
  apiKey = (JSON.parse((await requestOnce(server.port, "POST", "/v1/test-keys")).text) as { api_key: string })
    .api_key;
});
afterAll(async () => {
  await server?.cleanup();
});

/** The head of the first response (status line and header lines). */
function headOf(raw: RawConnection): string {
  const text = raw.received();
  return text.slice(0, text.indexOf("\r\n\r\n"));
}

/** The first response's body, parsed as the error envelope. */
function envelopeOf(raw: RawConnection): { error: { code: string; message: string; request_id: string } } {
  const text = raw.received();
  return JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4));
}

function headerLines(raw: RawConnection, name: string): string[] {
  return headOf(raw)
    .split("\r\n")
    .filter((line) => line.toLowerCase().startsWith(`${name.toLowerCase()}:`));
}

/** Sends `text` on a new connection and waits for the server to close it. */
async function exchange(text: string): Promise<RawConnection> {
  const raw = await openRaw(server.port);
  raw.write(text);
  await raw.closedByServer();
  return raw;
}

describe("a request without Host", () => {
  it("is answered 400 invalid_request in the envelope, with X-Request-Id, and its connection closed", async () => {
    for (const request of [
      "GET /healthz HTTP/1.1\r\n\r\n",
      `POST /v1/messages HTTP/1.1\r\nAuthorization: Bearer ${apiKey}\r\nIdempotency-Key: no-host-1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
    ]) {
      const raw = await exchange(request);
      expect(raw.status(), request).toBe(400);
      const envelope = envelopeOf(raw);
      expect(envelope.error.code).toBe("invalid_request");
      expect(envelope.error.message).toContain("'Host'");
      expect(headerLines(raw, "X-Request-Id")).toEqual([`X-Request-Id: ${envelope.error.request_id}`]);
      expect(headerLines(raw, "Connection")).toHaveLength(1);
    }
  });

  it("is served as usual with a Host header", async () => {
    const raw = await openRaw(server.port);
    raw.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    await raw.waitForData((text) => text.includes('"status":"alive"'));
    expect(raw.status()).toBe(200);
    raw.destroy();
  });
});

describe("an error answer that closes its connection", () => {
  it("carries Connection once, whoever decided the close", async () => {
    const cases = [
      // The body is declared and never sent: the route ignores it, the connection closes.
      "POST /nope HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5000\r\n\r\n",
      // Too large, and the client asked to close as well.
      "POST /v1/test-keys HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: 99999999\r\n\r\n",
      "POST /v1/test-keys HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 99999999\r\n\r\n",
      // An HTTP/1.1 client that says keep-alive explicitly (Node's agent does).
      "POST /nope HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\nContent-Length: 5000\r\n\r\n",
    ];
    const raws = await Promise.all(cases.map(exchange));
    expect(raws.map((raw) => raw.status())).toEqual([404, 413, 413, 404]);
    for (const [index, raw] of raws.entries()) {
      expect(
        headerLines(raw, "Connection").map((line) => line.toLowerCase()),
        cases[index],
      ).toEqual(["connection: close"]);
    }
  });
});

describe("a body with malformed chunked framing", () => {
  const head = (path: string, headers: string) =>
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${headers}Transfer-Encoding: chunked\r\n\r\n`;

  it("is answered 400 invalid_request on an authenticated send, nothing is sent, and its connection closed", async () => {
    const bad = ["zz\r\nabc\r\n", "3\r\nabcdef\r\n0\r\n\r\n"];
    const raws = await Promise.all(
      bad.map(async (framing, index) => {
        const raw = await openRaw(server.port);
        raw.write(
          head("/v1/messages", `Authorization: Bearer ${apiKey}\r\nIdempotency-Key: chunked-${index}\r\n`),
        );
        // The headers first, the broken chunk after: the request is the service's by then.
        await new Promise((resolve) => setTimeout(resolve, 300));
        raw.write(framing);
        await raw.closedByServer();
        return raw;
      }),
    );
    for (const raw of raws) {
      expect(raw.status()).toBe(400);
      expect(envelopeOf(raw).error.code).toBe("invalid_request");
      expect(envelopeOf(raw).error.message).toContain("chunked");
      expect(headerLines(raw, "Connection")).toHaveLength(1);
    }
    // Nothing was stored for either key: the same key sends now.
    const first = await requestOnce(
      server.port,
      "POST",
      "/v1/messages",
      {
        Authorization: `Bearer ${apiKey}`,
        "Idempotency-Key": "chunked-0",
        "Content-Type": "application/json",
      },
      JSON.stringify({ to: "+995555123456", template: "verification_code", variables: { code: "4821" } }),
    );
    expect(first.status).toBe(201);
  });

  it("that arrives with its headers is the parser's: the connection closes without an answer (documented)", async () => {
    const raw = await exchange(`${head("/v1/test-keys", "")}zz\r\nabc\r\n`);
    expect(raw.received()).toBe("");
    expect((await requestOnce(server.port, "GET", "/healthz")).status).toBe(200);
  });
});
