// One HTTP exchange with uBill, reduced to what the callers must decide on:
// an answer (status and JSON body), a failure that certainly sent nothing, or
// a failure after the request may have left. One deadline covers connecting,
// sending, waiting and reading the body; when it fires the request may have
// reached uBill, so a timeout is always "lost", never "not sent".

import { type ConnectProblem, classifyFetchError, type InFlightProblem } from "./classify-error.ts";

export type LostProblem = InFlightProblem | "timeout";

export type UbillExchange =
  /** uBill answered. `body` is the parsed JSON, or `undefined` when the body was not JSON. */
  | { kind: "answered"; httpStatus: number; body: unknown }
  /** The connection was never set up: nothing was sent. */
  | { kind: "not_sent"; problem: ConnectProblem }
  /** The request may have reached uBill, but no complete answer came back. */
  | { kind: "lost"; problem: LostProblem };

export type ExchangeRequest = {
  fetch: typeof fetch;
  method: "GET" | "POST";
  /** The full URL, API key included. Never logged, never copied into a result. */
  url: URL;
  body?: string;
  timeoutMs: number;
};

type DenoHttp = { createHttpClient(options: { poolMaxIdlePerHost?: number }): unknown };
let unpooled: { client: unknown } | undefined;

/**
 * Under Deno, a send never rides a pooled keep-alive connection: when a reused
 * connection closes before the answer, Deno's fetch (hyper) silently sends the
 * request again on a fresh one, and uBill has no idempotency key, so the SMS
 * could go out twice. A client without an idle pool gives every send its own
 * connection (one handshake each). Node's fetch (undici) never re-sends a POST.
 */
function unpooledClient(): { client?: unknown } {
  const deno = (globalThis as { Deno?: Partial<DenoHttp> }).Deno;
  if (typeof deno?.createHttpClient !== "function") return {};
  unpooled ??= { client: deno.createHttpClient({ poolMaxIdlePerHost: 0 }) };
  return unpooled;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export async function exchange(request: ExchangeRequest): Promise<UbillExchange> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, request.timeoutMs);
  try {
    const headers: Record<string, string> = { accept: "application/json" };
    if (request.body !== undefined) headers["content-type"] = "application/json";
    let response: Response;
    try {
      const send = request.fetch;
      response = await send(request.url, {
        method: request.method,
        headers,
        body: request.body ?? null,
        signal: controller.signal,
        // A redirect is an answer; following it would turn a POST into a GET.
        redirect: "manual",
        ...(request.method === "POST" ? unpooledClient() : {}),
      });
    } catch (error) {
      if (timedOut) return { kind: "lost", problem: "timeout" };
      const failure = classifyFetchError(error);
      return failure.sent === "no"
        ? { kind: "not_sent", problem: failure.problem }
        : { kind: "lost", problem: failure.problem };
    }
    let text: string;
    try {
      text = await response.text();
    } catch {
      return { kind: "lost", problem: timedOut ? "timeout" : "connection_dropped" };
    }
    return { kind: "answered", httpStatus: response.status, body: parseJson(text) };
  } finally {
    clearTimeout(timer);
  }
}
