// The client on its own, with a scripted fetch and fake timers: the requests
// it makes, how it reads answers and errors, and the polling schedule of
// spec 6 (2, 4, 8, 16, 30, 30 … s, stop at a final status, abortable).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  createSmsClient,
  isSmsApiError,
  type Message,
  pollingDelays,
  type RetryEvent,
  SmsApiError,
  type SmsClient,
  SmsError,
  SmsNetworkError,
  SmsTimeoutError,
  type Verification,
} from "../src/index.ts";

const message = (status: Message["status"]): Message => ({
  id: "msg_01m81b5h8058wzg6wcqtsa05cx",
  object: "message",
  to: "+9955••••••56",
  status,
  segments: 1,
  error: null,
  created_at: "2026-11-22T10:00:00Z",
  updated_at: "2026-11-22T10:00:00Z",
});

function scripted(answers: Array<() => Response>) {
  const requests: Request[] = [];
  const fetch = async (request: Request) => {
    requests.push(request);
    const next = answers.shift();
    if (!next) throw new Error("no more answers");
    return next();
  };
  return { requests, fetch };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json", "X-Request-Id": "req_1", ...headers },
  });

describe("requests and answers", () => {
  it("sends the key, the Idempotency-Key and the JSON body, and reads 201, rate limits and a replay", async () => {
    const { requests, fetch } = scripted([
      () =>
        json(201, message("submitted"), {
          "RateLimit-Limit": "100",
          "RateLimit-Remaining": "99",
          "RateLimit-Reset": "42",
        }),
      () => json(200, message("submitted"), { "Idempotent-Replayed": "true" }),
    ]);
    const sms = createSmsClient({ baseUrl: "https://sms.example.ge/", apiKey: "sk_test_x", fetch });
    const body = { to: "+995555123456", template: "verification_code", variables: { code: "4821" } } as const;
    const first = await sms.sendMessage(body, { idempotencyKey: "k-1" });
    expect(first).toMatchObject({
      status: 201,
      replayed: false,
      requestId: "req_1",
      rateLimit: { limit: 100, remaining: 99, resetSeconds: 42 },
    });
    const again = await sms.sendMessage(body, { idempotencyKey: "k-1" });
    expect(again).toMatchObject({ status: 200, replayed: true, rateLimit: null });
    const request = requests[0] as Request;
    expect(request.url).toBe("https://sms.example.ge/v1/messages");
    expect(request.method).toBe("POST");
    expect(request.headers.get("authorization")).toBe("Bearer sk_test_x");
    expect(request.headers.get("idempotency-key")).toBe("k-1");
    expect(request.headers.get("content-type")).toBe("application/json");
    expect(await request.json()).toEqual(body);
  });

  it("throws SmsApiError with the API's code, message, status, request id and Retry-After", async () => {
    const { fetch } = scripted([
      () =>
        json(
          429,
          { error: { code: "rate_limited", message: "Too many.", request_id: "req_9" } },
          {
            "Retry-After": "17",
            "RateLimit-Limit": "5",
            "RateLimit-Remaining": "0",
            "RateLimit-Reset": "17",
          },
        ),
      () =>
        new Response("<html>Bad gateway</html>", { status: 502, headers: { "Content-Type": "text/html" } }),
    ]);
    const sms = createSmsClient({ baseUrl: "https://sms.example.ge", fetch, retry: { attempts: 1 } });
    const limited = await sms.createTestKey().catch((error: unknown) => error);
    expect(isSmsApiError(limited)).toBe(true);
    expect(limited).toMatchObject({
      name: "SmsApiError",
      code: "rate_limited",
      message: "Too many.",
      status: 429,
      requestId: "req_9",
      retryAfterSeconds: 17,
      retryAfter: 17,
      rateLimit: { limit: 5, remaining: 0, resetSeconds: 17 },
      attempts: 1,
    });
    const proxy = await sms.liveness().catch((error: unknown) => error);
    expect(proxy).toBeInstanceOf(SmsApiError);
    expect(proxy).toMatchObject({ code: "unexpected_response", status: 502, requestId: null });
  });

  it("reads a not-ready 503 as an answer", async () => {
    const { fetch } = scripted([() => json(503, { status: "not_ready", database: "unreachable" })]);
    const sms = createSmsClient({ baseUrl: "https://sms.example.ge", fetch });
    expect(await sms.readiness()).toEqual({ status: "not_ready", database: "unreachable" });
  });

  it("escapes the message id into the path", async () => {
    const { requests, fetch } = scripted([() => json(200, message("delivered"))]);
    await createSmsClient({ baseUrl: "https://sms.example.ge", apiKey: "k", fetch }).getMessage("a/b?c");
    expect(requests[0]?.url).toBe("https://sms.example.ge/v1/messages/a%2Fb%3Fc");
  });
});

