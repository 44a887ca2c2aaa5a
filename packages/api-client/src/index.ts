// @sms/api-client: a small typed client for the SMS API's public REST routes
// (POST /v1/test-keys, POST /v1/messages, GET /v1/messages/{id}, health), and
// the verifications extension (start, check, get).
// fetch-based, no runtime dependencies, no server code: its types are
// generated from the service's OpenAPI document (./generated/openapi.ts,
// checked against the live document by apps/api/test/contract/openapi-client.test.ts).
//
//   const sms = createSmsClient({ baseUrl: "https://sms.example.ge", apiKey: process.env.SMS_API_KEY });
//   const { message, idempotencyKey } = await sms.sendMessage({
//     to: "+995555123456", template: "verification_code", variables: { code: "482913" },
//   });
//   const final = await sms.waitForFinalStatus(message.id);
//
// Every call goes through transport.ts: a request timeout, retries with
// backoff where the API says a retry is safe (the same Idempotency-Key on
// every retry of a send; one is generated when none is given), and typed
// errors (errors.ts) with the API's own code, the status and the request id.
import { SmsApiError } from "./errors.ts";
import type { components, operations } from "./generated/openapi.ts";

import {
  type CallResult,
  createTransport,
  DEFAULT_TIMEOUT_MS,
  type ResponseInfo,
  sleep,
  type TransportOptions,
} from "./transport.ts";

export {
  type ApiErrorCode,
  type ClientErrorCode,
  isSmsApiError,
  type RateLimit,
  SmsApiError,
  SmsError,
  SmsNetworkError,
  SmsTimeoutError,
} from "./errors.ts";
export type { components, operations, paths } from "./generated/openapi.ts";
export {
  DEFAULT_RETRY,
  DEFAULT_TIMEOUT_MS,
  type ResponseInfo,
  type RetryEvent,
  type RetryOptions,
} from "./transport.ts";

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

/** What every result tells besides its body: the last answer's status, request id, rate limit, and the attempts made. */
export type CallInfo = ResponseInfo & {
  /** Requests made for this call (1 unless it was retried). */
  attempts: number;
};

export type SendMessageResult = CallInfo & {
  message: Message;
  /**
   * true: `200` with `Idempotent-Replayed: true`, the stored answer to an
   * earlier request with the same Idempotency-Key (nothing was sent again;
   * also what a retry after a lost answer gets); false: `201`, a new message.
   */
  replayed: boolean;
  /** The Idempotency-Key the message was sent with (generated when none was given): store it to retry later. */
  idempotencyKey: string;
};

export type CreateTestKeyResult = CallInfo & { testKey: TestKey };

export type StartVerificationResult = CallInfo & {
  verification: Verification;
  /** true: `200`, the first answer to this Idempotency-Key again (no second SMS, no new code). */
  replayed: boolean;
  /** The Idempotency-Key the verification was started with (generated when none was given). */
  idempotencyKey: string;
};

/** A check's `200` body: the verification it changed, whose `status` is `approved`, `pending` or `max_attempts_reached`. */
export type CheckedVerification = Schemas["CheckedVerification"];

/**
 * A check's outcomes, in the REST words (docs/api-behaviour.md, "A check's
 * outcome"): the `status` of the check's `200` (`approved`, `pending`,
 * `max_attempts_reached`), or the code of its `409`
 * (`verification_not_pending`). The same words as the Python and PHP clients
 * and MCP's `check_verification`.
 */
export const CHECK_OUTCOMES = [
  "approved",
  "pending",
  "max_attempts_reached",
  "verification_not_pending",
] as const satisfies readonly (CheckedVerification["status"] | CheckVerificationErrorCode)[];
export type CheckOutcome = (typeof CHECK_OUTCOMES)[number];

/**
 * A check's outcome. Let the user in only on `approved`. A timeout or any
 * thrown error is not an approval.
 */
export type CheckVerificationOutcome =
  /** `200`, `approved`: the right code (a verification approves once; a later check is `verification_not_pending`). */
  | { outcome: "approved"; verification: CheckedVerification }
  /** `200`, `pending`: a wrong code; `verification.attempts_remaining` is one fewer. */
  | { outcome: "pending"; verification: CheckedVerification }
  /** `200`, `max_attempts_reached`: the last wrong code; start a new verification. */
  | { outcome: "max_attempts_reached"; verification: CheckedVerification }
  /**
   * `409 verification_not_pending`: already approved, expired, canceled, out of attempts or its SMS failed, the
   * same answer whatever the code; `message` names the status. Start a new verification.
   */
  | { outcome: "verification_not_pending"; message: string; requestId: string | null };

