// Verifications (issue 22) end to end: the real Deno process over HTTP, on
// PGlite and on PostgreSQL. Test keys: every status and error, the simulator
// numbers, the zeros, replay and 409 on start, cancel-by-replacement, 404s
// and 400s, and the concurrency rules (20 simultaneous right checks: one
// transition; 20 wrong: never a sixth attempt). Live keys (PostgreSQL, fake
// uBill): the drawn code, credits and refunds, the anti-pumping refusals;
// the checks' limits per project and per address.
import { createDatabase } from "@sms/db";
import { availableBackends, type PrismaDatabase, withPrisma } from "@sms/db/testing";
import { type FakeUbill, startFakeUbill } from "@sms/provider-ubill/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestKey, type ServerProcess, sendMessageRequest, startServer } from "../harness.ts";
import { insertLiveKey, ORDINARY, SIM, until } from "../support/messages.ts";
import {
  codeInText,
  type ErrorJson,
  expectError,
  expectVerificationShape,
  type VerificationJson,
  verificationClient,
} from "../support/verifications.ts";

const backends = await availableBackends();
const hasPostgres = backends.includes("postgres");
const INTERNAL_TOKEN = "verifications-e2e-internal-token-0123456789";
const LIMITS = {
  TEST_KEYS_PER_MINUTE: "1000",
  TEST_KEYS_PER_DAY: "1000",
  TEST_KEYS_PER_DAY_TOTAL: "100000",
  MESSAGES_PER_MINUTE: "10000",
};

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

async function metric(server: ServerProcess, mode: string, event: string): Promise<number> {
  const response = await fetch(`${server.internalUrl}/metrics`, {
    headers: { Authorization: `Bearer ${INTERNAL_TOKEN}` },
  });
  const text = await response.text();
  const line = text
    .split("\n")
    .find((l) => l.startsWith(`sms_verifications_total{mode="${mode}",event="${event}"}`));
  return line ? Number(line.split(" ").pop()) : 0;
}

