import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeUbill, type FakeUbillReply, getRefusingPort, startFakeUbill } from "./fake-server.ts";
import { createUbillProvider } from "./index.ts";
import { recordingLogger, SLOW_MS, submitRequest, TEST_TIMEOUT_MS, TEXT } from "./test-support.ts";

const API_KEY = "sk-ubill-SECRET-3f9d2c71";
const TO = "+995599765432";
let fake: FakeUbill;

beforeAll(async () => {
  fake = await startFakeUbill({ apiKey: API_KEY, firstSmsId: 840021 });
});
afterAll(async () => {
  await fake.close();
});

/** Fetch stand-ins that fail the way Deno does: the message carries the full URL, key included. */
function denoStyleFailure(kind: "Connect" | "SendRequest"): typeof fetch {
  return async (input) => {
    const url = String(input);
    const detail =
      kind === "Connect"
        ? "tcp connect error: Connection refused (os error 111)"
        : "connection closed before message completed";
    throw new TypeError("fetch failed", {
      cause: new Error(`error sending request for url (${url}): client error (${kind}): ${detail}`),
    });
  };
}

describe("secrets and personal data", () => {
  it("never puts the API key, the number, the text or uBill's id in a reason or a log call", async () => {
    const logger = recordingLogger();
    const reasons: string[] = [];
    const smsIds: string[] = [];
    const options = {
      apiKey: API_KEY,
      defaultBrandId: 1,
      submitTimeoutMs: TEST_TIMEOUT_MS,
      statusTimeoutMs: TEST_TIMEOUT_MS,
      logger,
    };
    const ubill = createUbillProvider({ ...options, baseUrl: fake.baseUrl });
    const providers = [
      ubill,
      createUbillProvider({ ...options, baseUrl: `http://127.0.0.1:${await getRefusingPort()}` }),
      createUbillProvider({ ...options, baseUrl: fake.baseUrl, fetch: denoStyleFailure("Connect") }),
      createUbillProvider({ ...options, baseUrl: fake.baseUrl, fetch: denoStyleFailure("SendRequest") }),
      createUbillProvider({ ...options, baseUrl: fake.baseUrl, apiKey: `${API_KEY}-wrong` }),
    ];

    const replies: (FakeUbillReply | null)[] = [
      null,
      { kind: "status", statusId: 10 },
      { kind: "status", statusId: 40 },
      { kind: "status", statusId: 50 },
      { kind: "status", statusId: 99 },
      { kind: "http", status: 401 },
      { kind: "http", status: 500 },
      { kind: "http", status: 302 },
      { kind: "slow", delayMs: SLOW_MS },
      { kind: "drop" },
      { kind: "truncate" },
      { kind: "garbage" },
    ];
    for (const provider of providers) {
      for (const reply of replies) {
        if (reply !== null) fake.replyNext(reply);
        const outcome = await provider.submit(submitRequest(TO));
        if ("reason" in outcome) reasons.push(outcome.reason);
        if (outcome.kind === "accepted") smsIds.push(outcome.providerRef);
      }
    }
    expect(smsIds.length).toBeGreaterThan(0);
    for (const smsId of smsIds) {
      for (const status of ["0", "1", "2", "3", "4", "9"]) {
        fake.setReport(smsId, status);
        for (const provider of providers) {
          const report = await provider.checkStatus({ providerRef: smsId, to: TO, submittedAt: new Date() });
          if ("reason" in report) reasons.push(report.reason);
        }
      }
    }
    for (const provider of providers) {
      for (const result of [await provider.listBrands(), await provider.getBalance()]) {
        if (!result.ok) reasons.push(result.reason);
      }
    }

    expect(reasons.length).toBeGreaterThan(40);
    expect(logger.entries.length).toBeGreaterThan(40);
    const everything = JSON.stringify({ reasons, log: logger.entries });
    for (const forbidden of [API_KEY, "SECRET", TO, TO.slice(1), "765432", TEXT, "482913", ...smsIds]) {
      expect(everything).not.toContain(forbidden);
    }
  });
});
