import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeUbill, getRefusingPort, startFakeUbill } from "./fake-server.ts";
import { SLOW_MS, ubillFor } from "./test-support.ts";

const API_KEY = "operator-key-88f0";
let fake: FakeUbill;

beforeAll(async () => {
  fake = await startFakeUbill({
    apiKey: API_KEY,
    brands: [
      { id: 1, name: "SMSGE", approved: true },
      { id: 2, name: "Waiting", approved: false },
    ],
    balance: 321,
  });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
});

describe("listBrands", () => {
  it("reads the brand list and which brands are approved", async () => {
    const { ubill } = ubillFor(fake.baseUrl, API_KEY);
    expect(await ubill.listBrands()).toEqual({
      ok: true,
      brands: [
        { id: 1, name: "SMSGE", approved: true },
        { id: 2, name: "Waiting", approved: false },
      ],
    });
    expect(fake.requests[0]).toMatchObject({ endpoint: "brands", method: "GET", keyAccepted: true });
  });

  it("reads the other plausible shape", async () => {
    const { ubill } = ubillFor(fake.baseUrl, API_KEY);
    fake.replyNext(
      {
        kind: "http",
        status: 200,
        body: '{"statusID":0,"brands":[{"id":1,"name":"MyShop","status":"approved"}]}',
      },
      "brands",
    );
    expect(await ubill.listBrands()).toEqual({
      ok: true,
      brands: [{ id: 1, name: "MyShop", approved: true }],
    });
  });

  it.each([
    ["a bad key", null],
    ["a non-zero statusID", { kind: "status", statusId: 99 }],
    ["garbage", { kind: "garbage" }],
    ["an answer without a list", { kind: "http", status: 200, body: '{"statusID":0}' }],
    ["a slow answer", { kind: "slow", delayMs: SLOW_MS }],
  ] as const)("answers error for %s", async (_name, reply) => {
    const { ubill } = ubillFor(fake.baseUrl, reply === null ? "bad-key" : API_KEY);
    if (reply !== null) fake.replyNext(reply, "brands");
    expect(await ubill.listBrands()).toMatchObject({ ok: false });
  });
});

describe("getBalance", () => {
  it("reads the SMS balance (sent as a string)", async () => {
    const { ubill } = ubillFor(fake.baseUrl, API_KEY);
    expect(await ubill.getBalance()).toEqual({ ok: true, sms: 321 });
    expect(fake.requests[0]).toMatchObject({ endpoint: "balance", method: "GET", keyAccepted: true });
  });

  it("reads a numeric balance", async () => {
    const { ubill } = ubillFor(fake.baseUrl, API_KEY);
    fake.replyNext({ kind: "http", status: 200, body: '{"statusID":0,"sms":123}' }, "balance");
    expect(await ubill.getBalance()).toEqual({ ok: true, sms: 123 });
  });

  it("goes down as messages are accepted", async () => {
    const { ubill } = ubillFor(fake.baseUrl, API_KEY);
    fake.setBalance(5);
    await ubill.submit({
      messageId: "msg_1",
      to: "+995599123456",
      text: "Hi",
      sender: { name: "SMSGE", brandId: 1 },
    });
    expect(await ubill.getBalance()).toEqual({ ok: true, sms: 4 });
  });

  it.each([
    ["a bad key", null],
    ["HTTP 500", { kind: "http", status: 500 }],
    ["a dropped connection", { kind: "drop" }],
    ["an answer without a count", { kind: "http", status: 200, body: '{"statusID":0,"sms":"lots"}' }],
  ] as const)("answers error for %s", async (_name, reply) => {
    const { ubill } = ubillFor(fake.baseUrl, reply === null ? "bad-key" : API_KEY);
    if (reply !== null) fake.replyNext(reply, "balance");
    expect(await ubill.getBalance()).toMatchObject({ ok: false });
  });

  it("answers error when uBill cannot be reached", async () => {
    const { ubill } = ubillFor(`http://127.0.0.1:${await getRefusingPort()}`, API_KEY);
    expect(await ubill.getBalance()).toMatchObject({ ok: false });
    expect(await ubill.listBrands()).toMatchObject({ ok: false });
  });
});