const verification = (status: Verification["status"], attempts = 5): Verification => ({
  id: "vrf_01m81b5h80a4k2x9wq7zt3nd6e",
  object: "verification",
  to: "+9955••••••56",
  status,
  template: "verification_code",
  locale: "ka",
  attempts_remaining: attempts,
  expires_at: "2026-11-22T10:10:00Z",
  message_id: "msg_01m81b5h8058wzg6wcqtsa05cx",
  created_at: "2026-11-22T10:00:00Z",
  updated_at: "2026-11-22T10:00:00Z",
});

describe("verifications (the extension)", () => {
  it("starts with the Idempotency-Key and reads 201 and a replay", async () => {
    const { requests, fetch } = scripted([
      () =>
        json(201, verification("pending"), {
          "RateLimit-Limit": "100",
          "RateLimit-Remaining": "99",
          "RateLimit-Reset": "7",
        }),
      () => json(200, verification("pending"), { "Idempotent-Replayed": "true" }),
    ]);
    const sms = createSmsClient({ baseUrl: "https://sms.example.ge", apiKey: "sk_test_x", fetch });
    const first = await sms.verifications.start(
      { to: "+995555123456", code_length: 6 },
      { idempotencyKey: "v-1" },
    );
    expect(first).toMatchObject({ status: 201, replayed: false, verification: { status: "pending" } });
    const again = await sms.verifications.start(
      { to: "+995555123456", code_length: 6 },
      { idempotencyKey: "v-1" },
    );
    expect(again.replayed).toBe(true);
    const request = requests[0] as Request;
    expect(request.url).toBe("https://sms.example.ge/v1/verifications");
    expect(request.headers.get("idempotency-key")).toBe("v-1");
    expect(await request.json()).toEqual({ to: "+995555123456", code_length: 6 });
  });

  it("checks: approved, a wrong code, the last wrong code and not pending are typed outcomes; 404 throws", async () => {
    const { requests, fetch } = scripted([
      () => json(200, verification("approved")),
      () => json(200, verification("pending", 4)),
      () => json(200, verification("max_attempts_reached", 0)),
      () =>
        json(409, {
          error: {
            code: "verification_not_pending",
            message:
              "This verification is expired, so it can no longer be checked. Start a new verification.",
            request_id: "req_9",
          },
        }),
      () =>
        json(404, {
          error: {
            code: "verification_not_found",
            message: "No verification with this id exists in this project.",
            request_id: "req_8",
          },
        }),
    ]);
    const sms = createSmsClient({ baseUrl: "https://sms.example.ge", apiKey: "sk_test_x", fetch });
    const id = "vrf_01m81b5h80a4k2x9wq7zt3nd6e";
    expect((await sms.verifications.check(id, "000000")).outcome).toBe("approved");
    const wrong = await sms.verifications.check(id, "1");
    expect(wrong).toMatchObject({ outcome: "pending", verification: { attempts_remaining: 4 } });
    expect((await sms.verifications.check(id, "1")).outcome).toBe("max_attempts_reached");
    expect(await sms.verifications.check(id, "1")).toEqual({
      outcome: "verification_not_pending",
      message: "This verification is expired, so it can no longer be checked. Start a new verification.",
      requestId: "req_9",
    });
    const missing = await sms.verifications.check("vrf/../x", "1").catch((error: unknown) => error);
    expect(isSmsApiError(missing) && missing.code).toBe("verification_not_found");
    expect((requests[0] as Request).url).toBe(`https://sms.example.ge/v1/verifications/${id}/check`);
    expect(await (requests[0] as Request).json()).toEqual({ code: "000000" });
    expect((requests[4] as Request).url).toBe("https://sms.example.ge/v1/verifications/vrf%2F..%2Fx/check");
  });

  it("reads a verification", async () => {
    const { requests, fetch } = scripted([() => json(200, verification("canceled"))]);
    const sms = createSmsClient({ baseUrl: "https://sms.example.ge", apiKey: "sk_test_x", fetch });
    expect((await sms.verifications.get("vrf_01m81b5h80a4k2x9wq7zt3nd6e")).status).toBe("canceled");
    expect((requests[0] as Request).method).toBe("GET");
  });
});

