import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeUbill, getRefusingPort, startFakeUbill } from "./fake-server.ts";
import { SLOW_MS, submitRequest, ubillFor } from "./test-support.ts";

const API_KEY = "status-key-19ab";
const TO = "+995599123456";
let fake: FakeUbill;

beforeAll(async () => {
  fake = await startFakeUbill({ apiKey: API_KEY });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
});

/** Submit through the adapter and return uBill's reference. */
async function submitted(): Promise<{ providerRef: string; ubill: ReturnType<typeof ubillFor>["ubill"] }> {
  const { ubill } = ubillFor(fake.baseUrl, API_KEY);
  const outcome = await ubill.submit(submitRequest(TO));
  if (outcome.kind !== "accepted") throw new Error(`expected accepted, got ${outcome.kind}`);
  return { providerRef: outcome.providerRef, ubill };
}

const query = (providerRef: string) => ({ providerRef, to: TO, submittedAt: new Date() });

describe("checkStatus: uBill's per-number statuses", () => {
  it("reads a fresh submission as pending", async () => {
    const { ubill, providerRef } = await submitted();
    expect(await ubill.checkStatus(query(providerRef))).toEqual({ kind: "pending" });
    const report = fake.requests.at(-1);
    expect(report?.endpoint).toBe("report");
    expect(report?.path).toBe(`/v1/sms/report/${providerRef}`);
    expect(report?.keyAccepted).toBe(true);
  });

  it.each([
    ["0", { kind: "pending" }],
    ["3", { kind: "pending" }],
    ["1", { kind: "delivered" }],
    ["2", { kind: "undeliverable" }],
    ["4", { kind: "failed" }],
    ["7", { kind: "error" }],
  ])("status %s → %o", async (status, expected) => {
    const { ubill, providerRef } = await submitted();
    fake.setReport(providerRef, status);
    const report = await ubill.checkStatus(query(providerRef));
    expect(report).toMatchObject(expected);
    if ("reason" in report) {
      expect(report.reason).not.toContain(providerRef);
      expect(report.reason).not.toContain(`"${status}"`);
    }
  });

  it("follows a status that changes over time", async () => {
    const { ubill, providerRef } = await submitted();
    expect(await ubill.checkStatus(query(providerRef))).toEqual({ kind: "pending" });
    fake.setReport(providerRef, "3");
    expect(await ubill.checkStatus(query(providerRef))).toEqual({ kind: "pending" });
    fake.setReport(providerRef, "1");
    expect(await ubill.checkStatus(query(providerRef))).toEqual({ kind: "delivered" });
  });

  it("reads a report set up without a submission", async () => {
    const { ubill } = ubillFor(fake.baseUrl, API_KEY);
    fake.setReport("555001", "2", TO);
    expect(await ubill.checkStatus(query("555001"))).toMatchObject({ kind: "undeliverable" });
  });

  it("treats an empty result as still pending", async () => {
    const { ubill } = ubillFor(fake.baseUrl, API_KEY);
    fake.replyNext({ kind: "http", status: 200, body: '{"statusID":0,"result":[]}' }, "report");
    expect(await ubill.checkStatus(query("555002"))).toEqual({ kind: "pending" });
  });
});

describe("checkStatus: no usable answer → error (try again next round)", () => {
  it("answers error for a non-zero statusID (unknown smsID)", async () => {
    const { ubill } = ubillFor(fake.baseUrl, API_KEY);
    expect(await ubill.checkStatus(query("999999"))).toMatchObject({ kind: "error" });
  });

  it.each([
    ["a slow answer", { kind: "slow", delayMs: SLOW_MS }],
    ["a dropped connection", { kind: "drop" }],
    ["a connection dropped mid-response", { kind: "truncate" }],
    ["garbage JSON", { kind: "garbage" }],
    ["HTTP 500", { kind: "http", status: 500 }],
    ["HTTP 401", { kind: "http", status: 401 }],
    ["statusID 99", { kind: "status", statusId: 99 }],
    [
      "a report for another number",
      {
        kind: "http",
        status: 200,
        body: '{"statusID":0,"result":[{"number":"995500000000","statusID":"1"}]}',
      },
    ],
  ] as const)("answers error for %s", async (_name, reply) => {
    const { ubill, providerRef } = await submitted();
    fake.replyNext(reply, "report");
    const report = await ubill.checkStatus(query(providerRef));
    expect(report).toMatchObject({ kind: "error" });
    if (report.kind === "error") expect(report.reason).not.toContain(providerRef);
  });

  it("answers error when uBill cannot be reached", async () => {
    const { ubill } = ubillFor(`http://127.0.0.1:${await getRefusingPort()}`, API_KEY);
    expect(await ubill.checkStatus(query("117345"))).toMatchObject({ kind: "error" });
  });

  it("answers error for a bad key and tells the operator", async () => {
    const { ubill, logger } = ubillFor(fake.baseUrl, "not-the-key");
    expect(await ubill.checkStatus(query("117345"))).toMatchObject({ kind: "error" });
    expect(logger.entries.some((entry) => entry.level === "error")).toBe(true);
  });

  it("refuses a reference that is not a uBill id without calling uBill", async () => {
    const { ubill } = ubillFor(fake.baseUrl, API_KEY);
    for (const providerRef of ["", "../balance", "1/2", "a b", "x".repeat(65)]) {
      expect(await ubill.checkStatus(query(providerRef))).toMatchObject({ kind: "error" });
    }
    expect(fake.requests).toHaveLength(0);
  });
});
