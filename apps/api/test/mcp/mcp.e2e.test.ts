// The MCP server end to end: the official SDK's client against the real Deno
// process over HTTP, on both backends. Lists the tools, makes a test key,
// sends to each simulator number and an ordinary one, waits for the final
// states, and calls each tool wrongly once. The status check runs every
// second and the simulator settles at once, so wait_for_message's real waits
// (2 s, then 4 s) are short; nothing here measures time.
import { availableBackends } from "@sms/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerProcess, startServer } from "../harness.ts";
import { connectMcp, errorOf, type McpSession, resultOf } from "../support/mcp.ts";
import { type MessageJson, ORDINARY, SIM } from "../support/messages.ts";

const backends = await availableBackends();

describe.each(backends)("MCP over HTTP on %s", (backend) => {
  let server: ServerProcess;
  let anonymous: McpSession;
  let session: McpSession;

  beforeAll(async () => {
    server = await startServer({
      backend,
      env: { STATUS_CHECK_INTERVAL_SECONDS: "1", SIMULATOR_DELIVERY_DELAY_MS: "0" },
    });
    anonymous = await connectMcp({ baseUrl: server.baseUrl });
  }, 120_000);
  afterAll(async () => {
    await session?.close();
    await anonymous?.close();
    await server?.cleanup();
  });

  const send = (to: string, idempotencyKey: string = crypto.randomUUID()) =>
    session.call("send_message", {
      to,
      template: "login_code",
      variables: { code: "7351" },
      idempotency_key: idempotencyKey,
    });

  it("lists the tools and makes a test key whose claim_url is for a human", async () => {
    const { tools } = await anonymous.client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      "check_verification",
      "create_test_key",
      "get_message",
      "get_verification",
      "list_templates",
      "send_message",
      "start_verification",
      "wait_for_message",
    ]);
    const start = tools.find((tool) => tool.name === "start_verification");
    expect(start?.inputSchema.required).toEqual(["to", "idempotency_key"]);
    expect(start?.description).toMatch(/generate a UUID per logical send and reuse it on every retry/);
    // In a session of its own: the key serves that session (mcp.session.e2e.test.ts); `anonymous` stays keyless.
    const starter = await connectMcp({ baseUrl: server.baseUrl });
    const created = await starter.call("create_test_key");
    await starter.close();
    const testKey = resultOf<{ api_key: string; claim_url: string; next_steps: string; mode: string }>(
      created,
    );
    expect(testKey.api_key).toMatch(/^sk_test_/);
    expect(testKey.mode).toBe("test");
    expect(testKey.claim_url).toMatch(new RegExp(`^${server.baseUrl}/claim/`));
    expect(testKey.next_steps).toContain("claim_url to a human");
    const notes = created.content.map((item) => (item as { text: string }).text);
    expect(notes[1]).toContain(`Tell your human: open claim_url in a browser`);
    session = await connectMcp({ baseUrl: server.baseUrl, apiKey: testKey.api_key });
  });

  it("sends to each simulator number and an ordinary one, and waits for the final states", async () => {
    const sent = async (to: string) => resultOf<{ message: MessageJson; replayed: boolean }>(await send(to));
    const rejected = await sent(SIM.rejected);
    expect(rejected.message).toMatchObject({ status: "failed", error: { code: "provider_rejected" } });
    expect(errorOf(await send(SIM.unreachable)).code).toBe("provider_unavailable");
    const indeterminate = await sent(SIM.indeterminate);
    expect(indeterminate.message).toMatchObject({
      status: "unknown",
      error: { code: "provider_unavailable" },
    });
    const undeliverable = await sent(SIM.undeliverable);
    const ordinary = await sent(ORDINARY);
    expect([undeliverable.message.status, ordinary.message.status]).toEqual(["submitted", "submitted"]);

    const wait = async (id: string) =>
      resultOf<{ message: MessageJson; final: boolean }>(
        await session.call("wait_for_message", { message_id: id, timeout_seconds: 60 }),
      );
    const [delivered, failed] = await Promise.all([
      wait(ordinary.message.id),
      wait(undeliverable.message.id),
    ]);
    expect(delivered).toMatchObject({
      final: true,
      message: { id: ordinary.message.id, status: "delivered" },
    });
    expect(failed).toMatchObject({
      final: true,
      message: { status: "undeliverable", error: { code: "invalid_recipient" } },
    });
    const read = resultOf<{ message: MessageJson }>(
      await session.call("get_message", { message_id: ordinary.message.id }),
    );
    expect(read.message).toEqual(delivered.message);
    expect(JSON.stringify(read)).not.toContain(ORDINARY);
  }, 120_000);

  it("verifies a phone: start (a test key's code is zeros), a wrong code, the right one, then reads it approved", async () => {
    const key = crypto.randomUUID();
    const started = resultOf<{ verification: { id: string; status: string; to: string }; replayed: boolean }>(
      await session.call("start_verification", { to: ORDINARY, code_length: 6, idempotency_key: key }),
    );
    expect(started.verification).toMatchObject({ status: "pending" });
    expect(started.verification.to).not.toBe(ORDINARY);
    const again = resultOf<{ verification: { id: string }; replayed: boolean }>(
      await session.call("start_verification", { to: ORDINARY, code_length: 6, idempotency_key: key }),
    );
    expect(again).toMatchObject({ replayed: true, verification: { id: started.verification.id } });
    const id = started.verification.id;
    const wrong = resultOf<{
      approved: boolean;
      verification: { status: string; attempts_remaining: number };
    }>(await session.call("check_verification", { verification_id: id, code: "123456" }));
    expect(wrong).toMatchObject({ approved: false, verification: { status: "pending" } });
    const right = await session.call("check_verification", { verification_id: id, code: "000000" });
    expect(resultOf(right)).toMatchObject({ approved: true, verification: { status: "approved" } });
    expect(JSON.stringify(right)).not.toContain("000000");
    const read = resultOf<{ verification: { status: string } }>(
      await session.call("get_verification", { verification_id: id }),
    );
    expect(read.verification.status).toBe("approved");
  });

  it("lists the templates, their rules and the simulator numbers", async () => {
    const listed = resultOf<{
      templates: Array<{ id: string; variables: Array<{ name: string }> }>;
      simulator_numbers: Array<{ to: string }>;
    }>(await anonymous.call("list_templates"));
    expect(listed.templates.map((template) => template.id)).toEqual([
      "verification_code",
      "login_code",
      "password_reset_code",
    ]);
    expect(listed.templates[2]?.variables.map((v) => v.name)).toEqual(["code", "minutes"]);
    expect(listed.simulator_numbers.map((row) => row.to).slice(0, 4)).toEqual([
      SIM.rejected,
      SIM.unreachable,
      SIM.indeterminate,
      SIM.undeliverable,
    ]);
  });

  it("answers an invalid call of each tool with the API's code, message and request id", async () => {
    const cases: Array<[McpSession, string, Record<string, unknown>, string]> = [
      [anonymous, "create_test_key", { project: "mine" }, "invalid_request"],
      [
        session,
        "send_message",
        { to: "+99555512", template: "login_code", variables: { code: "7351" }, idempotency_key: "k1" },
        "invalid_recipient",
      ],
      [
        session,
        "send_message",
        { to: ORDINARY, template: "login_code", variables: { code: "7351" } },
        "idempotency_key_required",
      ],
      [
        anonymous,
        "send_message",
        { to: ORDINARY, template: "login_code", variables: { code: "7351" }, idempotency_key: "k2" },
        "unauthorized",
      ],
      [session, "get_message", { message_id: "msg_00000000000000000000000000" }, "message_not_found"],
      [session, "wait_for_message", { message_id: "msg_x", timeout_seconds: 3600 }, "invalid_request"],
      [anonymous, "list_templates", { locale: "en" }, "invalid_request"],
      [session, "start_verification", { to: ORDINARY }, "idempotency_key_required"],
      [session, "start_verification", { to: "+1555", idempotency_key: "v1" }, "invalid_recipient"],
      [
        session,
        "check_verification",
        { verification_id: "vrf_00000000000000000000000000", code: "0000" },
        "verification_not_found",
      ],
      [anonymous, "get_verification", { verification_id: "vrf_00000000000000000000000000" }, "unauthorized"],
      [
        session,
        "get_verification",
        { verification_id: "vrf_00000000000000000000000000" },
        "verification_not_found",
      ],
    ];
    for (const [who, tool, args, code] of cases) {
      const error = errorOf(await who.call(tool, args));
      expect({ tool, code: error.code }).toEqual({ tool, code });
      expect(error.message.length).toBeGreaterThan(10);
      expect(error.request_id).toBe(who.requestIds.at(-1));
    }
  });

  it("serves POST /mcp only: GET answers 405 with the envelope", async () => {
    const response = await fetch(`${server.baseUrl}/mcp`, { headers: { Accept: "text/event-stream" } });
    expect(response.status).toBe(405);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("method_not_allowed");
  });
});
