import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeUbill, getRefusingPort, startFakeUbill } from "./fake-server.ts";
import { createUbillProvider } from "./index.ts";
import { recordingLogger, SLOW_MS, submitRequest, TEST_TIMEOUT_MS, TEXT } from "./test-support.ts";

const API_KEY = "live-key-7c41e0d2";
let fake: FakeUbill;

beforeAll(async () => {
  fake = await startFakeUbill({
    apiKey: API_KEY,
    brands: [
      { id: 1, name: "SMSGE", approved: true },
      { id: 7, name: "MyShop", approved: true },
      { id: 8, name: "Waiting", approved: false },
    ],
  });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  fake.setBalance(1000);
});

function warnedProblems(logger: ReturnType<typeof recordingLogger>): unknown[] {
  return logger.entries
    .filter((entry) => entry.level === "warn")
    .map((entry) => (entry.obj as { problem?: unknown }).problem);
}

function provider(overrides: { baseUrl?: string; apiKey?: string; defaultBrandId?: number } = {}) {
  const logger = recordingLogger();
  const ubill = createUbillProvider({
    baseUrl: fake.baseUrl,
    apiKey: API_KEY,
    defaultBrandId: 1,
    submitTimeoutMs: TEST_TIMEOUT_MS,
    statusTimeoutMs: TEST_TIMEOUT_MS,
    logger,
    ...overrides,
  });
  return { ubill, logger };
}

describe("submit: accepted", () => {
  it("sends one request in uBill's format and returns the smsID as the reference", async () => {
    const { ubill } = provider();
    fake.replyNext({ kind: "accept", smsId: "117345" }, "send");
    const outcome = await ubill.submit(submitRequest("+995599123456"));

    expect(outcome).toEqual({ kind: "accepted", providerRef: "117345" });
    const sends = fake.sends();
    expect(sends).toHaveLength(1);
    expect(sends[0]?.keyAccepted).toBe(true);
    // Every template is a code: sent in uBill's OTP lane.
    expect(sends[0]?.json).toEqual({
      brandID: 1,
      numbers: [995599123456],
      text: TEXT,
      stopList: false,
      otp: true,
    });
    expect(sends[0]?.body).toContain('"numbers":[995599123456]');
  });

  it("checks the request like uBill does when nothing is scripted", async () => {
    const { ubill } = provider();
    const first = await ubill.submit(submitRequest("+995599123456"));
    const second = await ubill.submit(submitRequest("+995599123457"));
    expect(first.kind).toBe("accepted");
    expect(second.kind).toBe("accepted");
    if (first.kind === "accepted" && second.kind === "accepted") {
      expect(first.providerRef).toMatch(/^\d+$/);
      expect(second.providerRef).not.toBe(first.providerRef);
    }
  });

  it("uses the project's brand when it has one, else the default", async () => {
    const { ubill } = provider();
    await ubill.submit(submitRequest("+995599123456", { sender: { name: "MyShop", brandId: 7 } }));
    await ubill.submit(submitRequest("+995599123456", { sender: { name: "SMSGE", brandId: null } }));
    expect(fake.sends().map((send) => (send.json as { brandID: number }).brandID)).toEqual([7, 1]);
  });

  it("accepts a numeric smsID too", async () => {
    const { ubill } = provider();
    fake.replyNext(
      { kind: "http", status: 200, body: '{"statusID":0,"message":"ok","smsID":998877}' },
      "send",
    );
    expect(await ubill.submit(submitRequest("+995599123456"))).toEqual({
      kind: "accepted",
      providerRef: "998877",
    });
  });

  it("tolerates a trailing slash on baseUrl", async () => {
    const { ubill } = provider({ baseUrl: `${fake.baseUrl}/` });
    expect((await ubill.submit(submitRequest("+995599123456"))).kind).toBe("accepted");
    expect(fake.sends()[0]?.path).toBe("/v1/sms/send");
  });
});

