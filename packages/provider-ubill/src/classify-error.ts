// Classifies a failed fetch: did the request certainly never leave (nothing
// sent, safe to retry), or may uBill have received it (never re-send)?
//
// Only failures that happen while the connection is being set up count as
// "not sent": DNS resolution, TCP connect and the TLS handshake all finish
// before the first byte of the HTTP request is written. Everything else,
// including errors we do not recognise, counts as "may have been sent".
//
// Node (undici) rejects with TypeError("fetch failed") whose `cause` is a
// system error carrying `code` and `syscall` ("connect" / "getaddrinfo"), an
// AggregateError of such errors (happy eyeballs), or an undici error such as
// UND_ERR_CONNECT_TIMEOUT. Deno rejects with a TypeError whose message, or its
// cause's message, names hyper's connect phase: "client error (Connect)",
// "tcp connect error", "dns error". Deno's messages contain the request URL
// (and so the API key): they are matched here and never copied anywhere.

export type ConnectProblem =
  | "dns_failure"
  | "connection_refused"
  | "connect_timeout"
  | "tls_failure"
  | "connect_failed";
export type InFlightProblem = "connection_dropped" | "unexpected_error";

export type FetchFailure =
  | { sent: "no"; problem: ConnectProblem }
  | { sent: "maybe"; problem: InFlightProblem };

const DNS_CODES = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_NONAME", "EAI_NODATA", "EAI_FAIL"]);
const CONNECT_SYSCALL_CODES = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EHOSTDOWN",
  "ENETDOWN",
  "EADDRNOTAVAIL",
  "ETIMEDOUT",
]);
/** Certificate checks fail during the TLS handshake, before the request is written. */
const TLS_HANDSHAKE_CODES = new Set([
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
]);
const DROPPED_CODES = new Set(["UND_ERR_SOCKET", "ECONNRESET", "EPIPE", "UND_ERR_CLOSED"]);

type ErrorLike = { code?: unknown; syscall?: unknown; message?: unknown; cause?: unknown; errors?: unknown };

function asErrorLike(value: unknown): ErrorLike | null {
  return typeof value === "object" && value !== null ? (value as ErrorLike) : null;
}

/** The error and its causes, outermost first (bounded, cycle-safe). */
function causeChain(error: unknown): ErrorLike[] {
  const chain: ErrorLike[] = [];
  let current = asErrorLike(error);
  while (current !== null && chain.length < 8 && !chain.includes(current)) {
    chain.push(current);
    current = asErrorLike(current.cause);
  }
  return chain;
}

/** Node: a system error raised while resolving or connecting. */
function nodeConnectProblem(error: ErrorLike): ConnectProblem | null {
  const code = typeof error.code === "string" ? error.code : "";
  const syscall = typeof error.syscall === "string" ? error.syscall : "";
  if (code === "UND_ERR_CONNECT_TIMEOUT") return "connect_timeout";
  if (DNS_CODES.has(code) && (syscall === "getaddrinfo" || syscall === "queryA" || syscall === "queryAaaa")) {
    return "dns_failure";
  }
  if (syscall === "connect" && CONNECT_SYSCALL_CODES.has(code)) {
    if (code === "ECONNREFUSED") return "connection_refused";
    if (code === "ETIMEDOUT") return "connect_timeout";
    return "connect_failed";
  }
  if (TLS_HANDSHAKE_CODES.has(code)) return "tls_failure";
  // Happy eyeballs: every address failed to connect.
  if (Array.isArray(error.errors) && error.errors.length > 0) {
    const problems = error.errors.map((inner) => {
      const innerError = asErrorLike(inner);
      return innerError === null ? null : nodeConnectProblem(innerError);
    });
    if (problems.every((problem) => problem !== null)) {
      return problems.includes("connection_refused")
        ? "connection_refused"
        : (problems[0] ?? "connect_failed");
    }
  }
  return null;
}