describe("waitForFinalStatus (spec 6)", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("waits 2 s, then doubles, capped at 30 s", () => {
    const delays = pollingDelays();
    expect(Array.from({ length: 8 }, () => delays.next().value)).toEqual([
      2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000, 30_000,
    ]);
  });

  it("reads at 2, 6, 14, 30, 60 s and stops at the first final status", async () => {
    const readAt: number[] = [];
    const statuses: Message["status"][] = ["queued", "submitted", "submitted", "submitted", "delivered"];
    const start = Date.now();
    const fetch = async () => {
      readAt.push(Date.now() - start);
      return json(200, message(statuses.shift() ?? "delivered"));
    };
    const sms = createSmsClient({ baseUrl: "https://sms.example.ge", apiKey: "k", fetch });
    const seen: string[] = [];
    const done = sms.waitForFinalStatus("msg_1", { onUpdate: (m) => seen.push(m.status) });
    await vi.advanceTimersByTimeAsync(120_000);
    expect((await done).status).toBe("delivered");
    expect(readAt).toEqual([2000, 6000, 14_000, 30_000, 60_000]);
    expect(seen).toEqual(["queued", "submitted", "submitted", "submitted", "delivered"]);
  });

  it("where the server holds reads (ETag, Prefer: wait): the first read at 2 s, then each held read at once", async () => {
    const requests: Array<{ at: number; headers: Headers }> = [];
    const start = Date.now();
    const tagged = (status: Message["status"], tag: string) =>
      json(200, message(status), { ETag: tag, "Preference-Applied": "wait=25" });
    const answers: Array<() => Response | Promise<Response>> = [
      () => json(200, message("submitted"), { ETag: '"a"' }),
      // Held 25 s, unchanged.
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 25_000));
        return new Response(null, { status: 304, headers: { ETag: '"a"', "Preference-Applied": "wait=25" } });
      },
      // Held 10 s, then the change.
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 10_000));
        return tagged("delivered", '"b"');
      },
    ];
    const fetch = async (request: Request) => {
      requests.push({ at: Date.now() - start, headers: request.headers });
      const next = answers.shift();
      if (!next) throw new Error("no more answers");
      return next();
    };
    const sms = createSmsClient({ baseUrl: "https://sms.example.ge", apiKey: "k", fetch });
    const seen: string[] = [];
    const done = sms.waitForFinalStatus("msg_1", { onUpdate: (m) => seen.push(m.status) });
    await vi.advanceTimersByTimeAsync(60_000);
    expect((await done).status).toBe("delivered");
    expect(requests.map((r) => r.at)).toEqual([2000, 2000, 27_000]);
    expect(requests.map((r) => [r.headers.get("if-none-match"), r.headers.get("prefer")])).toEqual([
      [null, null],
      ['"a"', "wait=25"],
      ['"a"', "wait=25"],
    ]);
    expect(seen).toEqual(["submitted", "delivered"]);
  });

  it("a server that answers at once without Preference-Applied: spec 6's schedule, with If-None-Match", async () => {
    const readAt: number[] = [];
    const start = Date.now();
    const answers = [
      () => json(200, message("submitted"), { ETag: '"a"' }),
      // The instance's holds are taken: answered at once, not held.
      () => new Response(null, { status: 304, headers: { ETag: '"a"' } }),
      () => new Response(null, { status: 304, headers: { ETag: '"a"' } }),
      () => json(200, message("delivered"), { ETag: '"b"' }),
    ];
    const fetch = async () => {
      readAt.push(Date.now() - start);
      const next = answers.shift();
      if (!next) throw new Error("no more answers");
      return next();
    };
    const sms = createSmsClient({ baseUrl: "https://sms.example.ge", apiKey: "k", fetch });
    const done = sms.waitForFinalStatus("msg_1");
    await vi.advanceTimersByTimeAsync(60_000);
    expect((await done).status).toBe("delivered");
    // 2 s; at once (the first ETag); then 4 s and 8 s more, as spec 6 says.
    expect(readAt).toEqual([2000, 2000, 6000, 14_000]);
  });

  it("asks for a hold no longer than its timeout allows (5 s short of it), and none below 6 s", async () => {
    for (const [timeoutMs, prefer] of [
      [30_000, "wait=25"],
      [12_000, "wait=7"],
      [5000, null],
    ] as const) {
      const requests: Request[] = [];
      const answers = [
        () => json(200, message("submitted"), { ETag: '"a"' }),
        () => json(200, message("delivered"), { ETag: '"b"' }),
      ];
      const fetch = async (request: Request) => {
        requests.push(request);
        return (answers.shift() as () => Response)();
      };
      const sms = createSmsClient({ baseUrl: "https://sms.example.ge", apiKey: "k", fetch, timeoutMs });
      const done = sms.waitForFinalStatus("msg_1");
      await vi.advanceTimersByTimeAsync(10_000);
      await done;
      expect(requests[1]?.headers.get("prefer") ?? null, String(timeoutMs)).toBe(prefer);
      expect(requests[1]?.headers.get("if-none-match")).toBe('"a"');
    }
  });

  it("stops when its signal aborts, with the signal's reason", async () => {
    let reads = 0;
    const fetch = async () => {
      reads++;
      return json(200, message("submitted"));
    };
    const sms = createSmsClient({ baseUrl: "https://sms.example.ge", apiKey: "k", fetch });
    const controller = new AbortController();
    const done = sms
      .waitForFinalStatus("msg_1", { signal: controller.signal })
      .catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(7000);
    expect(reads).toBe(2);
    controller.abort(new Error("user left"));
    expect(await done).toEqual(new Error("user left"));
    await vi.advanceTimersByTimeAsync(120_000);
    expect(reads).toBe(2);
  });
});

