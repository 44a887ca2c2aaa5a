import { describe, expect, it } from "vitest";
import { classifyFetchError, classifySendStatus } from "./classify-error.ts";

/** A Node system error as undici puts it in `cause`. */
function systemError(code: string, syscall: string, message = `${syscall} ${code}`): Error {
  return Object.assign(new Error(message), { code, syscall });
}

const nodeFetchFailed = (cause: unknown): TypeError => new TypeError("fetch failed", { cause });

/** Deno 2.9 wraps hyper's error in `cause`; older Deno put it in the message itself. */
const denoFetchFailed = (message: string): TypeError =>
  new TypeError("fetch failed", {
    cause: new Error(`error sending request for url (http://x/?key=K): ${message}`),
  });

describe("classifyFetchError: nothing was sent", () => {
  it.each([
    ["Node refused", nodeFetchFailed(systemError("ECONNREFUSED", "connect")), "connection_refused"],
    ["Node DNS not found", nodeFetchFailed(systemError("ENOTFOUND", "getaddrinfo")), "dns_failure"],
    ["Node DNS temporary", nodeFetchFailed(systemError("EAI_AGAIN", "getaddrinfo")), "dns_failure"],
    [
      "undici connect timeout",
      nodeFetchFailed(Object.assign(new Error("Connect Timeout Error"), { code: "UND_ERR_CONNECT_TIMEOUT" })),
      "connect_timeout",
    ],
    ["Node OS connect timeout", nodeFetchFailed(systemError("ETIMEDOUT", "connect")), "connect_timeout"],
    ["Node host unreachable", nodeFetchFailed(systemError("EHOSTUNREACH", "connect")), "connect_failed"],
    [
      "Node TLS certificate",
      nodeFetchFailed(Object.assign(new Error("certificate has expired"), { code: "CERT_HAS_EXPIRED" })),
      "tls_failure",
    ],
    [
      "Node happy eyeballs",
      nodeFetchFailed(
        Object.assign(
          new AggregateError([systemError("ECONNREFUSED", "connect"), systemError("ENETUNREACH", "connect")]),
          { code: "ECONNREFUSED" },
        ),
      ),
      "connection_refused",
    ],
    [
      "Deno refused",
      denoFetchFailed("client error (Connect): tcp connect error: Connection refused (os error 111)"),
      "connection_refused",
    ],
    [
      "Deno DNS",
      denoFetchFailed(
        "client error (Connect): dns error: failed to lookup address information: Name or service",
      ),
      "dns_failure",
    ],
    [
      "Deno TLS",
      denoFetchFailed("client error (Connect): invalid peer certificate: UnknownIssuer"),
      "tls_failure",
    ],
    [
      "Deno connect timeout",
      denoFetchFailed("client error (Connect): tcp connect error: Connection timed out (os error 110)"),
      "connect_timeout",
    ],
    [
      "older Deno, message only",
      new TypeError(
        "error sending request for url (http://x/): client error (Connect): tcp connect error: refused",
      ),
      "connect_failed",
    ],
  ])("%s", (_name, error, problem) => {
    expect(classifyFetchError(error)).toEqual({ sent: "no", problem });
  });
});

describe("classifyFetchError: the request may have been sent", () => {
  it.each([
    [
      "Node connection closed",
      nodeFetchFailed(Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" })),
      "connection_dropped",
    ],
    ["Node reset while reading", nodeFetchFailed(systemError("ECONNRESET", "read")), "connection_dropped"],
    ["Node body terminated", new TypeError("terminated"), "connection_dropped"],
    [
      "Deno connection closed",
      new TypeError("fetch failed", {
        cause: new Error(
          "error sending request from 127.0.0.1:1 for http://x/ (127.0.0.1:2): client error (SendRequest): connection closed before message completed",
        ),
      }),
      "connection_dropped",
    ],
    ["Deno body read", new TypeError("error reading a body from connection"), "connection_dropped"],
    [
      "a refused code outside connect",
      nodeFetchFailed(systemError("ECONNREFUSED", "write")),
      "unexpected_error",
    ],
    ["an unknown error", new Error("something else"), "unexpected_error"],
    ["a thrown string", "boom", "unexpected_error"],
    ["null", null, "unexpected_error"],
    [
      "an AggregateError with a non-connect part",
      new AggregateError([systemError("ECONNREFUSED", "connect"), new Error("other")]),
      "unexpected_error",
    ],
  ])("%s", (_name, error, problem) => {
    expect(classifyFetchError(error)).toEqual({ sent: "maybe", problem });
  });

  it("survives a cause cycle", () => {
    const first = new Error("first") as Error & { cause?: unknown };
    const second = new Error("second", { cause: first });
    first.cause = second;
    expect(classifyFetchError(first)).toEqual({ sent: "maybe", problem: "unexpected_error" });
  });
});

describe("classifySendStatus: every HTTP status of a send answer, decided", () => {
  it("reads the body of a 2xx answer", () => {
    for (const status of [200, 201, 204]) expect(classifySendStatus(status)).toEqual({ kind: "answer" });
  });

  it("429 and 503 prove nothing (a proxy in front of uBill may answer them after forwarding): may have been sent", () => {
    expect(classifySendStatus(429)).toEqual({ kind: "maybe_sent", problem: "throttled" });
    expect(classifySendStatus(503)).toEqual({ kind: "maybe_sent", problem: "service_unavailable" });
  });

  it("no HTTP status proves that nothing was sent", () => {
    for (let status = 100; status < 600; status++) {
      expect(classifySendStatus(status).kind, String(status)).not.toBe("not_sent");
    }
  });

  it("4xx, 3xx, 501 and 505: refused as it stands", () => {
    for (const status of [301, 302, 400, 401, 403, 404, 409, 422, 501, 505]) {
      expect(classifySendStatus(status).kind, String(status)).toBe("refused");
    }
    expect(classifySendStatus(401)).toMatchObject({ problem: "api_key_rejected", operatorMustAct: true });
  });

  it("every other 5xx, and anything unexpected: it may have been sent", () => {
    for (const status of [500, 502, 504, 506, 507, 508, 511, 520, 524, 599, 100, 199, 600]) {
      expect(classifySendStatus(status).kind, String(status)).toBe("maybe_sent");
    }
  });
});