describe.each(backends)("verifications with test keys over HTTP on %s", (backend) => {
  let server: ServerProcess;
  let seq = 0;
  const key = (label = "v") => `${label}-${++seq}`;
  const call = (path: string, init?: RequestInit) => fetch(`${server.baseUrl}${path}`, init);
  const { start, check, get } = verificationClient(call);
  const newKey = async () => (await createTestKey(call)).api_key;
  const json = async (response: Response) => (await response.json()) as VerificationJson;

  beforeAll(async () => {
    server = await startServer({
      backend,
      internalToken: INTERNAL_TOKEN,
      env: { ...LIMITS, STATUS_CHECK_INTERVAL_SECONDS: "1", SIMULATOR_DELIVERY_DELAY_MS: "500" },
    });
    cleanups.push(() => server.cleanup());
  }, 120_000);

  it("starts: 201 pending with every field, the message readable; zeros approve once; a later check is refused whatever the code", async () => {
    const apiKey = await newKey();
    const response = await start(apiKey, key(), { to: ORDINARY });
    expect(response.status).toBe(201);
    expect(response.headers.get("ratelimit-limit")).toBe("10000");
    const started = await json(response);
    expectVerificationShape(started, ORDINARY);
    expect(started).toMatchObject({
      status: "pending",
      template: "verification_code",
      locale: "ka",
      attempts_remaining: 5,
    });
    expect(Date.parse(started.expires_at) - Date.parse(started.created_at)).toBe(10 * 60_000);
    expect(started.updated_at).toBe(started.created_at);
    const message = await call(`/v1/messages/${started.message_id}`, {
      headers: { Authorization: `Bearer ${apiKey}` },
    });
    expect(message.status).toBe(200);
    // Submitted, or already delivered by the simulator (its delay is short here).
    expect(["submitted", "delivered"]).toContain(((await message.json()) as { status: string }).status);

    const approved = await check(apiKey, started.id, { code: "000000" });
    expect(approved.status).toBe(200);
    expect(await json(approved)).toMatchObject({ id: started.id, status: "approved", attempts_remaining: 5 });
    // Approved: the right code again is refused like a wrong one, nothing counted.
    for (const code of ["000000", "123456"]) {
      const again = await check(apiKey, started.id, { code });
      const body = await expectError(again, 409, "verification_not_pending");
      expect(body.error.message).toContain("approved");
    }
    const read = await get(apiKey, started.id);
    expect(read.status).toBe(200);
    expect(await json(read)).toMatchObject({ status: "approved", attempts_remaining: 5 });
  });

  it("an approved verification is no oracle: 30 wrong codes and the right one answer identically, never 200 again (issue 53, M1)", async () => {
    const apiKey = await newKey();
    const started = await json(await start(apiKey, key(), { to: "+995555000803" }));
    const approved = await check(apiKey, started.id, { code: "000000" });
    expect(approved.status).toBe(200);
    const { updated_at } = await json(approved);
    const codes = [...Array.from({ length: 30 }, (_, i) => String(100000 + i * 7919)), "000000"];
    const answers: string[] = [];
    for (const code of codes) {
      const response = await check(apiKey, started.id, { code });
      const body = (await response.json()) as ErrorJson;
      // Everything but the request id: the status, the headers a client reads, the code and the sentence.
      answers.push(
        JSON.stringify([
          response.status,
          response.headers.get("content-type"),
          response.headers.get("retry-after"),
          body.error.code,
          body.error.message,
        ]),
      );
    }
    expect(new Set(answers).size).toBe(1);
    expect(JSON.parse(answers[0]!)).toEqual([
      409,
      expect.stringContaining("application/json"),
      null,
      "verification_not_pending",
      expect.stringContaining("approved"),
    ]);
    // Nothing counted, nothing rewritten.
    expect(await json(await get(apiKey, started.id))).toMatchObject({
      status: "approved",
      attempts_remaining: 5,
      updated_at,
    });
  });

  it("test keys' code is zeros of the requested length; templates and locale as asked", async () => {
    const apiKey = await newKey();
    for (const [length, template, locale] of [
      [4, "login_code", "en"],
      [8, "password_reset_code", "ka"],
      [7, "verification_code", "en"],
    ] as const) {
      const response = await start(apiKey, key(), {
        to: `+99555500010${length}`,
        template,
        locale,
        code_length: length,
      });
      expect(response.status).toBe(201);
      const started = await json(response);
      expect(started).toMatchObject({ template, locale, status: "pending" });
      // One zero too few is a wrong code; the right length approves.
      const short = await check(apiKey, started.id, { code: "0".repeat(length - 1) });
      expect(await json(short)).toMatchObject({ status: "pending", attempts_remaining: 4 });
      const right = await check(apiKey, started.id, { code: "0".repeat(length) });
      expect(await json(right)).toMatchObject({ status: "approved", attempts_remaining: 4 });
    }
  });

  it("wrong codes count down; the fifth ends it as max_attempts_reached; a sixth is 409 and the right code no longer works", async () => {
    const apiKey = await newKey();
    const started = await json(await start(apiKey, key(), { to: "+995555000201" }));
    for (let remaining = 4; remaining >= 1; remaining--) {
      const response = await check(apiKey, started.id, { code: "999999" });
      expect(response.status).toBe(200);
      expect(await json(response)).toMatchObject({ status: "pending", attempts_remaining: remaining });
    }
    const fifth = await check(apiKey, started.id, { code: "999999" });
    expect(fifth.status).toBe(200);
    expect(await json(fifth)).toMatchObject({ status: "max_attempts_reached", attempts_remaining: 0 });
    const sixth = await check(apiKey, started.id, { code: "000000" });
    const body = await expectError(sixth, 409, "verification_not_pending");
    expect(body.error.message).toContain("max_attempts_reached");
    expect(await json(await get(apiKey, started.id))).toMatchObject({
      status: "max_attempts_reached",
      attempts_remaining: 0,
    });
  });

  it("a code's surrounding whitespace is trimmed, whitespace inside it is not; only whitespace is 400 (issue 53, item 2c)", async () => {
    const apiKey = await newKey();
    const inside = await json(await start(apiKey, key(), { to: "+995555000211" }));
    // Inside the code: a wrong code, one attempt fewer.
    for (const [code, remaining] of [
      ["000 000", 4],
      ["00\u00a00000", 3],
    ] as const)
      expect(await json(await check(apiKey, inside.id, { code }))).toMatchObject({
        status: "pending",
        attempts_remaining: remaining,
      });
    // Nothing but whitespace: no code at all, nothing counted.
    for (const code of ["   ", "\t\n"])
      await expectError(await check(apiKey, inside.id, { code }), 400, "invalid_request");
    expect((await json(await get(apiKey, inside.id))).attempts_remaining).toBe(3);
    // Around it (spaces, a tab, a line break, a no-break space as pasted or autofilled): the code itself.
    for (const [to, code] of [
      ["+995555000212", " 000000 "],
      ["+995555000213", "\t000000\r\n"],
      ["+995555000214", "\u00a0000000"],
    ] as const) {
      const started = await json(await start(apiKey, key(), { to }));
      expect(await json(await check(apiKey, started.id, { code }))).toMatchObject({
        status: "approved",
        attempts_remaining: 5,
      });
    }
  });

  it("replays a start (200, the first answer unchanged, no second SMS) and refuses the key with another request (409)", async () => {
    const apiKey = await newKey();
    const idem = key();
    const first = await start(apiKey, idem, { to: "+995555000301", locale: "en" });
    expect(first.status).toBe(201);
    const original = await json(first);
    await check(apiKey, original.id, { code: "000000" });
    const replay = await start(apiKey, idem, { to: "+995555000301", locale: "en" });
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await json(replay)).toEqual(original);
    // The defaults are part of the request: the same request spelled out is the same.
    const spelled = await start(apiKey, idem, {
      to: "+995555000301",
      locale: "en",
      template: "verification_code",
      code_length: 6,
    });
    expect(spelled.status).toBe(200);
    for (const other of [
      { to: "+995555000302", locale: "en" },
      { to: "+995555000301", locale: "ka" },
      { to: "+995555000301", locale: "en", code_length: 4 },
      { to: "+995555000301", locale: "en", template: "login_code" },
    ]) {
      await expectError(await start(apiKey, idem, other), 409, "idempotency_key_reused");
    }
    // A key used for a message is not a verification's, and the other way round.
    const messageKey = key();
    const sent = await call(
      "/v1/messages",
      sendMessageRequest(apiKey, messageKey, {
        to: "+995555000303",
        template: "verification_code",
        variables: { code: "4821" },
      }),
    );
    expect(sent.status).toBe(201);
    await expectError(
      await start(apiKey, messageKey, { to: "+995555000303" }),
      409,
      "idempotency_key_reused",
    );
    const sentAgain = await call(
      "/v1/messages",
      sendMessageRequest(apiKey, idem, {
        to: "+995555000301",
        template: "verification_code",
        variables: { code: "000000" },
        locale: "en",
      }),
    );
    await expectError(sentAgain, 409, "idempotency_key_reused");
  });

  it("a new verification to the same number cancels the pending one (same project and mode only)", async () => {
    const apiKey = await newKey();
    const otherProject = await newKey();
    const to = "+995555000401";
    const old = await json(await start(apiKey, key(), { to }));
    const elsewhere = await json(await start(otherProject, key(), { to }));
    const otherNumber = await json(await start(apiKey, key(), { to: "+995555000402" }));
    const fresh = await json(await start(apiKey, key(), { to }));
    expect(fresh.status).toBe("pending");
    const refused = await check(apiKey, old.id, { code: "000000" });
    const body = await expectError(refused, 409, "verification_not_pending");
    expect(body.error.message).toContain("canceled");
    expect(await json(await get(apiKey, old.id))).toMatchObject({
      status: "canceled",
      attempts_remaining: 5,
    });
    expect((await json(await get(otherProject, elsewhere.id))).status).toBe("pending");
    expect((await json(await get(apiKey, otherNumber.id))).status).toBe("pending");
    expect((await json(await check(apiKey, fresh.id, { code: "000000" }))).status).toBe("approved");
    // An approved one is not canceled by a later start.
    await start(apiKey, key(), { to });
    expect((await json(await get(apiKey, fresh.id))).status).toBe("approved");
  });

  it("the simulator numbers: rejected → send_failed; unreachable → 503 keeping nothing; indeterminate and undeliverable → pending", async () => {
    const apiKey = await newKey();
    const readMessage = async (id: string) =>
      (await (
        await call(`/v1/messages/${id}`, { headers: { Authorization: `Bearer ${apiKey}` } })
      ).json()) as {
        status: string;
      };

    const [startedBefore, failedBefore] = [
      await metric(server, "test", "started"),
      await metric(server, "test", "failed"),
    ];
    const rejected = await start(apiKey, key(), { to: SIM.rejected });
    expect(rejected.status).toBe(201);
    const failed = await json(rejected);
    expect(failed).toMatchObject({ status: "send_failed", to: "+9955••••••01" });
    expect((await readMessage(failed.message_id)).status).toBe("failed");
    const body = await expectError(
      await check(apiKey, failed.id, { code: "000000" }),
      409,
      "verification_not_pending",
    );
    expect(body.error.message).toContain("send_failed");
    expect((await json(await get(apiKey, failed.id))).status).toBe("send_failed");

    const idem = key();
    const unreachable = await start(apiKey, idem, { to: SIM.unreachable });
    await expectError(unreachable, 503, "provider_unavailable");
    expect(Number(unreachable.headers.get("retry-after"))).toBeGreaterThan(0);
    // Nothing kept: the key is free again, even for another request.
    const retried = await start(apiKey, idem, { to: "+995555000501" });
    expect(retried.status).toBe(201);

    const unknown = await json(await start(apiKey, key(), { to: SIM.indeterminate }));
    expect(unknown.status).toBe("pending");
    expect((await readMessage(unknown.message_id)).status).toBe("unknown");

    const undeliverable = await json(await start(apiKey, key(), { to: SIM.undeliverable }));
    expect(undeliverable.status).toBe("pending");
    await until(async () => (await readMessage(undeliverable.message_id)).status === "undeliverable", 30_000);
    expect((await json(await get(apiKey, undeliverable.id))).status).toBe("pending");
    // Metrics: three started (ordinary, 0003, 0004), one failed; the 503 is neither.
    expect(await metric(server, "test", "started")).toBe(startedBefore + 3);
    expect(await metric(server, "test", "failed")).toBe(failedBefore + 1);
  });

  it("answers 404 verification_not_found for unknown, malformed and other projects' ids", async () => {
    const apiKey = await newKey();
    const other = await newKey();
    const theirs = await json(await start(other, key(), { to: "+995555000601" }));
    for (const id of [theirs.id, "vrf_00000000000000000000000000", "nope", theirs.message_id]) {
      const read = await expectError(await get(apiKey, id), 404, "verification_not_found");
      expect(read.error.message).toBe("No verification with this id exists in this project.");
      await expectError(await check(apiKey, id, { code: "000000" }), 404, "verification_not_found");
    }
    // Nothing was counted against their verification.
    expect((await json(await get(other, theirs.id))).attempts_remaining).toBe(5);
  });

  it("refuses invalid starts and checks with the contract's codes, before anything is written", async () => {
    const apiKey = await newKey();
    const cases: Array<[unknown, number, string]> = [
      [{}, 400, "invalid_recipient"],
      [{ to: "+995 555 123456" }, 400, "invalid_recipient"],
      [{ to: "+995555123456", template: "welcome" }, 400, "invalid_template"],
      [{ to: "+995555123456", code_length: 3 }, 400, "invalid_request"],
      [{ to: "+995555123456", code_length: 9 }, 400, "invalid_request"],
      [{ to: "+995555123456", code_length: 6.5 }, 400, "invalid_request"],
      // A JSON body's number is a number: the string "6" is refused, not read as 6 (issue 53).
      [{ to: "+995555123456", code_length: "6" }, 400, "invalid_request"],
      [{ to: "+995555123456", locale: "ru" }, 400, "invalid_request"],
      [{ to: "+995555123456", code: "123456" }, 400, "invalid_request"],
      [{ to: "+995555123456", variables: { code: "1" } }, 400, "invalid_request"],
      ["[1]", 400, "invalid_request"],
      ["{", 400, "invalid_request"],
    ];
    for (const [body, status, code] of cases) {
      await expectError(await start(apiKey, key(), body), status, code);
    }
    await expectError(await start(apiKey, null, { to: ORDINARY }), 400, "idempotency_key_required");
    await expectError(
      await start(apiKey, key(), { to: ORDINARY }, { "Content-Type": "text/plain" }),
      415,
      "unsupported_media_type",
    );
    await expectError(await start("sk_test_nope", key(), { to: ORDINARY }), 401, "invalid_api_key");
    const started = await json(await start(apiKey, key(), { to: "+995555000701" }));
    for (const body of [
      {},
      { code: 123456 },
      { code: "" },
      { code: "1".repeat(17) },
      { code: "0", extra: 1 },
    ]) {
      await expectError(await check(apiKey, started.id, body), 400, "invalid_request");
    }
    // None of them counted.
    expect((await json(await get(apiKey, started.id))).attempts_remaining).toBe(5);
    const unauthorized = await call(`/v1/verifications/${started.id}/check`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ code: "000000" }),
    });
    await expectError(unauthorized, 401, "unauthorized");
  });

  it("20 simultaneous right checks: one transition to approved, answered 200 approved once and 409 nineteen times", async () => {
    const apiKey = await newKey();
    const started = await json(await start(apiKey, key(), { to: "+995555000801" }));
    const before = await metric(server, "test", "approved");
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => check(apiKey, started.id, { code: "000000" })),
    );
    const bodies = (await Promise.all(answers.map((r) => r.json()))) as Array<VerificationJson & ErrorJson>;
    expect(answers.map((r) => r.status).sort()).toEqual([200, ...Array(19).fill(409)]);
    expect(bodies.filter((b) => b.status === "approved")).toHaveLength(1);
    expect(bodies.filter((b) => b.error?.code === "verification_not_pending")).toHaveLength(19);
    expect(await metric(server, "test", "approved")).toBe(before + 1);
    expect(await json(await get(apiKey, started.id))).toMatchObject({
      status: "approved",
      attempts_remaining: 5,
    });
  });

  it("20 simultaneous wrong checks: five are counted, never a sixth, never below zero", async () => {
    const apiKey = await newKey();
    const started = await json(await start(apiKey, key(), { to: "+995555000802" }));
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => check(apiKey, started.id, { code: "111111" })),
    );
    const outcomes = await Promise.all(
      answers.map(async (response) => {
        const body = (await response.json()) as VerificationJson & ErrorJson;
        return response.status === 200 ? `${body.status}:${body.attempts_remaining}` : body.error.code;
      }),
    );
    expect(outcomes.filter((o) => o.startsWith("pending:")).sort()).toEqual([
      "pending:1",
      "pending:2",
      "pending:3",
      "pending:4",
    ]);
    expect(outcomes.filter((o) => o === "max_attempts_reached:0")).toHaveLength(1);
    expect(outcomes.filter((o) => o === "verification_not_pending")).toHaveLength(15);
    expect(await json(await get(apiKey, started.id))).toMatchObject({
      status: "max_attempts_reached",
      attempts_remaining: 0,
    });
    await expectError(await check(apiKey, started.id, { code: "000000" }), 409, "verification_not_pending");
  });
});

