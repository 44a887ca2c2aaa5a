// What one request carries through the gateway: created by the gateway before
// dispatch, handed to procedures as `ctx.state` and to page routes as an
// argument. Also the one way a procedure shapes its success response.
import type { Logger } from "@sms/domain";
import type { AppLogger } from "../logger.ts";

export type RequestState = {
  requestId: string;
  /** The request as the client sent it (headers such as Authorization). */
  request: Request;
  /** The caller's address as the rate limits see it (after TRUST_PROXY). */
  clientAddress: string;
  /** The logger for this request (bound to its request id; made on first use). */
  log: AppLogger;
  /** The project the request acted for, named in the access-log line. */
  projectId?: string;
  /** The API key that authenticated the request (the request log's key and mode). */
  apiKey?: { id: string; mode: "test" | "live" };
  /** The message the request created, replayed or read (the request log links it). */
  messageId?: string;
  /** The verification the request created or read (verifications' procedures set it). */
  verificationId?: string;
  /** The request was held by `Prefer: wait` (http/conditional-read.ts): its duration is the hold's, not work. */
  held?: boolean;
};

/**
 * A request's state as the gateway makes it (`log` made on first use). A
 * class on purpose: an object literal with a `log` getter is a dictionary-mode
 * object in V8, a hash table of some 600 bytes per request that every
 * middleware's `state.projectId` then reads by lookup; the class's instances
 * share one shape, with every property present from the start
 * (bench/log/2026-11-27.md#what-survives-a-scavenge-2026-11-27-night).
 */
class GatewayRequestState implements RequestState {
  projectId: string | undefined = undefined;
  apiKey: RequestState["apiKey"] = undefined;
  messageId: string | undefined = undefined;
  verificationId: string | undefined = undefined;
  held = false;
  readonly requestId: string;
  readonly request: Request;
  readonly clientAddress: string;
  readonly #logger: AppLogger;
  #log: AppLogger | undefined = undefined;

  constructor(requestId: string, request: Request, clientAddress: string, logger: AppLogger) {
    this.requestId = requestId;
    this.request = request;
    this.clientAddress = clientAddress;
    this.#logger = logger;
  }

  get log(): AppLogger {
    this.#log ??= this.#logger.child({ request_id: this.requestId });
    return this.#log;
  }
}

/** A new request's state; its logger is `logger`'s child bound to `requestId`, made when first used. */
export function newRequestState(
  requestId: string,
  request: Request,
  clientAddress: string,
  logger: AppLogger,
): RequestState {
  return new GatewayRequestState(requestId, request, clientAddress, logger);
}

/**
 * How a procedure's success response differs from a plain 200: its status
 * (201 for a creation; 503 for a "not ready" answer that still has a body) and
 * extra headers (RateLimit-*, Idempotent-Replayed).
 */
export type ResponseMeta = {
  status: 200 | 201 | 503;
  headers?: Readonly<Record<string, string>>;
};

const responses = new WeakMap<RequestState, ResponseMeta>();

/**
 * Sets the status and headers of this request's success response. The last
 * call wins. An error response ignores it: the gateway renders errors itself.
 */
export function respond(ctx: { state: RequestState }, meta: ResponseMeta): void {
  responses.set(ctx.state, meta);
}

/**
 * The gateway's side of respond(): the status and headers to answer a
 * successful call with, as a plain object (trpc-to-openapi drops a `Headers`).
 */
export function successResponseMeta(state: RequestState): {
  status: number;
  headers: Record<string, string>;
} {
  const meta = responses.get(state);
  return { status: meta?.status ?? 200, headers: { ...meta?.headers } };
}

type Level = "debug" | "info" | "warn" | "error";

/**
 * The request's logger for code that usually writes nothing for it (the
 * domain's send): its child logger (state.log) is made only when a line is
 * written.
 */
export function deferredLog(state: RequestState): Logger {
  const write = (level: Level) => (obj: object, msg?: string) =>
    msg === undefined ? state.log[level](obj) : state.log[level](obj, msg);
  return {
    debug: write("debug"),
    info: write("info"),
    warn: write("warn"),
    error: write("error"),
    child: (bindings) => state.log.child(bindings),
  };
}