export type SmsClientOptions = {
  /** The service's address, e.g. `https://sms.example.ge`. */
  baseUrl: string;
  /** `sk_test_…` or `sk_live_…`; only the message routes need one. */
  apiKey?: string;
  /** A fetch to use instead of the global one (proxies, tests). */
  fetch?: (input: Request) => Promise<Response>;
  /** How long one request may take, answer included, in ms (default 30000). A timed-out send is retried with the same key. */
  timeoutMs?: number;
  /**
   * Retries where the API says they are safe (429 rate_limited, 503, 500
   * internal_error, timeouts and network failures on reads and sends):
   * attempts (default 3), backoff (500 ms doubling, with jitter; Retry-After
   * when the answer names one) and an `onRetry` hook. `{ attempts: 1 }` turns
   * them off.
   */
  retry?: TransportOptions["retry"];
  /** How the client waits between attempts and polls (tests). */
  sleep?: TransportOptions["sleep"];
  /** The jitter's source of numbers in [0, 1) (tests). */
  random?: TransportOptions["random"];
};

export type CallOptions = { signal?: AbortSignal };

export type SendOptions = CallOptions & {
  /**
   * 1–200 characters, new for each logical message and the same for every
   * retry of it. Generated (a UUID v4) when omitted, and returned in the
   * result: store it if you may retry the message later yourself.
   */
  idempotencyKey?: string;
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

/**
 * The longest hold waitForFinalStatus asks the server for (`Prefer: wait`, an extension of the contract), in
 * seconds; never closer than 5 s to the request timeout.
 */
export const WAIT_SECONDS = 25;

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
  /**
   * `POST /v1/messages`: one templated SMS. Retried with the same
   * Idempotency-Key where safe; a `201` is never retried, whatever its status
   * (`unknown` may have been sent).
   */
  sendMessage(request: SendMessageRequest, options?: SendOptions): Promise<SendMessageResult>;
  /** `GET /v1/messages/{message_id}`: the message's current state. */
  getMessage(messageId: string, options?: CallOptions): Promise<Message>;
  /**
   * Resolves with the message once its status is final. The first read is
   * after about 2 s (spec 6); after it, where the server offers it (an
   * extension: `ETag`, `If-None-Match` with `Prefer: wait`), each read waits at
   * the server until the status changes and the next one follows at once.
   * Where the server does not say `Preference-Applied`, it polls as spec 6
   * recommends (the wait doubling, capped at 30 s). Abort with `signal` (it
   * rejects with the signal's reason).
   */
  waitForFinalStatus(messageId: string, options?: WaitOptions): Promise<Message>;
  /** The verifications extension: the service draws the code, sends it, and checks it. */
  verifications: {
    /** `POST /v1/verifications`: send a new code. A retry with the same key replays the first answer. */
    start(request: StartVerificationRequest, options?: SendOptions): Promise<StartVerificationResult>;
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

const info = <T>({ status, requestId, rateLimit, attempts }: CallResult<T>): CallInfo => ({
  status,
  requestId,
  rateLimit,
  attempts,
});

export function createSmsClient(options: SmsClientOptions): SmsClient {
  const transport = createTransport(options);
  const wait = options.sleep ?? sleep;
  const holdSeconds = Math.max(
    0,
    Math.min(WAIT_SECONDS, Math.floor((options.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000) - 5),
  );

  /** A read of the message; with `etag`, a conditional one held at the server (null: not changed). */
  async function readMessage(messageId: string, etag: string | null, signal: AbortSignal | undefined) {
    const result = await transport.call<Message | null>({
      method: "GET",
      path: `/v1/messages/${encodeURIComponent(messageId)}`,
      auth: true,
      headers:
        etag === null
          ? {}
          : { "If-None-Match": etag, ...(holdSeconds > 0 ? { Prefer: `wait=${holdSeconds}` } : {}) },
      ok: etag === null ? [200] : [200, 304],
      safety: "idempotent",
      signal,
    });
    return {
      message: result.status === 304 ? null : result.body,
      etag: result.headers.get("ETag"),
      held: result.headers.get("Preference-Applied") !== null,
    };
  }

  const client: SmsClient = {
    async createTestKey(callOptions = {}) {
      const result = await transport.call<TestKey>({
        method: "POST",
        path: "/v1/test-keys",
        ok: [201],
        safety: "unsafe",
        signal: callOptions.signal,
      });
      return { ...info(result), testKey: result.body };
    },

    async sendMessage(request, sendOptions = {}) {
      const idempotencyKey = sendOptions.idempotencyKey ?? crypto.randomUUID();
      const result = await transport.call<Message>({
        method: "POST",
        path: "/v1/messages",
        auth: true,
        headers: { "Idempotency-Key": idempotencyKey },
        body: request,
        ok: [200, 201],
        safety: "idempotent",
        signal: sendOptions.signal,
      });
      return {
        ...info(result),
        message: result.body,
        replayed: result.status === 200 && result.headers.get("Idempotent-Replayed") === "true",
        idempotencyKey,
      };
    },

    async getMessage(messageId, callOptions = {}) {
      const result = await transport.call<Message>({
        method: "GET",
        path: `/v1/messages/${encodeURIComponent(messageId)}`,
        auth: true,
        ok: [200],
        safety: "idempotent",
        signal: callOptions.signal,
      });
      return result.body;
    },

    async waitForFinalStatus(messageId, waitOptions = {}) {
      const { signal, onUpdate } = waitOptions;
      const delays = pollingDelays(waitOptions.initialDelayMs, waitOptions.maxDelayMs);
      let etag: string | null = null;
      let askedToHold = false;
      await wait(delays.next().value as number, signal);
      for (;;) {
        if (etag !== null) askedToHold = true;
        const read = await readMessage(messageId, etag, signal);
        if (read.message) {
          onUpdate?.(read.message);
          if (isFinalStatus(read.message.status)) return read.message;
        }
        etag = read.etag ?? etag;
        // Held (or the server's first ETag, not yet asked to hold): ask again at once. Else spec 6's schedule.
        if (etag !== null && (read.held || !askedToHold)) continue;
        await wait(delays.next().value as number, signal);
      }
    },

    verifications: {
      async start(request, startOptions = {}) {
        const idempotencyKey = startOptions.idempotencyKey ?? crypto.randomUUID();
        const result = await transport.call<Verification>({
          method: "POST",
          path: "/v1/verifications",
          auth: true,
          headers: { "Idempotency-Key": idempotencyKey },
          body: request,
          ok: [200, 201],
          safety: "idempotent",
          signal: startOptions.signal,
        });
        return {
          ...info(result),
          verification: result.body,
          replayed: result.status === 200 && result.headers.get("Idempotent-Replayed") === "true",
          idempotencyKey,
        };
      },

      async check(verificationId, code, callOptions = {}) {
        // "unsafe": a wrong code whose answer was lost would count twice if sent again.
        const result = await transport
          .call<CheckedVerification>({
            method: "POST",
            path: `/v1/verifications/${encodeURIComponent(verificationId)}/check`,
            auth: true,
            body: { code },
            ok: [200],
            safety: "unsafe",
            signal: callOptions.signal,
          })
          .catch((error: unknown) => {
            if (error instanceof SmsApiError && error.code === "verification_not_pending") return error;
            throw error;
          });
        if (result instanceof SmsApiError)
          return {
            outcome: "verification_not_pending",
            message: result.message,
            requestId: result.requestId,
          };
        const verification = result.body;
        // Typed as the three statuses; checked all the same (a server that breaks the contract is an error, not a no).
        if ((CHECK_OUTCOMES as readonly string[]).includes(verification.status))
          return { outcome: verification.status, verification };
        throw new SmsApiError({
          code: "unexpected_response",
          message: `Unexpected verification status ${verification.status} in a 200 check answer.`,
          status: result.status,
          requestId: result.requestId,
          retryAfter: null,
          rateLimit: result.rateLimit,
          attempts: result.attempts,
        });
      },

      async get(verificationId, callOptions = {}) {
        const result = await transport.call<Verification>({
          method: "GET",
          path: `/v1/verifications/${encodeURIComponent(verificationId)}`,
          auth: true,
          ok: [200],
          safety: "idempotent",
          signal: callOptions.signal,
        });
        return result.body;
      },
    },

    async liveness(callOptions = {}) {
      const result = await transport.call<Liveness>({
        method: "GET",
        path: "/healthz",
        ok: [200],
        safety: "idempotent",
        signal: callOptions.signal,
      });
      return result.body;
    },

    async readiness(callOptions = {}) {
      const result = await transport.call<Readiness>({
        method: "GET",
        path: "/readyz",
        ok: [200, 503],
        safety: "idempotent",
        signal: callOptions.signal,
      });
      return result.body;
    },
  };
  return client;
}
