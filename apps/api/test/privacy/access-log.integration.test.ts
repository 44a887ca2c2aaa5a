// Issue 2, point 9: one JSON log line per request (method, route template,
// status, duration, request id), and none of the request's secrets in it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestKey, sendMessageRequest, startTestApp, type TestApp } from "../harness.ts";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ backend: "pglite" });
});
afterAll(() => t?.close());

describe("access log", () => {
  it("writes one line per request with the route template, status, duration and request id", async () => {
    const key = await createTestKey((path, init) => t.request(path, init));
    const sent = await t.request(
      "/v1/messages",
      sendMessageRequest(key.api_key, "log-1", {
        to: "+995577123456",
        template: "login_code",
        variables: { code: "97531" },
        locale: "en",
      }),
    );
    expect(sent.status).toBe(201);
    const { id } = (await sent.json()) as { id: string };
    const read = await t.request(`/v1/messages/${id}`, {
      headers: { Authorization: `Bearer ${key.api_key}` },
    });
    const missing = await t.request("/no/such/route");

    const requests = t.logs.entries.filter((entry) => entry.msg === "request");
    expect(requests).toHaveLength(4);
    const byId = new Map(requests.map((entry) => [entry.request_id, entry]));
    for (const [response, route, status] of [
      [sent, "/v1/messages", 201],
      [read, "/v1/messages/{message_id}", 200],
      [missing, "unmatched", 404],
    ] as const) {
      const entry = byId.get(response.headers.get("x-request-id"));
      expect(entry).toMatchObject({ level: "info", route, status, method: expect.any(String) });
      expect(typeof entry?.duration_ms).toBe("number");
    }
    expect(byId.get(read.headers.get("x-request-id"))?.project_id).toBe(key.project_id);

    const all = t.logs.text;
    for (const secret of [key.api_key, key.claim_url.split("/").pop() ?? "", "995577123456", "97531"]) {
      expect(all).not.toContain(secret);
    }
    // The route template is logged, never the raw path.
    expect(all).not.toContain(`/v1/messages/${id}`);
  });
});

describe("the request log's recording (REQUEST_LOG_ENABLED)", () => {
  const send = async (app: TestApp) => {
    const key = await createTestKey((path, init) => app.request(path, init));
    const body = { to: "+995577123456", template: "login_code", variables: { code: "97531" }, locale: "en" };
    expect((await app.request("/v1/messages", sendMessageRequest(key.api_key, "rl-1", body))).status).toBe(
      201,
    );
    await app.app.requestLog.flush();
    const rows = await app.app.db.query<{ count: number }>(
      "SELECT count(*)::int AS count FROM request_log WHERE project_id = $1",
      [key.project_id],
    );
    return Number(rows[0]?.count);
  };

  it("records each answered API request by default", async () => {
    expect(await send(t)).toBe(1);
  });

  it("records nothing when turned off", async () => {
    const off = await startTestApp({ backend: "pglite", env: { REQUEST_LOG_ENABLED: "false" } });
    try {
      expect(await send(off)).toBe(0);
    } finally {
      await off.close();
    }
  });
});
