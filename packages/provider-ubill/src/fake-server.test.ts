import { createConnection } from "node:net";
import { describe, expect, it } from "vitest";
import { FAKE_UBILL_API_KEY, getRefusingPort, startFakeUbill } from "./fake-server.ts";

async function call(
  url: string,
  init: RequestInit = {},
): Promise<{ status: number; json: unknown } | { failed: true }> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(2000) });
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = text;
    }
    return { status: response.status, json };
  } catch {
    return { failed: true };
  }
}

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

const sendBody = (numbers: unknown[], brandID = 1, text = "Hello") =>
  JSON.stringify({ brandID, numbers, text, stopList: false });

describe("fake uBill", () => {
  it("listens on 127.0.0.1, checks the key and records requests without it", async () => {
    const fake = await startFakeUbill();
    try {
      expect(fake.baseUrl).toBe(`http://127.0.0.1:${fake.port}`);
      expect(fake.apiKey).toBe(FAKE_UBILL_API_KEY);
      expect(await call(`${fake.baseUrl}/v1/sms/balance?key=nope`)).toMatchObject({ status: 401 });
      expect(await call(`${fake.baseUrl}/v1/sms/balance`)).toMatchObject({ status: 401 });
      expect(await call(`${fake.baseUrl}/v1/sms/balance?key=${fake.apiKey}`)).toEqual({
        status: 200,
        json: { statusID: 0, message: "OK", sms: "1000" },
      });
      expect(fake.requests.map((request) => request.keyAccepted)).toEqual([false, false, true]);
      expect(JSON.stringify(fake.requests)).not.toContain("nope");
      expect(await call(`${fake.baseUrl}/v1/other?key=${fake.apiKey}`)).toMatchObject({ status: 404 });
    } finally {
      await fake.close();
    }
  });

  it("checks sends like uBill and keeps reports per smsID", async () => {
    const fake = await startFakeUbill({ firstSmsId: 500, balance: 1 });
    const send = (body: string) =>
      call(`${fake.baseUrl}/v1/sms/send?key=${fake.apiKey}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
    try {
      expect(await send("{not json")).toMatchObject({ json: { statusID: 90 } });
      expect(await send(sendBody([995599123456], 42))).toMatchObject({ json: { statusID: 10 } });
      expect(await send(sendBody([]))).toMatchObject({ json: { statusID: 20 } });
      expect(await send(sendBody([995599123456], 1, ""))).toMatchObject({ json: { statusID: 30 } });
      expect(await send(sendBody([12345]))).toMatchObject({ json: { statusID: 50 } });
      expect(await send(sendBody([995599123456]))).toEqual({
        status: 200,
        json: { statusID: 0, message: "SMS sent", smsID: "500" },
      });
      expect(await send(sendBody([995599123457]))).toMatchObject({ json: { statusID: 40 } });
      expect(fake.sends()).toHaveLength(7);

      const report = () => call(`${fake.baseUrl}/v1/sms/report/500?key=${fake.apiKey}`);
      expect(await report()).toEqual({
        status: 200,
        json: { statusID: 0, result: [{ number: "995599123456", statusID: "0" }] },
      });
      fake.setReport("500", "1");
      expect(await report()).toMatchObject({ json: { result: [{ statusID: "1" }] } });
      expect(await call(`${fake.baseUrl}/v1/sms/report/501?key=${fake.apiKey}`)).toMatchObject({
        json: { statusID: 99 },
      });
    } finally {
      await fake.close();
    }
  });

  it("follows per-number scripts and one-shot scripts in order", async () => {
    const fake = await startFakeUbill();
    const send = (number: number) =>
      call(`${fake.baseUrl}/v1/sms/send?key=${fake.apiKey}`, { method: "POST", body: sendBody([number]) });
    try {
      fake.replyToNumber("+995599000001", { kind: "status", statusId: 40 });
      expect(await send(995599000001)).toMatchObject({ json: { statusID: 40 } });
      expect(await send(995599000001)).toMatchObject({ json: { statusID: 40 } });

      fake.replyNext({ kind: "http", status: 500 }, "balance");
      fake.replyNext({ kind: "accept", smsId: "A1" });
      fake.replyNext({ kind: "garbage" });
      expect(await send(995599000001)).toMatchObject({ json: { smsID: "A1" } });
      expect(await send(995599000002)).toMatchObject({
        status: 200,
        json: '{"statusID":0,"message":"SMS sent","smsID":"1173',
      });
      expect(await call(`${fake.baseUrl}/v1/sms/balance?key=${fake.apiKey}`)).toMatchObject({ status: 500 });

      fake.replyNext({ kind: "drop" });
      expect(await send(995599000002)).toEqual({ failed: true });
      fake.replyNext({ kind: "truncate" });
      expect(await send(995599000002)).toEqual({ failed: true });

      fake.reset();
      expect(fake.requests).toHaveLength(0);
      expect(await send(995599000001)).toMatchObject({ json: { statusID: 0 } });
    } finally {
      await fake.close();
    }
  });

  it("serves brands in the SDK's shape", async () => {
    const fake = await startFakeUbill({ brands: [{ id: 3, name: "Shop", approved: false }] });
    try {
      expect(await call(`${fake.baseUrl}/v1/sms/brandNames?key=${fake.apiKey}`)).toMatchObject({
        json: { statusID: 0, brands: [{ id: "3", name: "Shop", authorized: "2" }] },
      });
    } finally {
      await fake.close();
    }
  });

  it("holds every unscripted send for submitDelayMs, changeable, while reports answer at once", async () => {
    const fake = await startFakeUbill({ submitDelayMs: 60_000 });
    const url = `${fake.baseUrl}/v1/sms/send?key=${FAKE_UBILL_API_KEY}`;
    const sendInit = (number: string) => ({
      method: "POST",
      headers: { "content-type": "application/json" },
      body: sendBody([number]),
    });
    const post = (number: string) => call(url, sendInit(number));
    // Calls that stay unanswered: no client deadline (a busy machine must not settle them), aborted at the end.
    const abandon = new AbortController();
    const waiting = (target: string, init: RequestInit = {}) => {
      const seen = { answered: false };
      fetch(target, { ...init, signal: abandon.signal }).then(
        () => {
          seen.answered = true;
        },
        () => undefined,
      );
      return seen;
    };
    try {
      const held = waiting(url, sendInit("995555000001"));
      fake.replyToNumber("995555000002", { kind: "accept", smsId: "42" });
      // A scripted reply is not delayed; neither is a report.
      expect(await post("995555000002")).toMatchObject({ status: 200, json: { smsID: "42" } });
      expect(await call(`${fake.baseUrl}/v1/sms/report/42?key=${FAKE_UBILL_API_KEY}`)).toMatchObject({
        status: 200,
        json: { statusID: 0 },
      });
      expect(fake.sends()).toHaveLength(2);
      expect(held.answered).toBe(false);

      fake.setSubmitDelay(0);
      expect(await post("995555000003")).toMatchObject({ status: 200, json: { statusID: 0 } });
      expect(held.answered).toBe(false);

      // A spread draws each send's delay from ms × (1 ± spread): at 60 s ± half, at least 30 s.
      expect(() => fake.setSubmitDelay(1_000, 1.5)).toThrow(RangeError);
      fake.setSubmitDelay(60_000, 0.5);
      const spread = waiting(url, sendInit("995555000005"));
      // Recorded as it is given its delay, in the same turn.
      while (!fake.sends().some((request) => request.body.includes("995555000005")))
        await new Promise((resolve) => setTimeout(resolve, 5));
      fake.setSubmitDelay(0);
      expect(await post("995555000006")).toMatchObject({ status: 200, json: { statusID: 0 } });
      expect(spread.answered).toBe(false);

      fake.setReportDelay(60_000);
      const report = waiting(`${fake.baseUrl}/v1/sms/report/42?key=${FAKE_UBILL_API_KEY}`);
      expect(await post("995555000004")).toMatchObject({ status: 200, json: { statusID: 0 } });
      expect(fake.requests.filter((request) => request.endpoint === "report")).toHaveLength(2);
      expect(report.answered).toBe(false);
    } finally {
      abandon.abort();
      await fake.close();
    }
  });

  it("releases its port on close, even with a slow answer pending", async () => {
    const fake = await startFakeUbill();
    fake.replyNext({ kind: "slow", delayMs: 60_000 });
    const pending = call(`${fake.baseUrl}/v1/sms/balance?key=${fake.apiKey}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await fake.close();
    expect(await pending).toEqual({ failed: true });
    expect(await connects(fake.port)).toBe(false);
  });

  it("hands out a port that refuses connections", async () => {
    expect(await connects(await getRefusingPort())).toBe(false);
  });
});
