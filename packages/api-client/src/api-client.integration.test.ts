// The typed client against the real application (its handler in-process on an
// in-memory PGlite, through a custom fetch): send, replay, read, and errors
// with our stable codes.
import { type App, createApp, parseEnv } from "@sms/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiErrorCode, apiRequestId, createSmsApiClient, type SmsApiClient } from "./index.ts";

const BASE_URL = "http://api.test";
let app: App;
const seen: Array<{ url: string; headers: Headers }> = [];

function clientFor(apiKey?: string): SmsApiClient {
  return createSmsApiClient({
    baseUrl: `${BASE_URL}/`,
    ...(apiKey ? { apiKey } : {}),
    fetch: async (input, init) => {
      const request = new Request(input, init);
      seen.push({ url: request.url, headers: request.headers });
      return app.handler(request, { remoteAddress: "203.0.113.50" });
    },
  });
}

beforeAll(async () => {
  const env = parseEnv({
    NODE_ENV: "test",
    PGLITE_DATA_DIR: "memory://",
    PUBLIC_BASE_URL: BASE_URL,
    LOG_LEVEL: "silent",
    JOBS_ENABLED: "false",
  });
  app = await createApp(env);
}, 120_000);
afterAll(async () => {
  await app?.close();
});

const request = {
  to: "+995555123456",
  template: "verification_code",
  variables: { code: "4821" },
  locale: "en",
} as const;

describe("createSmsApiClient", { timeout: 30_000 }, () => {
  it("gets a test key, sends, replays and reads a message", async () => {
    const key = await clientFor().testKeys.create.mutate();
    expect(key.api_key).toMatch(/^sk_test_/);
    const sms = clientFor(key.api_key);

    const sent = await sms.messages.send.mutate(request, { context: { idempotencyKey: "client-1" } });
    expect(sent).toMatchObject({ object: "message", status: "submitted", segments: 1, to: "+9955••••••56" });
    const last = seen.at(-1);
    expect(last?.url).toBe(`${BASE_URL}/trpc/messages.send`);
    expect(last?.headers.get("authorization")).toBe(`Bearer ${key.api_key}`);
    expect(last?.headers.get("idempotency-key")).toBe("client-1");

    const replay = await sms.messages.send.mutate(request, { context: { idempotencyKey: "client-1" } });
    expect(replay).toEqual(sent);

    const read = await sms.messages.get.query({ message_id: sent.id });
    expect(read.id).toBe(sent.id);
    expect(read.to).toBe("+9955••••••56");
  });

  it("surfaces our stable error codes and the request id", async () => {
    const key = await clientFor().testKeys.create.mutate();
    const sms = clientFor(key.api_key);

    const missingKey = await sms.messages.send.mutate(request).catch((error: unknown) => error);
    expect(apiErrorCode(missingKey)).toBe("idempotency_key_required");
    expect(apiRequestId(missingKey)).toMatch(/^req_/);

    await sms.messages.send.mutate(request, { context: { idempotencyKey: "client-2" } });
    const reused = await sms.messages.send
      .mutate({ ...request, to: "+995555123457" }, { context: { idempotencyKey: "client-2" } })
      .catch((error: unknown) => error);
    expect(apiErrorCode(reused)).toBe("idempotency_key_reused");

    const notFound = await sms.messages.get
      .query({ message_id: "msg_nope" })
      .catch((error: unknown) => error);
    expect(apiErrorCode(notFound)).toBe("message_not_found");

    const anonymous = await clientFor()
      .messages.get.query({ message_id: "msg_nope" })
      .catch((error: unknown) => error);
    expect(apiErrorCode(anonymous)).toBe("unauthorized");
    const wrongKey = await clientFor(`sk_test_${"A".repeat(43)}`)
      .messages.get.query({ message_id: "msg_nope" })
      .catch((error: unknown) => error);
    expect(apiErrorCode(wrongKey)).toBe("invalid_api_key");

    expect(apiErrorCode(new Error("not from the API"))).toBeNull();
  });
});