describe.each(backends)(
  "verification checks are rate-limited per project and per address on %s",
  (backend) => {
    let server: ServerProcess;
    let seq = 0;
    const call = (path: string, init?: RequestInit) => fetch(`${server.baseUrl}${path}`, init);
    const { start, check } = verificationClient(call);
    const newKey = async () => (await createTestKey(call)).api_key;

    beforeAll(async () => {
      server = await startServer({
        backend,
        env: {
          ...LIMITS,
          VERIFICATION_CHECKS_PER_MINUTE: "4",
          VERIFICATION_CHECKS_PER_ADDRESS_PER_MINUTE: "6",
        },
      });
      cleanups.push(() => server.cleanup());
    }, 120_000);

    it("a project's fifth check in a minute and the address's seventh are 429 rate_limited with Retry-After <= 60, counted by neither", async () => {
      // Every window is a calendar minute: a round that crossed one is tried again with new projects.
      let outcome: { statuses: number[]; refusals: Response[] } | undefined;
      for (let round = 0; round < 3 && !outcome; round++) {
        const minute = Math.floor(Date.now() / 60_000);
        const [a, b] = [await newKey(), await newKey()];
        const va = (await (await start(a, `rl-${++seq}`, { to: ORDINARY })).json()) as VerificationJson;
        const vb = (await (await start(b, `rl-${++seq}`, { to: ORDINARY })).json()) as VerificationJson;
        const responses: Response[] = [];
        // Project a: four wrong codes pass (4 attempts of 5), the fifth check is the project's limit.
        for (let i = 0; i < 5; i++) responses.push(await check(a, va.id, { code: "111111" }));
        // Project b, same address: two more pass (the address's 5th and 6th), the third is the address's limit.
        for (let i = 0; i < 3; i++) responses.push(await check(b, vb.id, { code: "000000" }));
        if (Math.floor(Date.now() / 60_000) !== minute) continue;
        outcome = { statuses: responses.map((r) => r.status), refusals: [responses[4]!, responses[7]!] };
        for (const r of responses.filter((r) => r.status !== 429)) await r.body?.cancel();
      }
      expect(outcome, "three rounds each crossed a minute").toBeDefined();
      expect(outcome!.statuses).toEqual([200, 200, 200, 200, 429, 200, 409, 429]);
      for (const refusal of outcome!.refusals) {
        const body = await expectError(refusal, 429, "rate_limited");
        expect(body.error.message).toContain("verification checks");
        const retryAfter = Number(refusal.headers.get("retry-after"));
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        expect(retryAfter).toBeLessThanOrEqual(60);
      }
    });
  },
);

