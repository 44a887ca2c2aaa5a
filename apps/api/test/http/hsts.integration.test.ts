// Strict-Transport-Security (issue 53, item 7): a service whose public URL is
// https:// tells browsers to keep to https on every answer (the API's, the
// pages', an error's); one served over plain http says nothing.
import { availableBackends } from "@sms/db/testing";
import { afterAll, describe, expect, it } from "vitest";
import { HSTS } from "../../src/http/gateway.ts";
import { startTestApp, type TestApp } from "../harness.ts";

const [backend] = await availableBackends();
const apps: TestApp[] = [];
afterAll(async () => {
  for (const app of apps) await app.close();
});

describe("Strict-Transport-Security", () => {
  it("is on every answer when the public URL is https://, on none over http", async () => {
    const secure = await startTestApp({
      backend: backend!,
      env: { PUBLIC_BASE_URL: "https://sms.example.ge" },
    });
    apps.push(secure);
    const plain = await startTestApp({ backend: backend! });
    apps.push(plain);
    for (const path of ["/healthz", "/openapi.json", "/v1/messages/msg_x", "/no-such-route", "/dashboard"]) {
      expect((await secure.request(path)).headers.get("strict-transport-security"), path).toBe(HSTS);
      expect((await plain.request(path)).headers.get("strict-transport-security"), path).toBeNull();
    }
    expect(HSTS).toMatch(/^max-age=\d{8,}$/);
  });
});