describe("submit: each statusID of uBill's API 2.1.8 pinned to its outcome", () => {
  // docs/live-sending.md#what-each-ubill-outcome-becomes: a definitive rejection is `rejected` (failed,
  // refunded); "uBill could not take it now, nothing sent" is `unreachable` (503, refunded, safe to
  // retry); whatever may have been sent is `indeterminate` (unknown, charged, never re-sent).
  it.each([
    [10, { kind: "rejected", code: "sender_not_allowed" }, "error"],
    [20, { kind: "rejected", code: "provider_rejected" }, "error"],
    [30, { kind: "rejected", code: "invalid_message" }, "info"],
    [40, { kind: "unreachable" }, "error"],
    [50, { kind: "rejected", code: "invalid_recipient" }, "info"],
    [90, { kind: "rejected", code: "provider_rejected" }, "error"],
    [99, { kind: "indeterminate" }, "warn"],
    // Not documented by uBill: proves nothing either way.
    [77, { kind: "indeterminate" }, "warn"],
  ] as const)("statusID %i → %o, logged at %s", async (statusId, expected, level) => {
    const { ubill, logger } = provider();
    fake.replyToNumber("+995599111111", { kind: "status", statusId });
    const outcome = await ubill.submit(submitRequest("+995599111111"));
    expect(outcome).toMatchObject(expected);
    if (outcome.kind === "rejected") expect(Object.keys(outcome).sort()).toEqual(["code", "kind", "reason"]);
    expect(fake.sends()).toHaveLength(1);
    expect(logger.entries.filter((entry) => entry.level !== "child").map((entry) => entry.level)).toEqual([
      level,
    ]);
  });
});

describe("submit: definitive rejections", () => {
  it("maps the fake's own checks: unapproved brand → sender_not_allowed", async () => {
    const { ubill } = provider();
    const outcome = await ubill.submit(
      submitRequest("+995599123456", { sender: { name: "Waiting", brandId: 8 } }),
    );
    expect(outcome).toMatchObject({ kind: "rejected", code: "sender_not_allowed" });
  });

  it("maps the fake's own checks: empty text → invalid_message", async () => {
    const { ubill } = provider();
    expect(await ubill.submit(submitRequest("+995599123456", { text: "" }))).toMatchObject({
      kind: "rejected",
      code: "invalid_message",
    });
  });

  it("reports insufficient uBill balance to the operator without secrets, number or text: nothing sent", async () => {
    const { ubill, logger } = provider();
    fake.setBalance(0);
    const outcome = await ubill.submit(submitRequest("+995599123456"));
    expect(outcome).toMatchObject({ kind: "unreachable" });

    const errors = logger.entries.filter((entry) => entry.level === "error");
    expect(errors).toHaveLength(1);
    expect(errors[0]?.obj).toEqual({ problem: "insufficient_provider_balance" });
    const logged = logger.text();
    for (const secret of [API_KEY, "599123456", TEXT, "482913"]) expect(logged).not.toContain(secret);
  });

  it("maps HTTP 401 (bad key) to provider_rejected and tells the operator", async () => {
    const { ubill, logger } = provider({ apiKey: "wrong-key" });
    const outcome = await ubill.submit(submitRequest("+995599123456"));
    expect(outcome).toMatchObject({ kind: "rejected", code: "provider_rejected" });
    expect(fake.sends()[0]?.keyAccepted).toBe(false);
    expect(logger.entries.some((entry) => entry.level === "error")).toBe(true);
    expect(logger.text()).not.toContain("wrong-key");
  });

  it.each([400, 403, 404, 422, 501, 505])("maps HTTP %i to provider_rejected", async (status) => {
    const { ubill } = provider();
    fake.replyNext({ kind: "http", status }, "send");
    expect(await ubill.submit(submitRequest("+995599123456"))).toMatchObject({
      kind: "rejected",
      code: "provider_rejected",
    });
  });

  it("treats a redirect as a rejection and does not follow it", async () => {
    const { ubill } = provider();
    fake.replyNext({ kind: "http", status: 302, body: "" }, "send");
    expect(await ubill.submit(submitRequest("+995599123456"))).toMatchObject({
      kind: "rejected",
      code: "provider_rejected",
    });
    expect(fake.requests).toHaveLength(1);
  });

  it("refuses a recipient that is not +9955 and eight digits without calling uBill", async () => {
    const { ubill } = provider();
    for (const to of ["995599123456", "+995499123456", "+99559912345", "+9955991234567"]) {
      expect(await ubill.submit(submitRequest(to))).toMatchObject({
        kind: "rejected",
        code: "invalid_recipient",
      });
    }
    expect(fake.requests).toHaveLength(0);
  });

  it("refuses an unusable brand id without calling uBill", async () => {
    const { ubill } = provider({ defaultBrandId: 0 });
    expect(await ubill.submit(submitRequest("+995599123456"))).toMatchObject({
      kind: "rejected",
      code: "sender_not_allowed",
    });
    expect(fake.requests).toHaveLength(0);
  });
});