/** Deno: hyper's client reports the connector's failures as "client error (Connect)". */
function denoConnectProblem(error: ErrorLike): ConnectProblem | null {
  const message = typeof error.message === "string" ? error.message : "";
  const connectPhase =
    message.includes("client error (Connect)") ||
    message.includes("tcp connect error") ||
    message.includes("dns error");
  if (!connectPhase) return null;
  if (message.includes("dns error")) return "dns_failure";
  if (/connection refused/i.test(message)) return "connection_refused";
  if (/timed out/i.test(message)) return "connect_timeout";
  if (/certificate|tls|handshake/i.test(message)) return "tls_failure";
  return "connect_failed";
}

export function classifyFetchError(error: unknown): FetchFailure {
  const chain = causeChain(error);
  for (const link of chain) {
    const problem = nodeConnectProblem(link) ?? denoConnectProblem(link);
    if (problem !== null) return { sent: "no", problem };
  }
  const dropped = chain.some((link) => {
    const code = typeof link.code === "string" ? link.code : "";
    const message = typeof link.message === "string" ? link.message : "";
    return (
      DROPPED_CODES.has(code) ||
      message.includes("connection closed before message completed") ||
      message.includes("error reading a body from connection") ||
      message === "terminated"
    );
  });
  return { sent: "maybe", problem: dropped ? "connection_dropped" : "unexpected_error" };
}

// uBill answered: what the HTTP status of its answer to a send says before
// the body is read. uBill has no idempotency key, so a send that may have been
// processed must never be repeated. Only two things prove that nothing was
// sent: a request that never left (classifyFetchError), and uBill's own
// refusal in a 2xx body (a documented non-zero statusID other than 99, the
// "general error": ubill-provider.ts SEND_STATUSES). No HTTP status
// does: uBill documents none, and a proxy or load balancer in front of it may
// answer any of them after it forwarded the request (docs/live-sending.md,
// "What proves that nothing was sent").
//
//   2xx              the body says what happened (statusID)
//   429, 503         throttled or unavailable, but possibly said by a proxy
//                    after the send went through -> maybe sent (unknown)
//   501, 505         the method or HTTP version is not supported at all:
//                    nothing to retry -> refused
//   401, 403         our uBill key was refused -> refused (the operator must act)
//   other 4xx, 3xx   the request was refused as it stands -> refused
//   500, 502, 504,   the server (or a gateway in front of it) failed while
//   any other 5xx    handling it, or gave up waiting for it: it may have
//                    been processed -> maybe sent (unknown, never re-sent)
//   1xx, other       not a final answer we understand -> maybe sent

export type SendStatusVerdict =
  | { kind: "answer" }
  | {
      kind: "refused";
      problem: "api_key_rejected" | "unexpected_redirect" | "request_refused" | "not_supported";
      operatorMustAct: boolean;
    }
  | {
      kind: "maybe_sent";
      problem: "throttled" | "service_unavailable" | "server_error" | "unexpected_status";
    };

export function classifySendStatus(httpStatus: number): SendStatusVerdict {
  if (httpStatus >= 200 && httpStatus < 300) return { kind: "answer" };
  if (httpStatus === 429) return { kind: "maybe_sent", problem: "throttled" };
  if (httpStatus === 503) return { kind: "maybe_sent", problem: "service_unavailable" };
  if (httpStatus === 401 || httpStatus === 403) {
    return { kind: "refused", problem: "api_key_rejected", operatorMustAct: true };
  }
  if (httpStatus === 501 || httpStatus === 505) {
    return { kind: "refused", problem: "not_supported", operatorMustAct: true };
  }
  if (httpStatus >= 300 && httpStatus < 400) {
    return { kind: "refused", problem: "unexpected_redirect", operatorMustAct: true };
  }
  if (httpStatus >= 400 && httpStatus < 500) {
    return { kind: "refused", problem: "request_refused", operatorMustAct: false };
  }
  if (httpStatus >= 500 && httpStatus < 600) return { kind: "maybe_sent", problem: "server_error" };
  return { kind: "maybe_sent", problem: "unexpected_status" };
}
