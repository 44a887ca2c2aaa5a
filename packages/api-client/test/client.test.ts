// The client on its own, with a scripted fetch and fake timers: the requests
// it makes, how it reads answers and errors, and the polling schedule of
// spec 6 (2, 4, 8, 16, 30, 30 … s, stop at a final status, abortable).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  createSmsClient,
  isSmsApiError,
  type Message,
  pollingDelays,
  SmsApiError,
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
    const sms = createSmsClient({ baseUrl: "https://sms.example.ge", fetch });
    const limited = await sms.createTestKey().catch((error: unknown) => error);
    expect(isSmsApiError(limited)).toBe(true);
    expect(limited).toMatchObject({
      name: "SmsApiError",
      code: "rate_limited",
      message: "Too many.",
      status: 429,
      requestId: "req_9",
      retryAfterSeconds: 17,
      rateLimit: { limit: 5, remaining: 0, resetSeconds: 17 },
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
    expect(wrong).toMatchObject({ outcome: "wrong_code", verification: { attempts_remaining: 4 } });
    expect((await sms.verifications.check(id, "1")).outcome).toBe("max_attempts_reached");
    expect(await sms.verifications.check(id, "1")).toEqual({
      outcome: "not_pending",
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