describe("retries, timeouts and the Idempotency-Key", () => {
  const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  const body = { to: "+995555123456", template: "verification_code", variables: { code: "4821" } } as const;
  const envelope = (status: number, code: string, headers: Record<string, string> = {}) =>
    json(status, { error: { code, message: `${code}.`, request_id: `req_${code}` } }, headers);

  /** A client over scripted answers that records its waits and retries instead of sleeping. */
  function client(
    answers: Array<() => Response | Promise<Response>>,
    options: { attempts?: number; random?: number } = {},
  ) {
    const requests: Request[] = [];
    const waits: number[] = [];
    const retries: RetryEvent[] = [];
    const sms = createSmsClient({
      baseUrl: "https://sms.example.ge",
      apiKey: "sk_test_x",
      fetch: async (request) => {
        requests.push(request);
        const next = answers.shift();
        if (!next) throw new Error("no more answers");
        return next();
      },
      retry: { attempts: options.attempts ?? 3, onRetry: (event) => retries.push(event) },
      sleep: async (ms) => {
        waits.push(ms);
      },
      random: () => options.random ?? 0,
    });
    const keys = () => requests.map((request) => request.headers.get("idempotency-key"));
    return { sms, requests, waits, retries, keys };
  }

  it("503 provider_unavailable every time: gives up after the attempts, waiting Retry-After, one key throughout", async () => {
    const unavailable = () => envelope(503, "provider_unavailable", { "Retry-After": "5" });
    const { sms, requests, waits, retries, keys } = client([
      unavailable,
      unavailable,
      unavailable,
      unavailable,
    ]);
    const error = await sms.sendMessage(body).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SmsApiError);
    expect(error).toMatchObject({ code: "provider_unavailable", status: 503, retryAfter: 5, attempts: 3 });
    expect(requests).toHaveLength(3);
    expect(waits).toEqual([5000, 5000]);
    expect(retries.map((event) => [event.attempt, event.delayMs, event.error.code])).toEqual([
      [1, 5000, "provider_unavailable"],
      [2, 5000, "provider_unavailable"],
    ]);
    const [key] = keys();
    expect(key).toMatch(UUID_V4);
    expect(keys()).toEqual([key, key, key]);
  });

  it("429 rate_limited, then 201: one result with the generated key, the attempts and the last answer's facts", async () => {
    const { sms, waits, keys } = client([
      () => envelope(429, "rate_limited", { "Retry-After": "2" }),
      () => json(201, message("submitted"), { "X-Request-Id": "req_2" }),
    ]);
    const result = await sms.sendMessage(body);
    expect(result).toMatchObject({ status: 201, attempts: 2, replayed: false, requestId: "req_2" });
    expect(result.idempotencyKey).toMatch(UUID_V4);
    expect(keys()).toEqual([result.idempotencyKey, result.idempotencyKey]);
    expect(waits).toEqual([2000]);
  });

  it("500 internal_error without Retry-After: exponential backoff with jitter (half to all of 500 ms, then 1 s)", async () => {
    const failing = () => envelope(500, "internal_error");
    const low = client([failing, failing, failing]);
    await low.sms.sendMessage(body, { idempotencyKey: "mine" }).catch(() => undefined);
    expect(low.waits).toEqual([250, 500]);
    expect(low.keys()).toEqual(["mine", "mine", "mine"]);
    const high = client([failing, failing, failing], { random: 0.999 });
    await high.sms.sendMessage(body).catch(() => undefined);
    expect(high.waits).toEqual([500, 1000]);
  });

  it("never retries a 201 unknown, daily_limit_reached, 402, 409 or a 4xx validation error", async () => {
    const unknown = client([
      () => json(201, { ...message("unknown"), error: { code: "provider_unavailable", message: "?" } }),
    ]);
    expect((await unknown.sms.sendMessage(body)).message.status).toBe("unknown");
    expect(unknown.requests).toHaveLength(1);
    for (const [status, code] of [
      [429, "daily_limit_reached"],
      [402, "insufficient_credits"],
      [409, "idempotency_key_reused"],
      [409, "verification_not_pending"],
      [400, "invalid_recipient"],
      [401, "invalid_api_key"],
    ] as const) {
      const refused = client([
        () => envelope(status, code, { "Retry-After": "1" }),
        () => json(201, message("submitted")),
      ]);
      const error = await refused.sms.sendMessage(body).catch((e: unknown) => e);
      expect(error).toMatchObject({ code, status, attempts: 1 });
      expect(refused.requests).toHaveLength(1);
      expect(refused.waits).toEqual([]);
    }
  });

  it("a gateway's 502/503/504 page (not the envelope): a send and a read are retried with the same key; a new test key and a check are not", async () => {
    const page = (status: number) => () =>
      new Response(`<html><body><h1>${status}</h1></body></html>`, {
        status,
        headers: { "Content-Type": "text/html" },
      });
    for (const status of [502, 503, 504]) {
      const send = client([page(status), () => json(201, message("submitted"))]);
      const sent = await send.sms.sendMessage(body);
      expect(sent).toMatchObject({ status: 201, attempts: 2 });
      expect(send.keys()).toEqual([sent.idempotencyKey, sent.idempotencyKey]);
      expect(send.retries.map((event) => [event.error.code, event.error.status])).toEqual([
        ["unexpected_response", status],
      ]);
      const read = client([page(status), () => json(200, message("delivered"))]);
      expect((await read.sms.getMessage("msg_1")).status).toBe("delivered");
      for (const call of [
        (sms: SmsClient) => sms.createTestKey(),
        (sms: SmsClient) => sms.verifications.check("vrf_1", "000000"),
      ]) {
        const unsafe = client([page(status), () => json(201, message("submitted"))]);
        await expect(call(unsafe.sms)).rejects.toMatchObject({
          code: "unexpected_response",
          status,
          attempts: 1,
        });
        expect(unsafe.requests).toHaveLength(1);
      }
    }
    // Another status of a foreign page is not retried, even for a send.
    const foreign500 = client([page(500), () => json(201, message("submitted"))]);
    await expect(foreign500.sms.sendMessage(body)).rejects.toMatchObject({
      code: "unexpected_response",
      status: 500,
    });
    expect(foreign500.requests).toHaveLength(1);
  });

  it("a Retry-After longer than maxDelayMs is not waited for: the error is thrown at once", async () => {
    const { sms, requests } = client([() => envelope(429, "rate_limited", { "Retry-After": "3600" })]);
    expect(await sms.sendMessage(body).catch((e: unknown) => e)).toMatchObject({
      code: "rate_limited",
      retryAfter: 3600,
    });
    expect(requests).toHaveLength(1);
  });

  it("network failures: a send and a read are retried, a new test key is not (it may have been made)", async () => {
    const refused = () => Promise.reject(new TypeError("fetch failed"));
    const send = client([refused, () => json(200, message("submitted"), { "Idempotent-Replayed": "true" })]);
    const result = await send.sms.sendMessage(body);
    expect(result).toMatchObject({ replayed: true, attempts: 2 });
    const read = client([refused, () => json(200, message("delivered"))]);
    expect((await read.sms.getMessage("msg_1")).status).toBe("delivered");
    const testKey = client([refused, () => json(201, {})]);
    const error = await testKey.sms.createTestKey().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SmsNetworkError);
    expect(error).toMatchObject({ code: "network_error", status: null, attempts: 1 });
    expect((error as Error).cause).toEqual(new TypeError("fetch failed"));
    expect(testKey.requests).toHaveLength(1);
  });

  it("a request that never answers times out (timeoutMs) and the send is retried with the same key", async () => {
    const requests: Request[] = [];
    const sms = createSmsClient({
      baseUrl: "https://sms.example.ge",
      apiKey: "k",
      timeoutMs: 20,
      retry: { attempts: 2 },
      sleep: async () => {},
      fetch: (request) => {
        requests.push(request);
        return new Promise((_resolve, reject) =>
          request.signal.addEventListener("abort", () => reject(request.signal.reason)),
        );
      },
    });
    const error = await sms.sendMessage(body, { idempotencyKey: "k-7" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SmsTimeoutError);
    expect(error).toBeInstanceOf(SmsError);
    expect(error).toMatchObject({ code: "timeout", status: null, requestId: null, attempts: 2 });
    expect(requests.map((request) => request.headers.get("idempotency-key"))).toEqual(["k-7", "k-7"]);
  });

  it("a fetch that ignores the request's signal still times out, and the caller's abort still ends the call", async () => {
    const ignoring = () => new Promise<Response>(() => {});
    const sms = createSmsClient({
      baseUrl: "https://sms.example.ge",
      apiKey: "k",
      timeoutMs: 20,
      retry: { attempts: 1 },
      fetch: ignoring,
    });
    const error = await sms.getMessage("msg_1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SmsTimeoutError);
    expect(error).toMatchObject({ code: "timeout", attempts: 1 });
    const controller = new AbortController();
    const slow = createSmsClient({ baseUrl: "https://sms.example.ge", apiKey: "k", fetch: ignoring });
    const call = slow.getMessage("msg_1", { signal: controller.signal }).catch((e: unknown) => e);
    controller.abort(new Error("user left"));
    expect(await call).toEqual(new Error("user left"));
  });

  it("the caller's own abort is not retried: it rejects with the signal's reason", async () => {
    const controller = new AbortController();
    const { sms, requests } = client([
      () => {
        controller.abort(new Error("user left"));
        return Promise.reject(new DOMException("aborted", "AbortError"));
      },
    ]);
    expect(await sms.sendMessage(body, { signal: controller.signal }).catch((e: unknown) => e)).toEqual(
      new Error("user left"),
    );
    expect(requests).toHaveLength(1);
  });

  it("attempts: 1 turns retries off", async () => {
    const { sms, requests } = client(
      [() => envelope(503, "provider_unavailable"), () => json(201, message("submitted"))],
      {
        attempts: 1,
      },
    );
    expect(await sms.sendMessage(body).catch((e: unknown) => e)).toMatchObject({ attempts: 1 });
    expect(requests).toHaveLength(1);
  });
});
