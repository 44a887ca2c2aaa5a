// @sms/api-client: a small typed client for the SMS API's public REST routes
// (POST /v1/test-keys, POST /v1/messages, GET /v1/messages/{id}, health), and
// the verifications extension (start, check, get).
// fetch-based, no runtime dependencies, no server code: its types are
// generated from the service's OpenAPI document (./generated/openapi.ts,
// checked against the live document by apps/api/test/openapi-client.test.ts).
//
//   const sms = createSmsClient({ baseUrl: "https://sms.example.ge", apiKey: process.env.SMS_API_KEY });
//   const { message } = await sms.sendMessage(
//     { to: "+995555123456", template: "verification_code", variables: { code: "482913" } },
//     { idempotencyKey: crypto.randomUUID() },
//   );
//   const final = await sms.waitForFinalStatus(message.id);
//
// Failures are SmsApiError with the API's own code (`invalid_recipient`, …),
// the HTTP status and the request id.
import type { components, operations } from "./generated/openapi.ts";

export type { components, operations, paths } from "./generated/openapi.ts";

type Schemas = components["schemas"];

/** A message and its current state. */
export type Message = Schemas["Message"];
export type MessageStatus = Message["status"];
/** Why a message failed, was undeliverable, or has an unknown outcome. */
export type MessageError = Schemas["MessageError"];
/** The body of `POST /v1/messages`: one shape per template, with exactly its variables. */
export type SendMessageRequest = Schemas["SendMessageRequest"];
export type TemplateId = SendMessageRequest["template"];
export type Locale = Schemas["Locale"];
/** A new test key: `api_key` is shown only once. */
export type TestKey = Schemas["TestKey"];
export type Liveness = Schemas["Liveness"];
export type Readiness = Schemas["Readiness"];
/** Every stable error code the API answers with. */
export type ApiErrorCode = Schemas["Error"]["error"]["code"];

type ErrorBody<Op extends keyof operations> = {
  [S in keyof operations[Op]["responses"]]: operations[Op]["responses"][S] extends {
    content: { "application/json": { error: { code: infer C } } };
  }
    ? C
    : never;
}[keyof operations[Op]["responses"]];

/** A verification (the extension of issue 22): the service's one-time code, sent and checked; never the code. */
export type Verification = Schemas["Verification"];
export type VerificationStatus = Verification["status"];
/** The body of `POST /v1/verifications`. */
export type StartVerificationRequest = Schemas["StartVerificationRequest"];
/** The codes `POST /v1/verifications` can answer with. */
export type StartVerificationErrorCode = ErrorBody<"startVerification">;
/** The codes `POST /v1/verifications/{verification_id}/check` can answer with. */
export type CheckVerificationErrorCode = ErrorBody<"checkVerification">;
/** The codes `GET /v1/verifications/{verification_id}` can answer with. */
export type GetVerificationErrorCode = ErrorBody<"getVerification">;

/** The codes `POST /v1/messages` can answer with. */
export type SendMessageErrorCode = ErrorBody<"sendMessage">;
/** The codes `GET /v1/messages/{message_id}` can answer with. */
export type GetMessageErrorCode = ErrorBody<"getMessage">;
/** The codes `POST /v1/test-keys` can answer with. */
export type CreateTestKeyErrorCode = ErrorBody<"createTestKey">;

/** Statuses a message never leaves. */
export const FINAL_STATUSES = [
  "delivered",
  "undeliverable",
  "failed",
  "unknown",
] as const satisfies readonly MessageStatus[];

export function isFinalStatus(status: MessageStatus): boolean {
  return (FINAL_STATUSES as readonly string[]).includes(status);
}

/** The `RateLimit-*` headers of an answer: the limit nearest to exhaustion. */
export type RateLimit = {
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
};

/** What every answer carries besides its body. */
export type ResponseInfo = {
  status: number;
  /** The `X-Request-Id` of the answer: quote it when asking for help. */
  requestId: string | null;
  rateLimit: RateLimit | null;
};

export type SendMessageResult = ResponseInfo & {
  message: Message;
  /**
   * true: `200` with `Idempotent-Replayed: true`, the stored answer to an
   * earlier request with the same Idempotency-Key (nothing was sent again);
   * false: `201`, a new message.
   */
  replayed: boolean;
};

export type CreateTestKeyResult = ResponseInfo & { testKey: TestKey };

export type StartVerificationResult = ResponseInfo & {
  verification: Verification;
  /** true: `200`, the first answer to this Idempotency-Key again (no second SMS, no new code). */
  replayed: boolean;
};

/**
 * A check's outcome. Let the user in only on `approved`. A timeout or any
 * thrown error is not an approval.
 */