describe("submit: nothing was sent → unreachable", () => {
  it("uses an injected fetch and reads Deno-shaped failures from it", async () => {
    const failing =
      (phase: "Connect" | "SendRequest"): typeof fetch =>
      async (input) => {
        throw new TypeError("fetch failed", {
          cause: new Error(
            `error sending request for url (${String(input)}): client error (${phase}): closed`,
          ),
        });
      };
    const logger = recordingLogger();
    const options = { baseUrl: fake.baseUrl, apiKey: API_KEY, defaultBrandId: 1, logger };
    const connect = createUbillProvider({ ...options, fetch: failing("Connect") });
    const sendRequest = createUbillProvider({ ...options, fetch: failing("SendRequest") });
    expect((await connect.submit(submitRequest("+995599123456"))).kind).toBe("unreachable");
    expect((await sendRequest.submit(submitRequest("+995599123456"))).kind).toBe("indeterminate");
    expect(fake.requests).toHaveLength(0);
  });

  it("maps a refused connection to unreachable", async () => {
    const { ubill, logger } = provider({ baseUrl: `http://127.0.0.1:${await getRefusingPort()}` });
    expect((await ubill.submit(submitRequest("+995599123456"))).kind).toBe("unreachable");
    expect(warnedProblems(logger)).toEqual(["connection_refused"]);
  });
});

describe("submit: may have been sent → indeterminate, never re-sent", () => {
  it.each([
    [429, "throttled"],
    [503, "service_unavailable"],
  ])(
    "maps HTTP %i to indeterminate: a proxy in front of uBill may answer it after the send went through",
    async (status, problem) => {
      const { ubill, logger } = provider();
      fake.replyNext({ kind: "http", status }, "send");
      expect((await ubill.submit(submitRequest("+995599123456"))).kind).toBe("indeterminate");
      expect(fake.sends()).toHaveLength(1);
      expect(warnedProblems(logger)).toEqual([problem]);
    },
  );

  it("maps a response slower than the deadline to indeterminate", async () => {
    const { ubill, logger } = provider();
    fake.replyToNumber("+995599222222", { kind: "slow", delayMs: SLOW_MS });
    const started = Date.now();
    const outcome = await ubill.submit(submitRequest("+995599222222"));
    expect(outcome.kind).toBe("indeterminate");
    expect(Date.now() - started).toBeLessThan(SLOW_MS);
    expect(fake.sends()).toHaveLength(1);
    expect(warnedProblems(logger)).toEqual(["timeout"]);
  });

  it("maps a connection dropped after the request to indeterminate", async () => {
    const { ubill, logger } = provider();
    fake.replyToNumber("+995599333333", { kind: "drop" });
    expect((await ubill.submit(submitRequest("+995599333333"))).kind).toBe("indeterminate");
    expect(fake.sends()).toHaveLength(1);
    expect(warnedProblems(logger)).toEqual(["connection_dropped"]);
  });

  it.each([500, 502, 504, 507, 520, 599])("maps HTTP %i to indeterminate", async (status) => {
    const { ubill } = provider();
    fake.replyNext({ kind: "http", status }, "send");
    expect((await ubill.submit(submitRequest("+995599123456"))).kind).toBe("indeterminate");
    expect(fake.sends()).toHaveLength(1);
  });

  it("maps an unparseable answer to indeterminate", async () => {
    const { ubill } = provider();
    fake.replyNext({ kind: "garbage" }, "send");
    expect((await ubill.submit(submitRequest("+995599123456"))).kind).toBe("indeterminate");
    fake.replyNext({ kind: "http", status: 200, body: "<html>maintenance</html>" }, "send");
    expect((await ubill.submit(submitRequest("+995599123456"))).kind).toBe("indeterminate");
    fake.replyNext({ kind: "http", status: 200, body: '{"message":"no status"}' }, "send");
    expect((await ubill.submit(submitRequest("+995599123456"))).kind).toBe("indeterminate");
  });

  it("maps an acceptance without a usable smsID to indeterminate", async () => {
    const { ubill } = provider();
    fake.replyNext({ kind: "http", status: 200, body: '{"statusID":0,"message":"SMS sent"}' }, "send");
    expect((await ubill.submit(submitRequest("+995599123456"))).kind).toBe("indeterminate");
  });

  it("maps a connection dropped mid-response to indeterminate", async () => {
    const { ubill, logger } = provider();
    fake.replyNext({ kind: "truncate" }, "send");
    expect((await ubill.submit(submitRequest("+995599123456"))).kind).toBe("indeterminate");
    expect(fake.sends()).toHaveLength(1);
    expect(warnedProblems(logger)).toEqual(["connection_dropped"]);
  });
});
