// The MCP server in process, on both backends, with a manual clock and a
// recording timer: wait_for_message's backoff and its bound, replays, live
// keys as over REST, the Authorization header as the only road for a key,
// what results never carry, and the transport's bounds (body limit, GET).
// The real Deno server is exercised by mcp.e2e.test.ts.
import { sha256Hex } from "@sms/crypto";
import { availableBackends } from "@sms/db/testing";
import type { Timer } from "@sms/domain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../harness.ts";
import { findLeaks, numberNeedles } from "../support/leaks.ts";
import { connectMcp, errorOf, type McpSession, resultOf, resultText } from "../support/mcp.ts";
import { insertLiveKey, type MessageJson, ORDINARY, SIM } from "../support/messages.ts";

const backends = await availableBackends();

describe.each(backends)("the MCP server on %s", (backend) => {
  let t: TestApp;
  /** Every wait wait_for_message asked for, in ms; each one moves the clock and runs the status check. */
  const waits: number[] = [];
  let settle = true;
  const timer: Timer = {
    monotonicMs: () => 0,
    async sleep(ms) {
      waits.push(ms);
      if (!settle) return;
      t.clock.advance(ms);
      await t.app.jobs.find((job) => job.name === "status-check")?.run();
    },
  };
  const fetchInProcess = (request: Request) =>
    t.request(new URL(request.url).pathname, {
      method: request.method,
      headers: request.headers,
      body: request.method === "POST" ? request.body : null,
      duplex: "half",
    } as RequestInit);
  const connect = (apiKey?: string) =>
    connectMcp({ baseUrl: t.baseUrl, fetch: fetchInProcess, ...(apiKey ? { apiKey } : {}) });

  let anonymous: McpSession;
  /** A test key made in a session of its own (the key serves that session; `anonymous` stays keyless). */
  const newTestKey = async () => {
    const starter = await connect();
    try {
      return resultOf<{ api_key: string }>(await starter.call("create_test_key")).api_key;
    } finally {
      await starter.close();
    }
  };
  let apiKey: string;
  let session: McpSession;

  beforeAll(async () => {
    t = await startTestApp({
      backend,
      timer,
      env: { TEST_KEYS_PER_MINUTE: "1000", TEST_KEYS_PER_DAY: "1000", SIMULATOR_DELIVERY_DELAY_MS: "5000" },
    });
    anonymous = await connect();
    apiKey = await newTestKey();
    session = await connect(apiKey);
  });
  afterAll(async () => {
    await session?.close();
    await anonymous?.close();
    await t?.close();
  });

  const send = (s: McpSession, to: string, idempotencyKey: string = crypto.randomUUID()) =>
    s.call("send_message", {
      to,
      template: "verification_code",
      variables: { code: "482913" },
      locale: "en",
      idempotency_key: idempotencyKey,
    });

  it("advertises each tool with its schema; send_message requires idempotency_key and says how to choose it", async () => {
    const { tools } = await session.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      "create_test_key",
      "send_message",
      "get_message",
      "wait_for_message",
      "list_templates",
      "start_verification",
      "check_verification",
      "get_verification",
    ]);
    const sendTool = tools.find((tool) => tool.name === "send_message");
    expect(sendTool?.inputSchema.required).toEqual(["to", "template", "variables", "idempotency_key"]);
    expect(sendTool?.description).toMatch(/generate a UUID per logical send and reuse it on every retry/);
    // No argument takes a key (create_test_key's result has one: outputSchema).
    expect(JSON.stringify(tools.map((tool) => tool.inputSchema))).not.toMatch(
      /api_key"\s*:\s*\{|"authorization"/i,
    );
    for (const tool of tools) expect(tool.inputSchema.properties).not.toHaveProperty("api_key");
  });

  it("wait_for_message polls at 2, 4, … s and returns the final state", async () => {
    const message = resultOf<{ message: MessageJson }>(await send(session, ORDINARY)).message;
    expect(message.status).toBe("submitted");
    waits.length = 0;
    const waited = resultOf<{ message: MessageJson; final: boolean; reads: number }>(
      await session.call("wait_for_message", { message_id: message.id }),
    );
    // Delivered 5 s after sending: the first read (2 s) finds it submitted, the second (6 s) delivered.
    // On PostgreSQL the second waits at the server for the change (here: the rest of the 30 s, the
    // recording timer standing in for it), then reads it delivered.
    expect(waits).toEqual(backend === "postgres" ? [2000, 28_000] : [2000, 4000]);
    expect(waited).toMatchObject({ final: true, reads: 2, message: { id: message.id, status: "delivered" } });
  });

  it("wait_for_message stops at timeout_seconds with the latest state, the last wait cut to fit", async () => {
    const message = resultOf<{ message: MessageJson }>(await send(session, ORDINARY)).message;
    settle = false;
    waits.length = 0;
    try {
      const waited = resultOf<{ message: MessageJson; final: boolean; waited_seconds: number }>(
        await session.call("wait_for_message", { message_id: message.id, timeout_seconds: 45 }),
      );
      expect(waits).toEqual(backend === "postgres" ? [2000, 43_000] : [2000, 4000, 8000, 16000, 15000]);
      expect(waited).toMatchObject({ final: false, waited_seconds: 45, message: { status: "submitted" } });
      waits.length = 0;
      await session.call("wait_for_message", { message_id: message.id, timeout_seconds: 60 });
      expect(waits).toEqual(backend === "postgres" ? [2000, 58_000] : [2000, 4000, 8000, 16000, 30000]);
    } finally {
      settle = true;
    }
  });

  it("a retry with the same idempotency_key replays the first message; one row, one send", async () => {
    const key = crypto.randomUUID();
    const first = resultOf<{ message: MessageJson; replayed: boolean }>(await send(session, ORDINARY, key));
    const again = resultOf<{ message: MessageJson; replayed: boolean }>(await send(session, ORDINARY, key));
    expect(first.replayed).toBe(false);
    expect(again).toEqual({ message: first.message, replayed: true });
    const other = errorOf(await send(session, SIM.undeliverable, key));
    expect(other.code).toBe("idempotency_key_reused");
    expect(await t.app.db.prisma.message.count({ where: { id: first.message.id } })).toBe(1);
  });

  it("+995500000002: a tool error provider_unavailable with Retry-After, and nothing kept", async () => {
    const before = await t.app.db.prisma.message.count();
    const result = await send(session, SIM.unreachable);
    expect(errorOf(result).code).toBe("provider_unavailable");
    expect(result._meta).toEqual({ retry_after_seconds: 5 });
    expect(await t.app.db.prisma.message.count()).toBe(before);
  });

  it("refuses a browser page of another origin and a foreign Host with 403 origin_not_allowed; no Origin, the service's own, or loopback still work (issue 53, N1)", async () => {
    const list = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const post = (url: string, headers: Record<string, string>) =>
      t.app.handler(
        new Request(url, {
          method: "POST",
          headers: {
            "Content-Type": "application/json",
            Accept: "application/json, text/event-stream",
            ...headers,
          },
          body: list,
        }),
        { remoteAddress: "203.0.113.10" },
      );
    for (const [url, headers] of [
      [`${t.baseUrl}/mcp`, { Origin: "http://rebind.attacker.example" }],
      [`${t.baseUrl}/mcp`, { Origin: "null" }],
      ["http://rebind.attacker.example/mcp", {}],
      ["http://rebind.attacker.example/mcp", { Origin: "http://rebind.attacker.example" }],
    ] as const) {
      const response = await post(url, headers);
      expect(response.status, `${url} ${JSON.stringify(headers)}`).toBe(403);
      const body = (await response.json()) as { error: { code: string; request_id: string } };
      expect(body.error.code).toBe("origin_not_allowed");
      expect(body.error.request_id).toBe(response.headers.get("x-request-id"));
    }
    for (const [url, headers] of [
      [`${t.baseUrl}/mcp`, {}],
      [`${t.baseUrl}/mcp`, { Origin: t.baseUrl }],
      ["http://127.0.0.1:3000/mcp", {}],
      ["http://localhost:3000/mcp", {}],
    ] as const) {
      const response = await post(url, headers);
      expect(response.status, `${url} ${JSON.stringify(headers)}`).toBe(200);
      expect(JSON.stringify(await response.json())).toContain("send_message");
    }
  });

  it("the key travels only in the Authorization header: none, a wrong one, and another project's message", async () => {
    expect(errorOf(await send(anonymous, ORDINARY)).code).toBe("unauthorized");
    const wrong = await connect("sk_test_not-a-key");
    expect(errorOf(await wrong.call("get_message", { message_id: "msg_x" })).code).toBe("invalid_api_key");
    await wrong.close();
    const mine = resultOf<{ message: MessageJson }>(await send(session, ORDINARY)).message;
    const otherKey = await newTestKey();
    const other = await connect(otherKey);
    expect(errorOf(await other.call("get_message", { message_id: mine.id })).code).toBe("message_not_found");
    await other.close();
    // An api_key argument is refused, never used.
    const refused = errorOf(await session.call("get_message", { message_id: mine.id, api_key: apiKey }));
    expect(refused).toMatchObject({ code: "invalid_request" });
    expect(refused.message).toContain("api_key");
    // Without an Authorization header the key is checked first: unauthorized, the argument never used.
    const unheaded = errorOf(await anonymous.call("get_message", { message_id: mine.id, api_key: apiKey }));
    expect(unheaded).toMatchObject({ code: "unauthorized" });
  });

  it("a live key is held to its credits as over REST: too few answer insufficient_credits, nothing kept", async () => {
    const live = await insertLiveKey(t.app.db.prisma, { credits: 0, paid: true });
    const broke = await connect(live.apiKey);
    const before = await t.app.db.prisma.message.count();
    expect(errorOf(await send(broke, ORDINARY)).code).toBe("insufficient_credits");
    expect(await t.app.db.prisma.message.count()).toBe(before);
    await broke.close();
  });

  it("results and errors carry the request id of their HTTP answer, and never a code or a full number", async () => {
    const texts: string[] = [];
    const result = await send(session, ORDINARY);
    texts.push(resultText(result));
    const message = resultOf<{ message: MessageJson }>(result).message;
    expect(message.to).not.toBe(ORDINARY);
    texts.push(resultText(await session.call("get_message", { message_id: message.id })));
    const failure = await session.call("get_message", { message_id: "msg_unknown" });
    texts.push(resultText(failure));
    expect(errorOf(failure).request_id).toBe(session.requestIds.at(-1));
    const needles = [...numberNeedles("to", ORDINARY), { label: "code", value: "482913" }];
    expect(findLeaks([{ where: "tool results", text: texts.join("\n") }], needles)).toEqual([]);
    expect(findLeaks([{ where: "logs", text: t.logs.text }], needles)).toEqual([]);
  });

  it("the endpoint: POST only, the public body limit, the error envelope for HTTP failures", async () => {
    const get = await t.request("/mcp", { headers: { Accept: "text/event-stream" } });
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST, DELETE");
    expect(((await get.json()) as { error: { code: string } }).error.code).toBe("method_not_allowed");
    const big = await t.request("/mcp", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: { pad: "x".repeat(20_000) },
      }),
    });
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
    const notJson = await t.request("/mcp", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: "{not json",
    });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { error: { code: number } }).error.code).toBe(-32700);
  });
  // Issue 54 item 2: the key create_test_key makes serves its own MCP session. Last in the file: it moves the clock a day.
  it("a session's own key: stored as the session id's hash and the key's id, slides an hour idle, ends at 24 hours, at DELETE and at revocation; purged once expired", async () => {
    const own = await connect();
    const created = resultOf<{
      api_key: string;
      project_id: string;
      session: { bound: boolean; expires_at: string; idle_timeout_minutes: number };
    }>(await own.call("create_test_key"));
    const sessionId = own.sessionId ?? "";
    expect(sessionId).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(created.session).toEqual({
      bound: true,
      expires_at: new Date(t.clock.now().getTime() + 24 * 3_600_000).toISOString().replace(/\.\d{3}Z$/, "Z"),
      idle_timeout_minutes: 60,
    });
    const key = await t.app.db.prisma.apiKey.findFirstOrThrow({ where: { projectId: created.project_id } });
    const hash = await sha256Hex(sessionId);
    expect(await t.app.db.prisma.mcpSession.findMany({ where: { sessionHash: hash } })).toMatchObject([
      { apiKeyId: key.id },
    ]);
    // Neither the key nor the session id is stored.
    const stored = JSON.stringify(await t.app.db.prisma.mcpSession.findMany());
    expect(stored).not.toContain(created.api_key);
    expect(stored).not.toContain(sessionId);

    // Authenticated by the session's key: the message is looked for (message_not_found), not refused as unauthorized.
    const read = async (s: McpSession) =>
      errorOf(await s.call("get_message", { message_id: "msg_00000000000000000000000000" })).code;
    expect(await read(own)).toBe("message_not_found");
    expect(await read(anonymous)).toBe("unauthorized");

    const idle = await connect();
    await idle.call("create_test_key");
    const idleHash = await sha256Hex(idle.sessionId ?? "");
    const ended = await connect();
    await ended.call("create_test_key");
    const revoked = await connect();
    const revokedKey = resultOf<{ project_id: string }>(await revoked.call("create_test_key"));

    // DELETE /mcp (the SDK's terminateSession) ends the binding.
    const endedHash = await sha256Hex(ended.sessionId ?? "");
    expect(await t.app.db.prisma.mcpSession.count({ where: { sessionHash: endedHash } })).toBe(1);
    await ended.transport.terminateSession();
    expect(await t.app.db.prisma.mcpSession.count({ where: { sessionHash: endedHash } })).toBe(0);
    // A revoked key stops serving at once (its row is read on every use).
    await t.app.db.prisma.apiKey.updateMany({
      where: { projectId: revokedKey.project_id },
      data: { revokedAt: t.clock.now() },
    });
    expect(await read(revoked)).toBe("invalid_api_key");

    // Used every 50 minutes, the key serves until 24 hours after create_test_key; `idle`, unused, ends after an hour.
    t.clock.advance(50 * 60_000);
    expect(await read(own)).toBe("message_not_found");
    expect(await read(idle)).toBe("message_not_found");
    t.clock.advance(50 * 60_000);
    expect(await read(own)).toBe("message_not_found");
    t.clock.advance(11 * 60_000);
    // 61 minutes after its last use.
    expect(await read(idle)).toBe("unauthorized");
    expect(await read(own)).toBe("message_not_found");
    for (let minutes = 111; minutes + 50 < 24 * 60; minutes += 50) {
      t.clock.advance(50 * 60_000);
      expect(await read(own)).toBe("message_not_found");
    }
    t.clock.advance(50 * 60_000);
    expect(await read(own)).toBe("unauthorized");

    // The purge deletes the expired bindings.
    expect(await t.app.db.prisma.mcpSession.count({ where: { sessionHash: { in: [hash, idleHash] } } })).toBe(
      2,
    );
    await t.app.jobs.find((job) => job.name === "mcp-session-purge")?.run();
    expect(await t.app.db.prisma.mcpSession.count({ where: { sessionHash: { in: [hash, idleHash] } } })).toBe(
      0,
    );
    for (const s of [own, idle, ended, revoked]) await s.close();
  });
});
