// Issue 54 item 2: an agent goes from nothing to a sent code in one MCP
// session. The official SDK's client (Client + StreamableHTTPClientTransport)
// against the real Deno server, on both backends, with no Authorization
// configured: create_test_key, then send_message → wait_for_message →
// delivered and start_verification → check_verification → approved, the key
// never passed as an argument. A second session does not get the first one's
// key; a configured Authorization header wins over a bound key; DELETE /mcp
// ends the binding; the resources; every tool's outputSchema and its results;
// errors that name idempotency_key; and the key and session id in no log line.
// The stored rows and the lifetimes: mcp.integration.test.ts.
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { availableBackends } from "@sms/db/testing";
import { SIMULATOR_NUMBERS } from "@sms/provider-sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestKey, type ServerProcess, startServer } from "../harness.ts";
import { findLeaks } from "../support/leaks.ts";
import { connectMcp, errorOf, type McpSession, resultOf } from "../support/mcp.ts";
import { type MessageJson, ORDINARY } from "../support/messages.ts";

const backends = await availableBackends();

type VerificationJson = { id: string; status: string; attempts_remaining: number };

describe.each(backends)("one MCP session, from nothing to a sent code, on %s", (backend) => {
  let server: ServerProcess;
  let tools: Tool[];
  /** Every session opened here, closed at the end. */
  const sessions: McpSession[] = [];
  /** Every tool result of the walk, by tool, checked against the tool's outputSchema. */
  const results: Array<{ tool: string; result: CallToolResult }> = [];
  /** Every key and session id made here: they must appear in no log line. */
  const secrets: Array<{ label: string; value: string }> = [];

  const open = async (apiKey?: string) => {
    const session = await connectMcp({ baseUrl: server.baseUrl, ...(apiKey ? { apiKey } : {}) });
    sessions.push(session);
    if (session.sessionId) secrets.push({ label: "session id", value: session.sessionId });
    return session;
  };
  const call = async (session: McpSession, tool: string, args: Record<string, unknown> = {}) => {
    const result = await session.call(tool, args);
    results.push({ tool, result });
    return result;
  };
  /** get_message over a bare POST naming `sessionId`: the error code, or "ok". */
  const rawCode = async (sessionId: string, messageId: string) => {
    const response = await fetch(`${server.baseUrl}/mcp`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        "Mcp-Session-Id": sessionId,
        "Mcp-Protocol-Version": "2025-06-18",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "get_message", arguments: { message_id: messageId } },
      }),
    });
    expect(response.status).toBe(200);
    const { result } = (await response.json()) as { result: CallToolResult };
    return result.isError ? (result.structuredContent as { error: { code: string } }).error.code : "ok";
  };
  const send = (session: McpSession, idempotencyKey: string = crypto.randomUUID()) =>
    call(session, "send_message", {
      to: ORDINARY,
      template: "verification_code",
      variables: { code: "482913" },
      locale: "en",
      idempotency_key: idempotencyKey,
    });

  beforeAll(async () => {
    server = await startServer({
      backend,
      env: {
        STATUS_CHECK_INTERVAL_SECONDS: "1",
        SIMULATOR_DELIVERY_DELAY_MS: "0",
        // This file makes several test keys from one address within a minute.
        TEST_KEYS_PER_MINUTE: "100",
        TEST_KEYS_PER_DAY: "1000",
      },
    });
    tools = (await (await open()).client.listTools()).tools;
  }, 120_000);
  afterAll(async () => {
    for (const session of sessions) await session.close().catch(() => undefined);
    await server?.cleanup();
  });

  it("no Authorization: create_test_key, then send → wait → delivered and start → check → approved, the key never an argument", async () => {
    const agent = await open();
    expect(agent.sessionId).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Nothing yet: a keyed tool is unauthorized, and the message says what to do.
    const before = errorOf(
      await call(agent, "get_message", { message_id: "msg_00000000000000000000000000" }),
    );
    expect(before.code).toBe("unauthorized");
    expect(before.message).toContain("create_test_key");

    const created = await call(agent, "create_test_key");
    const testKey = resultOf<{ api_key: string; claim_url: string; session: { bound: boolean } }>(created);
    secrets.push({ label: "api_key", value: testKey.api_key });
    expect(testKey.session.bound).toBe(true);
    const notes = created.content.map((item) => (item as { text: string }).text);
    expect(notes[0]).toMatch(/^This key now serves this MCP session until /);
    expect(notes[1]).toContain(testKey.claim_url);
    expect(notes[1]).toContain("not shown again");

    const sent = resultOf<{ message: MessageJson; replayed: boolean }>(await send(agent));
    expect(sent).toMatchObject({ replayed: false, message: { status: "submitted" } });
    const waited = resultOf<{ message: MessageJson; final: boolean }>(
      await call(agent, "wait_for_message", { message_id: sent.message.id, timeout_seconds: 60 }),
    );
    expect(waited).toMatchObject({ final: true, message: { id: sent.message.id, status: "delivered" } });

    const started = resultOf<{ verification: VerificationJson }>(
      await call(agent, "start_verification", {
        to: ORDINARY,
        code_length: 4,
        idempotency_key: crypto.randomUUID(),
      }),
    );
    expect(started.verification).toMatchObject({ status: "pending", attempts_remaining: 5 });
    const id = started.verification.id;
    const wrong = await call(agent, "check_verification", { verification_id: id, code: "1234" });
    expect(resultOf(wrong)).toMatchObject({
      outcome: "pending",
      approved: false,
      next_step: expect.stringMatching(/^Wrong code: 4 attempts left; ask the user again/),
      verification: { status: "pending", attempts_remaining: 4 },
    });
    expect((wrong.content[0] as { text: string }).text).toMatch(/^Wrong code: 4 attempts left/);
    const right = await call(agent, "check_verification", { verification_id: id, code: "0000" });
    expect(resultOf(right)).toMatchObject({
      outcome: "approved",
      approved: true,
      next_step: expect.stringMatching(/^Approved: .*Let the user in/),
      verification: { status: "approved" },
    });
    const read = resultOf<{ verification: VerificationJson; next_step: string }>(
      await call(agent, "get_verification", { verification_id: id }),
    );
    expect(read.verification.status).toBe("approved");

    // No call of the walk passed the key.
    expect(JSON.stringify(results.filter((r) => r.tool !== "create_test_key"))).not.toContain(
      testKey.api_key,
    );

    // A second session (a new Mcp-Session-Id) does not get the first one's key.
    const second = await open();
    expect(second.sessionId).not.toBe(agent.sessionId);
    expect(errorOf(await call(second, "get_message", { message_id: sent.message.id })).code).toBe(
      "unauthorized",
    );
    // Nor does a request that names a session id the service never made.
    expect(await rawCode("A".repeat(43), sent.message.id)).toBe("unauthorized");
    // The first session's id, sent by hand, still finds its key…
    const firstId = agent.sessionId ?? "";
    expect(await rawCode(firstId, sent.message.id)).toBe("ok");
    // …until DELETE /mcp (the SDK's terminateSession) ends the binding.
    await agent.transport.terminateSession();
    expect(await rawCode(firstId, sent.message.id)).toBe("unauthorized");
  }, 120_000);

  it("a configured Authorization header wins over the session's key, even a wrong one", async () => {
    const configured = await createTestKey((path, init) => fetch(`${server.baseUrl}${path}`, init));
    secrets.push({ label: "configured api_key", value: configured.api_key });
    const agent = await open(configured.api_key);
    const bound = resultOf<{ api_key: string; session: { bound: boolean } }>(
      await call(agent, "create_test_key"),
    );
    secrets.push({ label: "bound api_key", value: bound.api_key });
    expect(bound.session.bound).toBe(true);
    expect((await agent.call("create_test_key")).content[0]).toMatchObject({
      text: expect.stringContaining("Authorization header, which wins"),
    });
    const sent = resultOf<{ message: MessageJson }>(await send(agent)).message;
    // The message is the configured key's project's: REST finds it with that key, not with the bound one.
    const readWith = (key: string) =>
      fetch(`${server.baseUrl}/v1/messages/${sent.id}`, { headers: { Authorization: `Bearer ${key}` } });
    expect((await readWith(configured.api_key)).status).toBe(200);
    expect((await readWith(bound.api_key)).status).toBe(404);

    // A wrong configured header is refused; the session's key does not stand in for it.
    const wrong = await connectMcp({ baseUrl: server.baseUrl, apiKey: "sk_test_not-a-key" });
    sessions.push(wrong);
    const made = resultOf<{ api_key: string }>(await call(wrong, "create_test_key"));
    secrets.push({ label: "shadowed api_key", value: made.api_key });
    expect(errorOf(await call(wrong, "get_message", { message_id: sent.id })).code).toBe("invalid_api_key");
  });

  it("resources: the guide, the template catalogue and the simulator numbers, listed and read", async () => {
    const agent = await open();
    const { resources } = await agent.client.listResources();
    const uris = resources.map((resource) => resource.uri);
    expect(uris).toEqual(
      expect.arrayContaining([
        "sms-api://guide/getting-started",
        "sms-api://guide/verify-a-phone-number",
        "sms-api://templates",
        "sms-api://simulator-numbers",
      ]),
    );
    for (const resource of resources)
      expect(resource.mimeType).toMatch(/^(text\/markdown|application\/json)$/);

    const text = async (uri: string) => {
      const { contents } = await agent.client.readResource({ uri });
      expect(contents).toHaveLength(1);
      expect(contents[0]?.uri).toBe(uri);
      return (contents[0] as { text: string }).text;
    };
    const guide = await text("sms-api://guide/getting-started");
    expect(guide).toMatch(/^# Getting started\n/);
    expect(guide).toContain(`${server.baseUrl}`);
    const catalogue = JSON.parse(await text("sms-api://templates")) as { templates: Array<{ id: string }> };
    const listed = resultOf<{ templates: unknown; simulator_numbers: unknown }>(
      await agent.call("list_templates"),
    );
    expect(catalogue.templates).toEqual(listed.templates);
    expect(catalogue.templates.map((template) => template.id)).toEqual([
      "verification_code",
      "login_code",
      "password_reset_code",
    ]);
    const numbers = JSON.parse(await text("sms-api://simulator-numbers")) as Array<{ to: string }>;
    expect(numbers).toEqual(listed.simulator_numbers);
    expect(numbers.map((row) => row.to).slice(0, 4)).toEqual(Object.values(SIMULATOR_NUMBERS));
    await expect(agent.client.readResource({ uri: "sms-api://nothing" })).rejects.toMatchObject({
      code: -32002,
    });
  });

  it("errors name idempotency_key, not the Idempotency-Key header", async () => {
    const agent = await open();
    secrets.push({
      label: "api_key",
      value: resultOf<{ api_key: string }>(await call(agent, "create_test_key")).api_key,
    });
    const missing = errorOf(
      await call(agent, "send_message", {
        to: ORDINARY,
        template: "login_code",
        variables: { code: "7351" },
      }),
    );
    expect(missing.code).toBe("idempotency_key_required");
    expect(missing.message).toMatch(/^Pass idempotency_key/);
    const key = crypto.randomUUID();
    resultOf(await send(agent, key));
    const reused = errorOf(
      await call(agent, "send_message", {
        to: ORDINARY,
        template: "login_code",
        variables: { code: "7351" },
        idempotency_key: key,
      }),
    );
    expect(reused.code).toBe("idempotency_key_reused");
    expect(reused.message).toContain("This idempotency_key was already used");
    const broken = errorOf(await send(agent, "a\nb"));
    expect(broken.code).toBe("invalid_request");
    expect(broken.message).toContain("idempotency_key");
    const tooLong = errorOf(await send(agent, "k".repeat(201)));
    expect(tooLong.code).toBe("invalid_request");
    for (const error of [missing, reused, broken, tooLong]) {
      expect(error.message).not.toMatch(/Idempotency-Key|Retry-After|header/);
    }
  });

  it("every tool has an outputSchema, and every structured result of this file validates against it", () => {
    const validator = new AjvJsonSchemaValidator();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(tools).toHaveLength(8);
    for (const tool of tools) expect(tool.outputSchema, tool.name).toMatchObject({ type: "object" });
    // Results and errors alike (an error's structured content is the API's envelope, which the schema allows).
    const tried = new Set(results.map((r) => r.tool));
    expect([...tried].sort()).toEqual(
      [
        "check_verification",
        "create_test_key",
        "get_message",
        "get_verification",
        "send_message",
        "start_verification",
        "wait_for_message",
      ].sort(),
    );
    for (const { tool, result } of results) {
      const check = validator.getValidator(byName.get(tool)?.outputSchema ?? {});
      expect(
        check(result.structuredContent),
        `${tool}: ${JSON.stringify(result.structuredContent)}`,
      ).toMatchObject({
        valid: true,
      });
    }
    // The schemas have teeth: a result with a wrong field type fails.
    const sendSchema = validator.getValidator(byName.get("send_message")?.outputSchema ?? {});
    expect(sendSchema({ message: { id: 1 }, replayed: "no" }).valid).toBe(false);
  });

  it("no log line holds an API key or a session id", () => {
    expect(secrets.length).toBeGreaterThan(5);
    expect(findLeaks([{ where: "server output", text: server.output.join("\n") }], secrets)).toEqual([]);
  });
});