describe.skipIf(!hasPostgres)("live verifications over HTTP (PostgreSQL, fake uBill)", () => {
  let server: ServerProcess;
  let fake: FakeUbill;
  let db: PrismaDatabase;
  let seq = 0;
  const key = (label = "live") => `${label}-${++seq}`;
  const call = (path: string, init?: RequestInit) => fetch(`${server.baseUrl}${path}`, init);
  const { start, check, get } = verificationClient(call);
  const json = async (response: Response) => (await response.json()) as VerificationJson;
  const balance = async (projectId: string) =>
    (await db.prisma.project.findUniqueOrThrow({ where: { id: projectId } })).creditBalance;
  const lastSentCode = () => {
    const sends = fake.sends();
    const last = sends[sends.length - 1];
    if (!last) throw new Error("uBill received nothing");
    return codeInText(String((last.json as { text?: string }).text ?? last.body));
  };

  beforeAll(async () => {
    fake = await startFakeUbill();
    cleanups.push(() => fake.close());
    server = await startServer({
      backend: "postgres",
      internalToken: INTERNAL_TOKEN,
      env: {
        ...LIMITS,
        UBILL_BASE_URL: fake.baseUrl,
        UBILL_API_KEY: fake.apiKey,
        UBILL_DEFAULT_BRAND_ID: "1",
        RECIPIENT_MESSAGES_PER_MINUTE: "1000",
        RECIPIENT_MESSAGES_PER_DAY: "1000",
        VERIFICATIONS_PER_RECIPIENT_PER_MINUTE: "2",
        VERIFICATIONS_PER_RECIPIENT_PER_DAY: "3",
      },
    });
    cleanups.push(() => server.cleanup());
    db = withPrisma(await createDatabase({ databaseUrl: server.databaseUrl!, poolSize: 2 }));
    cleanups.push(() => db.close());
  }, 120_000);

  it("draws the code, sends it through uBill for one credit, approves it, and never a check costs credits", async () => {
    const { apiKey, projectId } = await insertLiveKey(db.prisma, { credits: 10 });
    const response = await start(apiKey, key(), { to: "+995599100001", code_length: 8, locale: "en" });
    expect(response.status).toBe(201);
    const started = await json(response);
    expect(started.status).toBe("pending");
    const code = lastSentCode();
    expect(code).toMatch(/^\d{8}$/);
    expect(fake.sends()[fake.sends().length - 1]!.body).toContain("995599100001");
    expect(await balance(projectId)).toBe(9);
    const row = await db.prisma.verification.findUniqueOrThrow({ where: { id: started.id } });
    expect(row.codeHash).toMatch(/^[^:]+:[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(code);
    const wrongCode = code === "00000000" ? "11111111" : "00000000";
    expect((await json(await check(apiKey, started.id, { code: wrongCode }))).attempts_remaining).toBe(4);
    expect((await json(await check(apiKey, started.id, { code }))).status).toBe("approved");
    expect(await json(await get(apiKey, started.id))).toMatchObject({
      status: "approved",
      attempts_remaining: 4,
    });
    expect(await balance(projectId)).toBe(9);
    // A second start draws another code (from the CSPRNG, not zeros).
    const second = await json(await start(apiKey, key(), { to: "+995599100002", code_length: 8 }));
    const other = lastSentCode();
    expect(other).not.toBe(code);
    expect((await json(await check(apiKey, second.id, { code: "0".repeat(8) }))).status).toBe("pending");
  });

  it("a delayed first SMS: start, start again (the same code re-sent), then the first SMS's code approves (issue 53, item 2a)", async () => {
    const { apiKey, projectId } = await insertLiveKey(db.prisma, { credits: 10 });
    const to = "+995599100011";
    const first = await json(await start(apiKey, key(), { to, code_length: 8 }));
    const firstSms = lastSentCode();
    const wrongCode = firstSms === "00000000" ? "11111111" : "00000000";
    expect((await json(await check(apiKey, first.id, { code: wrongCode }))).attempts_remaining).toBe(4);
    // The first SMS has not arrived: the user asks again. The same code goes out in a second SMS.
    const second = await json(await start(apiKey, key(), { to, code_length: 8 }));
    expect(second).toMatchObject({ status: "pending", attempts_remaining: 4, expires_at: first.expires_at });
    expect(second.id).not.toBe(first.id);
    expect(lastSentCode()).toBe(firstSms);
    expect(await balance(projectId)).toBe(8);
    expect((await json(await get(apiKey, first.id))).status).toBe("canceled");
    // The code is kept only encrypted (and only while pending), never in the clear.
    const row = await db.prisma.verification.findUniqueOrThrow({ where: { id: second.id } });
    expect(row.codeCiphertext).not.toBeNull();
    expect(Buffer.from(row.codeCiphertext!).toString("latin1")).not.toContain(firstSms);
    // Now the first SMS arrives, and its code is typed in.
    expect(await json(await check(apiKey, second.id, { code: firstSms }))).toMatchObject({
      status: "approved",
      attempts_remaining: 4,
    });
    const approved = await db.prisma.verification.findUniqueOrThrow({ where: { id: second.id } });
    expect(approved.codeCiphertext).toBeNull();
  });

  it("a uBill rejection is send_failed with the credit refunded; too few credits is 402 with nothing kept", async () => {
    const { apiKey, projectId } = await insertLiveKey(db.prisma, { credits: 1 });
    fake.replyToNumber("+995599100101", { kind: "status", statusId: 50 });
    const response = await start(apiKey, key(), { to: "+995599100101" });
    expect(response.status).toBe(201);
    const failed = await json(response);
    expect(failed.status).toBe("send_failed");
    expect(await balance(projectId)).toBe(1);
    const entries = await db.prisma.creditLedgerEntry.findMany({
      where: { projectId },
      orderBy: { createdAt: "asc" },
    });
    expect(entries.map((e) => [e.kind, e.amount])).toEqual([
      ["grant_paid", 1],
      ["reservation", -1],
      ["refund", 1],
    ]);
    await expectError(
      await check(apiKey, failed.id, { code: lastSentCode() }),
      409,
      "verification_not_pending",
    );

    const ok = await json(await start(apiKey, key(), { to: "+995599100102" }));
    expect(ok.status).toBe("pending");
    expect(await balance(projectId)).toBe(0);
    const count = await db.prisma.verification.count({ where: { projectId } });
    await expectError(await start(apiKey, key(), { to: "+995599100103" }), 402, "insufficient_credits");
    expect(await db.prisma.verification.count({ where: { projectId } })).toBe(count);
  });

  it("anti-pumping: a number's starts per minute (429 rate_limited, Retry-After ≤ 60) and per day (429 daily_limit_reached, midnight UTC); replays pass", async () => {
    const { apiKey } = await insertLiveKey(db.prisma, { credits: 100 });
    // Per minute: two starts, the third refused (again if the minute turned meanwhile).
    let refused: Response | undefined;
    let replayKey = "";
    for (let round = 0; round < 3 && !refused; round++) {
      const to = `+99559910020${round}`;
      const minute = Math.floor(Date.now() / 60_000);
      replayKey = key();
      expect((await start(apiKey, replayKey, { to })).status).toBe(201);
      expect((await start(apiKey, key(), { to })).status).toBe(201);
      const third = await start(apiKey, key(), { to });
      if (Math.floor(Date.now() / 60_000) !== minute && third.status === 201) continue;
      refused = third;
      // A replay of a counted start is answered, not refused.
      expect((await start(apiKey, replayKey, { to })).status).toBe(200);
    }
    if (!refused) throw new Error("no refusal in three rounds");
    const body = await expectError(refused, 429, "rate_limited");
    expect(body.error.message).toContain("this number");
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);

    // Per day: three starts for one number (in at most two minutes' windows), the fourth refused.
    const to = "+995599100299";
    let started = 0;
    let daily: Response | undefined;
    for (let i = 0; i < 8 && !daily; i++) {
      const response = await start(apiKey, key(), { to });
      if (response.status === 201) started++;
      else if (response.status === 429) {
        const copy = response.clone();
        const code = ((await copy.json()) as ErrorJson).error.code;
        if (code === "daily_limit_reached") daily = response;
        else
          await new Promise((resolve) =>
            setTimeout(resolve, Number(response.headers.get("retry-after")) * 1000),
          );
      }
    }
    expect(started).toBe(3);
    if (!daily) throw new Error("no daily refusal");
    const dailyBody = await expectError(daily, 429, "daily_limit_reached");
    const midnight = new Date(Math.floor(Date.now() / 86_400_000 + 1) * 86_400_000)
      .toISOString()
      .replace(".000Z", "Z");
    expect(dailyBody.error.message).toContain(`${midnight} (midnight UTC)`);
    // Test keys are not limited per number.
    const testKey = (await createTestKey(call)).api_key;
    for (let i = 0; i < 4; i++) expect((await start(testKey, key(), { to })).status).toBe(201);
  }, 150_000);
});