export type CheckVerificationOutcome =
  /** `200 approved`: the right code (again, if it was checked before). */
  | { outcome: "approved"; verification: Verification }
  /** `200 pending`: a wrong code; `verification.attempts_remaining` is one fewer. */
  | { outcome: "wrong_code"; verification: Verification }
  /** `200 max_attempts_reached`: the last wrong code; start a new verification. */
  | { outcome: "max_attempts_reached"; verification: Verification }
  /** `409 verification_not_pending`: expired, canceled, out of attempts or its SMS failed; `message` names the status. */
  | { outcome: "not_pending"; message: string; requestId: string | null };

/** An error answer of the API (`{"error":{"code","message","request_id"}}`), or an answer that is not the API's. */
export class SmsApiError extends Error {
  override readonly name = "SmsApiError";
  /**
   * The API's stable code; `unexpected_response` when the answer is not the
   * API's error envelope (a proxy's page, say).
   */
  readonly code: ApiErrorCode | "unexpected_response";
  readonly status: number;
  readonly requestId: string | null;
  /** `Retry-After` in seconds, when the answer names one (429, and some 5xx). */
  readonly retryAfterSeconds: number | null;
  readonly rateLimit: RateLimit | null;

  constructor(options: {
    code: ApiErrorCode | "unexpected_response";
    message: string;
    status: number;
    requestId: string | null;
    retryAfterSeconds: number | null;
    rateLimit: RateLimit | null;
  }) {
    super(options.message);
    this.code = options.code;
    this.status = options.status;
    this.requestId = options.requestId;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.rateLimit = options.rateLimit;
  }
}

export function isSmsApiError(error: unknown): error is SmsApiError {
  return error instanceof SmsApiError;
}

export type SmsClientOptions = {
  /** The service's address, e.g. `https://sms.example.ge`. */
  baseUrl: string;
  /** `sk_test_…` or `sk_live_…`; only the message routes need one. */
  apiKey?: string;
  /** A fetch to use instead of the global one (proxies, tests). */
  fetch?: (input: Request) => Promise<Response>;
};

export type CallOptions = { signal?: AbortSignal };

export type SendOptions = CallOptions & {
  /**
   * Required: 1–200 characters, new for each logical message (a UUID is
   * ideal) and the same for every retry of that message.
   */
  idempotencyKey: string;
};

/** Spec 6: read first after about 2 s, double the wait, cap it at 30 s. */
export const POLLING = { initialDelayMs: 2000, factor: 2, maxDelayMs: 30_000 } as const;

export type WaitOptions = CallOptions & {
  /** First wait (default 2000 ms). */
  initialDelayMs?: number;
  /** Longest wait between reads (default 30000 ms). */
  maxDelayMs?: number;
  /** Called with every state read, final or not. */
  onUpdate?: (message: Message) => void;
};

function integerHeader(headers: Headers, name: string): number | null {
  const value = headers.get(name);
  return value !== null && /^\d+$/.test(value) ? Number(value) : null;
}

function responseInfo(response: Response): ResponseInfo {
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

async function apiError(response: Response): Promise<SmsApiError> {
  const info = responseInfo(response);
  const text = await response.text().catch(() => "");
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
    retryAfterSeconds: integerHeader(response.headers, "Retry-After"),
    rateLimit: info.rateLimit,
  });
}

/** Resolves after `ms`, or rejects with the signal's reason once it aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
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

/** The waits between reads the polling helper uses: 2, 4, 8, 16, 30, 30, … s by default. */
export function* pollingDelays(
  initialDelayMs: number = POLLING.initialDelayMs,
  maxDelayMs: number = POLLING.maxDelayMs,
) {
  let delay = Math.min(initialDelayMs, maxDelayMs);
  for (;;) {
    yield delay;
    delay = Math.min(delay * POLLING.factor, maxDelayMs);
  }
}

export type SmsClient = {
  /** `POST /v1/test-keys`: a new test key for a new project; no API key needed. */
  createTestKey(options?: CallOptions): Promise<CreateTestKeyResult>;
  /** `POST /v1/messages`: one templated SMS. A retry with the same key replays the first answer. */
  sendMessage(request: SendMessageRequest, options: SendOptions): Promise<SendMessageResult>;
  /** `GET /v1/messages/{message_id}`: the message's current state. */
  getMessage(messageId: string, options?: CallOptions): Promise<Message>;
  /**
   * Polls `getMessage` as spec 6 recommends (first read after about 2 s, the
   * wait doubling, capped at 30 s) and resolves with the message once its
   * status is final. Abort with `signal` (it rejects with the signal's reason).
   */
  waitForFinalStatus(messageId: string, options?: WaitOptions): Promise<Message>;
  /** The verifications extension: the service draws the code, sends it, and checks it. */
  verifications: {
    /** `POST /v1/verifications`: send a new code. A retry with the same key replays the first answer. */
    start(request: StartVerificationRequest, options: SendOptions): Promise<StartVerificationResult>;
    /** `POST /v1/verifications/{verification_id}/check`: what the user typed; never costs credits. */
    check(verificationId: string, code: string, options?: CallOptions): Promise<CheckVerificationOutcome>;
    /** `GET /v1/verifications/{verification_id}`: the current state. */
    get(verificationId: string, options?: CallOptions): Promise<Verification>;
  };
  /** `GET /healthz`. */
  liveness(options?: CallOptions): Promise<Liveness>;
  /** `GET /readyz`: `not_ready` (503) is an answer, not an error. */
  readiness(options?: CallOptions): Promise<Readiness>;
};

