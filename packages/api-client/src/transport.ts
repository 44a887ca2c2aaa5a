// The machinery every call goes through: the request timeout, retries with
// exponential backoff and jitter (honouring Retry-After) where the API says a
// retry is safe, and the typed errors. A method of the client only says what
// it sends, which answers are successes, and how safe a retry of it is.
import {
  type ApiErrorCode,
  type RateLimit,
  SmsApiError,
  type SmsError,
  SmsNetworkError,
  SmsTimeoutError,
} from "./errors.ts";

/** What every answer carries besides its body. */
export type ResponseInfo = {
  status: number;
  /** The `X-Request-Id` of the answer: quote it when asking for help. */
  requestId: string | null;
  rateLimit: RateLimit | null;
};

/** One retry about to happen, as `onRetry` hears it. */
export type RetryEvent = {
  /** The attempt that failed (1 for the first request). */
  attempt: number;
  /** The wait before the next attempt, in ms. */
  delayMs: number;
  /** Why: the API's error, a timeout, or a network failure. */
  error: SmsError;
  method: string;
  path: string;
};

export type RetryOptions = {
  /** Requests per call at most, the first included (default 3; 1 turns retries off). */
  attempts?: number;
  /** The first backoff, doubled after each attempt (default 500 ms). */
  baseDelayMs?: number;
  /**
   * The longest wait between attempts (default 30000 ms). An answer whose
   * Retry-After asks for longer is not retried: its error is thrown.
   */
  maxDelayMs?: number;
  /** Called before each retry (logging, metrics). */
  onRetry?: (event: RetryEvent) => void;
};

export type TransportOptions = {
  baseUrl: string;
  apiKey?: string;
  fetch?: (input: Request) => Promise<Response>;
  /** Per request (each attempt), in ms; default 30000. */
  timeoutMs?: number;
  retry?: RetryOptions;
  /** How the client waits between attempts (tests record the waits instead). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** A number in [0, 1) for the jitter (default Math.random). */
  random?: () => number;
};

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_RETRY = { attempts: 3, baseDelayMs: 500, maxDelayMs: 30_000 } as const;

/**
 * How safe it is to send a call again:
 * - "idempotent": reads, and sends with an Idempotency-Key: a retry replays or
 *   sends once, so timeouts and network failures are retried too;
 * - "unsafe": a retry could do the work twice (a new test key): only answers
 *   that say nothing was done (429 rate_limited, 503) are retried.
 */
export type RetrySafety = "idempotent" | "unsafe";

export type CallSpec = {
  method: "GET" | "POST";
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** Send the API key (the message routes). */
  auth?: boolean;
  /** Statuses that are answers, not errors (a 304 has no body: `body` is null). */
  ok: readonly number[];
  safety: RetrySafety;
  signal?: AbortSignal | undefined;
};

export type CallResult<T> = ResponseInfo & { body: T; headers: Headers; attempts: number };

/** Resolves after `ms`, or rejects with the signal's reason once it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * `work`, or a rejection with the signal's reason once it aborts: the timeout (and the caller's abort) holds
 * even for a `fetch` that does not honour the request's signal.
 */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/**
 * Holds `request` until the attempt ends. Node's fetch (undici) links a Request's signal to the one it was made
 * with through weak references, so a garbage collection while a request is in flight could drop the link if
 * nothing else held the Request: the timeout's abort would then reach neither the request nor its socket (a
 * server that never answers would be waited on for ever). nodejs/node#55428.
 */
function keepUntilHere(_request: Request): void {}

function integerHeader(headers: Headers, name: string): number | null {
  const value = headers.get(name);
  return value !== null && /^\d+$/.test(value) ? Number(value) : null;
}

export function responseInfo(response: Response): ResponseInfo {
  const limit = integerHeader(response.headers, "RateLimit-Limit");
  const remaining = integerHeader(response.headers, "RateLimit-Remaining");
  const reset = integerHeader(response.headers, "RateLimit-Reset");
  return {
    status: response.status,
    requestId: response.headers.get("X-Request-Id"),
    rateLimit:
      limit !== null && remaining !== null && reset !== null
        ? { limit, remaining, resetSeconds: reset }
        : null,
  };
}

function apiError(response: Response, text: string, attempts: number): SmsApiError {
  const info = responseInfo(response);
  let envelope: { error?: { code?: unknown; message?: unknown; request_id?: unknown } } | undefined;
  try {
    envelope = JSON.parse(text) as typeof envelope;
  } catch {
    envelope = undefined;
  }
  const error = envelope?.error;
  const known = typeof error?.code === "string" && typeof error.message === "string";
  return new SmsApiError({
    code: known ? (error?.code as ApiErrorCode) : "unexpected_response",
    message: known
      ? (error?.message as string)
      : `Unexpected HTTP ${response.status} answer (not the API's error envelope).`,
    status: response.status,
    requestId: typeof error?.request_id === "string" ? error.request_id : info.requestId,
    retryAfter: integerHeader(response.headers, "Retry-After"),
    rateLimit: info.rateLimit,
    attempts,
  });
}

/** The API's answers that say a retry (with the same Idempotency-Key) is safe: nothing was done. */
const NOTHING_DONE = new Set([
  "rate_limited",
  "provider_unavailable",
  "too_many_connections",
  "request_timeout",
]);

/**
 * The statuses of a gateway in front of the service (a load balancer, HAProxy, nginx) that could not get or pass
 * on the service's answer. Such an answer is not the API's envelope (an HTML page: `unexpected_response`), and
 * the request may or may not have reached the service: a send retried with its Idempotency-Key replays or sends
 * once, so it is retried like a timeout.
 */
const GATEWAY_STATUSES = new Set([502, 503, 504]);

/**
 * Whether a failure may be retried: never a 402, a 409 (`idempotency_key_reused`: the key was used for another
 * request; `verification_not_pending`: the verification has ended), a daily_limit_reached or any other 4xx (the
 * request must change first); a 500 internal_error, a gateway's 502/503/504, a timeout or a network failure only
 * when the call is idempotent (it may have done part of the work).
 */
function retryable(error: SmsError, safety: RetrySafety): boolean {
  if (error instanceof SmsTimeoutError || error instanceof SmsNetworkError) return safety === "idempotent";
  if (NOTHING_DONE.has(error.code)) return true;
  if (error.code === "unexpected_response" && error.status !== null && GATEWAY_STATUSES.has(error.status))
    return safety === "idempotent";
  return error.code === "internal_error" && safety === "idempotent";
}

type Outcome = { response: Response; text: string } | { error: SmsError };

export function createTransport(options: TransportOptions) {
  const base = options.baseUrl.replace(/\/+$/, "");
  const send = options.fetch ?? ((request: Request) => fetch(request));
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const attempts = Math.max(1, Math.floor(options.retry?.attempts ?? DEFAULT_RETRY.attempts));
  const baseDelayMs = options.retry?.baseDelayMs ?? DEFAULT_RETRY.baseDelayMs;
  const maxDelayMs = options.retry?.maxDelayMs ?? DEFAULT_RETRY.maxDelayMs;
  const wait = options.sleep ?? sleep;
  const random = options.random ?? Math.random;

  /** One request and its whole answer, within the timeout. The caller's abort rejects with its reason. */
  async function attempt(spec: CallSpec, number: number): Promise<Outcome> {
    const headers: Record<string, string> = { Accept: "application/json", ...spec.headers };
    if (spec.auth && options.apiKey) headers.Authorization = `Bearer ${options.apiKey}`;
    if (spec.body !== undefined) headers["Content-Type"] = "application/json";
    if (spec.signal?.aborted) throw spec.signal.reason;
    const controller = new AbortController();
    const timedOut = new Error("timeout");
    const timer = setTimeout(() => controller.abort(timedOut), timeoutMs);
    const onAbort = () => controller.abort(spec.signal?.reason);
    spec.signal?.addEventListener("abort", onAbort, { once: true });
    const request = new Request(`${base}${spec.path}`, {
      method: spec.method,
      headers,
      signal: controller.signal,
      ...(spec.body !== undefined ? { body: JSON.stringify(spec.body) } : {}),
    });
    try {
      const response = await untilAborted(send(request), controller.signal);
      return { response, text: await untilAborted(response.text(), controller.signal) };
    } catch (cause) {
      if (spec.signal?.aborted) throw spec.signal.reason;
      const fields = {
        status: null,
        requestId: null,
        retryAfter: null,
        rateLimit: null,
        attempts: number,
        cause,
      };
      if (controller.signal.reason === timedOut) {
        return {
          error: new SmsTimeoutError({
            ...fields,
            code: "timeout",
            message: `No answer from ${spec.method} ${spec.path} within ${timeoutMs} ms.`,
          }),
        };
      }
      return {
        error: new SmsNetworkError({
          ...fields,
          code: "network_error",
          message: `${spec.method} ${spec.path} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
        }),
      };
    } finally {
      clearTimeout(timer);
      spec.signal?.removeEventListener("abort", onAbort);
      keepUntilHere(request);
    }
  }

  /** The wait before retry `number + 1`: Retry-After when the answer named one, else backoff with jitter. */
  function delayAfter(error: SmsError, number: number): number {
    if (error.retryAfter !== null) return error.retryAfter * 1000;
    const backoff = Math.min(maxDelayMs, baseDelayMs * 2 ** (number - 1));
    // "Equal jitter": at least half the backoff, so retries never bunch at zero.
    return Math.round(backoff / 2 + random() * (backoff / 2));
  }

  return {
    async call<T>(spec: CallSpec): Promise<CallResult<T>> {
      for (let number = 1; ; number++) {
        const outcome = await attempt(spec, number);
        let error: SmsError;
        if ("error" in outcome) {
          error = outcome.error;
        } else if (spec.ok.includes(outcome.response.status)) {
          let body: T;
          try {
            body = (outcome.response.status === 304 ? null : JSON.parse(outcome.text)) as T;
          } catch (cause) {
            throw new SmsApiError({
              code: "unexpected_response",
              message: `Unexpected HTTP ${outcome.response.status} answer (not JSON).`,
              status: outcome.response.status,
              requestId: outcome.response.headers.get("X-Request-Id"),
              retryAfter: null,
              rateLimit: null,
              attempts: number,
              cause,
            });
          }
          return {
            ...responseInfo(outcome.response),
            body,
            headers: outcome.response.headers,
            attempts: number,
          };
        } else {
          error = apiError(outcome.response, outcome.text, number);
        }
        const delayMs = delayAfter(error, number);
        if (number >= attempts || !retryable(error, spec.safety) || delayMs > maxDelayMs) throw error;
        options.retry?.onRetry?.({ attempt: number, delayMs, error, method: spec.method, path: spec.path });
        await wait(delayMs, spec.signal);
      }
    },
  };
}

export type Transport = ReturnType<typeof createTransport>;