export function createSmsClient(options: SmsClientOptions): SmsClient {
  const base = options.baseUrl.replace(/\/+$/, "");
  const send = options.fetch ?? ((request: Request) => fetch(request));

  async function call(
    method: "GET" | "POST",
    path: string,
    init: { headers?: Record<string, string>; body?: unknown; signal?: AbortSignal; auth?: boolean } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { Accept: "application/json", ...init.headers };
    if (init.auth && options.apiKey) headers.Authorization = `Bearer ${options.apiKey}`;
    if (init.body !== undefined) headers["Content-Type"] = "application/json";
    return send(
      new Request(`${base}${path}`, {
        method,
        headers,
        ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
        ...(init.signal ? { signal: init.signal } : {}),
      }),
    );
  }

  async function json<T>(response: Response, ok: readonly number[]): Promise<T> {
    if (!ok.includes(response.status)) throw await apiError(response);
    return (await response.json()) as T;
  }

  const client: SmsClient = {
    async createTestKey(callOptions = {}) {
      const response = await call("POST", "/v1/test-keys", { signal: callOptions.signal });
      const testKey = await json<TestKey>(response, [201]);
      return { ...responseInfo(response), testKey };
    },

    async sendMessage(request, sendOptions) {
      const response = await call("POST", "/v1/messages", {
        auth: true,
        headers: { "Idempotency-Key": sendOptions.idempotencyKey },
        body: request,
        signal: sendOptions.signal,
      });
      const message = await json<Message>(response, [200, 201]);
      return {
        ...responseInfo(response),
        message,
        replayed: response.status === 200 && response.headers.get("Idempotent-Replayed") === "true",
      };
    },

    async getMessage(messageId, callOptions = {}) {
      const response = await call("GET", `/v1/messages/${encodeURIComponent(messageId)}`, {
        auth: true,
        signal: callOptions.signal,
      });
      return json<Message>(response, [200]);
    },

    async waitForFinalStatus(messageId, waitOptions = {}) {
      const { signal, onUpdate } = waitOptions;
      for (const delay of pollingDelays(waitOptions.initialDelayMs, waitOptions.maxDelayMs)) {
        await sleep(delay, signal);
        const message = await client.getMessage(messageId, { signal });
        onUpdate?.(message);
        if (isFinalStatus(message.status)) return message;
      }
      throw new Error("unreachable");
    },

    verifications: {
      async start(request, startOptions) {
        const response = await call("POST", "/v1/verifications", {
          auth: true,
          headers: { "Idempotency-Key": startOptions.idempotencyKey },
          body: request,
          signal: startOptions.signal,
        });
        const verification = await json<Verification>(response, [200, 201]);
        return {
          ...responseInfo(response),
          verification,
          replayed: response.status === 200 && response.headers.get("Idempotent-Replayed") === "true",
        };
      },

      async check(verificationId, code, callOptions = {}) {
        const response = await call("POST", `/v1/verifications/${encodeURIComponent(verificationId)}/check`, {
          auth: true,
          body: { code },
          signal: callOptions.signal,
        });
        if (response.status === 409) {
          const error = await apiError(response);
          if (error.code === "verification_not_pending")
            return { outcome: "not_pending", message: error.message, requestId: error.requestId };
          throw error;
        }
        const verification = await json<Verification>(response, [200]);
        if (verification.status === "approved") return { outcome: "approved", verification };
        if (verification.status === "max_attempts_reached")
          return { outcome: "max_attempts_reached", verification };
        if (verification.status === "pending") return { outcome: "wrong_code", verification };
        throw new SmsApiError({
          code: "unexpected_response",
          message: `Unexpected verification status ${verification.status} in a 200 check answer.`,
          ...responseInfo(response),
          retryAfterSeconds: null,
        });
      },

      async get(verificationId, callOptions = {}) {
        const response = await call("GET", `/v1/verifications/${encodeURIComponent(verificationId)}`, {
          auth: true,
          signal: callOptions.signal,
        });
        return json<Verification>(response, [200]);
      },
    },

    async liveness(callOptions = {}) {
      return json<Liveness>(await call("GET", "/healthz", { signal: callOptions.signal }), [200]);
    },

    async readiness(callOptions = {}) {
      return json<Readiness>(await call("GET", "/readyz", { signal: callOptions.signal }), [200, 503]);
    },
  };
  return client;
}
