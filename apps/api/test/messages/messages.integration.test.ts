// Messages (issue: send, read, idempotency, simulator, status check), in
// process on both backends with a manual clock: the validation order, replay
// exactness, 24-hour idempotency, scoping, the write-ahead lifecycle and its
// recovery sweep, the 503 release, the rate limit, and the status check
// (delay, monotonicity, updated_at, deadline, one check per round).
import { Buffer } from "node:buffer";
import { newId } from "@sms/crypto";
import { availableBackends } from "@sms/db/testing";
import { canonicalRequest, IDEMPOTENCY_TTL_MS, maskRecipient } from "@sms/domain";
import { type FakeUbill, getRefusingPort, startFakeUbill } from "@sms/provider-ubill/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTestKey, sendMessageRequest, startTestApp, type TestApp } from "../harness.ts";
import {
  body,
  expectMessageShape,
  insertLiveKey,
  type MessageJson,
  ORDINARY,
  type SendBody,
  SIM,
  until,
} from "../support/messages.ts";

const backends = await availableBackends();

const KEY_LIMITS = {
  TEST_KEYS_PER_MINUTE: "10000",
  TEST_KEYS_PER_DAY: "10000",
  TEST_KEYS_PER_DAY_TOTAL: "100000",
};
type ErrorJson = { error: { code: string; message: string; request_id: string } };

/** A header value as it travels: UTF-8 bytes, one character per byte (what fetch's Headers accept). */
const utf8Header = (text: string) => Buffer.from(text, "utf8").toString("latin1");

describe.each(backends)("messages on %s", (backend) => {
  let t: TestApp;
  let fake: FakeUbill;
  let seq = 0;
  const key = (label = "k") => `${label}-${++seq}`;

  beforeAll(async () => {
    fake = await startFakeUbill();
    t = await startTestApp({
      backend,
      env: {
        ...KEY_LIMITS,
        MESSAGES_PER_MINUTE: "1000",
        UBILL_BASE_URL: fake.baseUrl,
        UBILL_API_KEY: fake.apiKey,
        UBILL_DEFAULT_BRAND_ID: "1",
        UBILL_SUBMIT_TIMEOUT_MS: "10000",
      },
    });
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  const newKey = async () => (await createTestKey(t.request)).api_key;
  const send = (
    apiKey: string,
    idempotencyKey: string | null,
    payload: unknown,
    headers: Record<string, string> = {},
  ) => t.request("/v1/messages", sendMessageRequest(apiKey, idempotencyKey, payload, headers));
  const read = (apiKey: string, id: string) =>
    t.request(`/v1/messages/${id}`, { headers: { Authorization: `Bearer ${apiKey}` } });
  const messageCount = (projectId?: string) =>
    t.app.db.prisma.message.count({ where: projectId ? { projectId } : {} });
  /** One round of a periodic job, as one instance would run it (no timers started). */
  const runJob = (name: "status-check" | "queued-recovery") => {
    const job = t.app.jobs.find((candidate) => candidate.name === name);
    if (!job) throw new Error(`no job ${name}`);
    return job.run();
  };

  describe("validation order", () => {
    let apiKey: string;
    beforeAll(async () => {
      apiKey = await newKey();
    });

    const badBody = { to: "0555", template: "nope", variables: "x", text: "hi" };
    type Row = [label: string, make: () => RequestInit, status: number, code: string, mentions?: RegExp];
    const post = (init: {
      auth?: string | null;
      key?: string | null;
      type?: string | null;
      raw?: string;
    }) => {
      const headers: Record<string, string> = {};
      if (init.auth !== null) headers.Authorization = init.auth ?? `Bearer ${apiKey}`;
      if (init.key !== null) headers["Idempotency-Key"] = init.key ?? key("v");
      if (init.type !== null) headers["Content-Type"] = init.type ?? "application/json";
      return { method: "POST", headers, body: init.raw ?? JSON.stringify(body()) };
    };
    const rows: Row[] = [
      [
        "no credentials, whatever else is wrong",
        () => post({ auth: null, key: null, type: "text/plain", raw: "{" }),
        401,
        "unauthorized",
      ],
      [
        "an unknown key, whatever else is wrong",
        () => post({ auth: "Bearer sk_test_nope", key: null, raw: "[]" }),
        401,
        "invalid_api_key",
      ],
      [
        "missing Idempotency-Key before the body",
        () => post({ key: null, raw: JSON.stringify(badBody) }),
        400,
        "idempotency_key_required",
      ],
      ["empty Idempotency-Key", () => post({ key: "" }), 400, "idempotency_key_required"],
      [
        "201-character Idempotency-Key",
        () => post({ key: "x".repeat(201), raw: "{" }),
        400,
        "invalid_request",
        /Idempotency-Key/,
      ],
      ["wrong content type after the key", () => post({ type: "text/plain" }), 415, "unsupported_media_type"],
      ["malformed JSON", () => post({ raw: '{"to": ' }), 400, "invalid_request", /JSON/],
      ["an array body", () => post({ raw: "[]" }), 400, "invalid_request"],
      ["a string body", () => post({ raw: '"hi"' }), 400, "invalid_request"],
      [
        "an extra field text before a bad to",
        () => post({ raw: JSON.stringify(badBody) }),
        400,
        "invalid_request",
        /text/,
      ],
      [
        "an extra field from",
        () => post({ raw: JSON.stringify({ ...body(), from: "ACME" }) }),
        400,
        "invalid_request",
        /from/,
      ],
      [
        "locale fr before a bad to",
        () => post({ raw: JSON.stringify({ ...body({ to: "x" }), locale: "fr" }) }),
        400,
        "invalid_request",
        /locale/,
      ],
      [
        "locale null",
        () => post({ raw: JSON.stringify({ ...body(), locale: null }) }),
        400,
        "invalid_request",
        /locale/,
      ],
      [
        "to missing before a bad template",
        () => post({ raw: JSON.stringify({ template: "nope", variables: {} }) }),
        400,
        "invalid_recipient",
        /\+9955/,
      ],
      [
        "to a number",
        () => post({ raw: JSON.stringify(body({ to: 995555123456 as unknown as string })) }),
        400,
        "invalid_recipient",
      ],
      [
        "to without +",
        () => post({ raw: JSON.stringify(body({ to: "995555123456" })) }),
        400,
        "invalid_recipient",
      ],
      [
        "to with spaces",
        () => post({ raw: JSON.stringify(body({ to: "+995 555 123 456" })) }),
        400,
        "invalid_recipient",
      ],
      [
        "to with seven digits",
        () => post({ raw: JSON.stringify(body({ to: "+99555512345" })) }),
        400,
        "invalid_recipient",
      ],
      [
        "to with nine digits",
        () => post({ raw: JSON.stringify(body({ to: "+9955551234567" })) }),
        400,
        "invalid_recipient",
      ],
      [
        "to a landline",
        () => post({ raw: JSON.stringify(body({ to: "+995322123456" })) }),
        400,
        "invalid_recipient",
      ],
      [
        "to with Arabic-Indic digits",
        () => post({ raw: JSON.stringify(body({ to: "+9955٥٥٥١٢٣٤٥" })) }),
        400,
        "invalid_recipient",
      ],
      [
        "to with a trailing newline",
        () => post({ raw: JSON.stringify(body({ to: `${ORDINARY}\n` })) }),
        400,
        "invalid_recipient",
      ],
      [
        "template missing before bad variables",
        () => post({ raw: JSON.stringify({ to: ORDINARY, variables: 1 }) }),
        400,
        "invalid_template",
        /verification_code, login_code, password_reset_code/,
      ],
      [
        "template unknown",
        () => post({ raw: JSON.stringify(body({ template: "welcome" })) }),
        400,
        "invalid_template",
        /password_reset_code/,
      ],
      [
        "template a number",
        () => post({ raw: JSON.stringify(body({ template: 7 as unknown as string })) }),
        400,
        "invalid_template",
      ],
      [
        "variables missing",
        () => post({ raw: JSON.stringify({ to: ORDINARY, template: "login_code" }) }),
        400,
        "invalid_variables",
        /variables/,
      ],
      [
        "variables an array",
        () => post({ raw: JSON.stringify(body({ variables: [] as unknown as Record<string, string> })) }),
        400,
        "invalid_variables",
      ],
      [
        "variables null",
        () => post({ raw: JSON.stringify(body({ variables: null as unknown as Record<string, string> })) }),
        400,
        "invalid_variables",
      ],
      [
        "code not a string",
        () =>
          post({
            raw: JSON.stringify(body({ variables: { code: 1234 } as unknown as Record<string, string> })),
          }),
        400,
        "invalid_variables",
        /code/,
      ],
      [
        "code too short",
        () => post({ raw: JSON.stringify(body({ variables: { code: "123" } })) }),
        400,
        "invalid_variables",
        /code/,
      ],
      [
        "an extra variable",
        () => post({ raw: JSON.stringify(body({ variables: { code: "1234", name: "x" } })) }),
        400,
        "invalid_variables",
        /name/,
      ],
      // JSON.parse makes `__proto__` an own key; a copy made by assignment
      // would drop it. Whatever its value, it is an extra variable.
      ...(
        [
          ['{"code":"1234","__proto__":"x"}', "a string"],
          ['{"code":"1234","__proto__":{"link":"https://evil.example"}}', "an object holding a link"],
          ['{"__proto__":null,"code":"1234"}', "null"],
          ['{"code":"1234","constructor":"x"}', "another inherited name"],
        ] as const
      ).map(
        ([variables, label]): Row => [
          `a variable named __proto__ or constructor (${label})`,
          () =>
            post({
              raw: `{"to":"+995555123456","template":"verification_code","variables":${variables},"locale":"en"}`,
            }),
          400,
          "invalid_variables",
          /__proto__|constructor/,
        ],
      ),
      [
        "a top-level field named __proto__",
        () =>
          post({
            raw: '{"to":"+995555123456","template":"verification_code","variables":{"code":"1234"},"__proto__":{"text":"hi"}}',
          }),
        400,
        "invalid_request",
      ],
      [
        "201 Cyrillic characters in Idempotency-Key (sent as UTF-8)",
        () => post({ key: utf8Header("ж".repeat(201)) }),
        400,
        "invalid_request",
        /Idempotency-Key/,
      ],
      [
        "minutes missing",
        () => post({ raw: JSON.stringify(body({ template: "password_reset_code" })) }),
        400,
        "invalid_variables",
        /minutes/,
      ],
      [
        "minutes with a leading zero",
        () =>
          post({
            raw: JSON.stringify(
              body({ template: "password_reset_code", variables: { code: "1234", minutes: "05" } }),
            ),
          }),
        400,
        "invalid_variables",
        /minutes/,
      ],
    ];

    it.each(rows)("%s → %i %s", async (_label, make, status, code, mentions) => {
      const response = await t.request("/v1/messages", make());
      expect(response.status).toBe(status);
      const json = (await response.json()) as ErrorJson;
      expect(json.error.code).toBe(code);
      expect(json.error.request_id).toBe(response.headers.get("x-request-id"));
      if (mentions) expect(json.error.message).toMatch(mentions);
    });

    it("counts Idempotency-Key in characters: 200 Cyrillic characters (400 bytes) are accepted, and replay", async () => {
      const idempotencyKey = "ключ".repeat(50);
      const first = await send(apiKey, utf8Header(idempotencyKey), body());
      expect(first.status).toBe(201);
      const replay = await send(apiKey, utf8Header(idempotencyKey), body());
      expect(replay.status).toBe(200);
      expect(await replay.json()).toEqual(await first.json());
      // Stored as the characters the client sent.
      expect(await t.app.db.prisma.idempotencyRecord.count({ where: { key: idempotencyKey } })).toBe(1);
    });

    it("accepts a 200-character Idempotency-Key and stores no validation failure", async () => {
      const idempotencyKey = "k".repeat(200);
      const bad = await send(apiKey, idempotencyKey, body({ to: "+99555" }));
      expect(bad.status).toBe(400);
      // The failure was not recorded: the same key now sends (no 409, no replay of the 400).
      const good = await send(apiKey, idempotencyKey, body());
      expect(good.status).toBe(201);
    });

    it("answers a suspended project with 403 before looking at anything else", async () => {
      const suspendedKey = await newKey();
      const hash = (await import("@sms/crypto")).sha256Hex;
      const row = await t.app.db.prisma.apiKey.findUniqueOrThrow({
        where: { keyHash: await hash(suspendedKey) },
      });
      await t.app.db.prisma.project.update({
        where: { id: row.projectId },
        data: { suspendedAt: new Date() },
      });
      const response = await send(suspendedKey, null, "{");
      expect(response.status).toBe(403);
      expect(((await response.json()) as ErrorJson).error.code).toBe("project_suspended");
    });
  });

  describe("creation, the simulator and the Message resource", () => {
    it("answers 201 with all eight fields, the masked number and second-precision timestamps", async () => {
      const apiKey = await newKey();
      t.clock.set("2026-11-22T10:00:00.750Z");
      const response = await send(apiKey, key(), body());
      expect(response.status).toBe(201);
      expect(response.headers.get("ratelimit-limit")).toBe("1000");
      const message = (await response.json()) as MessageJson;
      expectMessageShape(message, ORDINARY);
      expect(message).toMatchObject({ status: "submitted", error: null, created_at: "2026-11-22T10:00:00Z" });
      expect(JSON.stringify(message)).not.toContain("555123456");
      const row = await t.app.db.prisma.message.findFirstOrThrow({ where: { id: message.id } });
      expect(row).toMatchObject({ sender: "SMSGE", provider: "simulator", mode: "test", creditsReserved: 0 });
    });

    it.each([
      ["rejected", SIM.rejected, "failed", "provider_rejected"],
      ["indeterminate", SIM.indeterminate, "unknown", "provider_unavailable"],
      ["undeliverable", SIM.undeliverable, "submitted", null],
    ] as const)("the %s test number answers 201 %s", async (_label, to, status, errorCode) => {
      const apiKey = await newKey();
      const response = await send(apiKey, key(), body({ to }));
      expect(response.status).toBe(201);
      const message = (await response.json()) as MessageJson;
      expectMessageShape(message, to);
      expect(message.status).toBe(status);
      expect(message.error?.code ?? null).toBe(errorCode);
    });

    it("answers 503 for the unreachable number, keeps nothing, and a retry with the same key is a fresh attempt", async () => {
      const apiKey = await newKey();
      const idempotencyKey = key("unreachable");
      const before = await messageCount();
      const first = await send(apiKey, idempotencyKey, body({ to: SIM.unreachable }));
      expect(first.status).toBe(503);
      expect(((await first.json()) as ErrorJson).error.code).toBe("provider_unavailable");
      expect(await messageCount()).toBe(before);
      expect(await t.app.db.prisma.idempotencyRecord.count({ where: { key: idempotencyKey } })).toBe(0);
      expect((await send(apiKey, idempotencyKey, body({ to: SIM.unreachable }))).status).toBe(503);
      // The key was released: even another body with it is a new send, not a 409.
      const retry = await send(apiKey, idempotencyKey, body());
      expect(retry.status).toBe(201);
    });

    it("uses the project's approved sender, or the shared default; the caller cannot choose", async () => {
      const apiKey = await newKey();
      const first = (await (await send(apiKey, key(), body())).json()) as MessageJson;
      const row = await t.app.db.prisma.message.findFirstOrThrow({ where: { id: first.id } });
      expect(row.sender).toBe("SMSGE");
      await t.app.db.prisma.project.update({ where: { id: row.projectId }, data: { sender: "ACME" } });
      t.app.deps.auth.forget();
      const second = (await (await send(apiKey, key(), body())).json()) as MessageJson;
      expect((await t.app.db.prisma.message.findFirstOrThrow({ where: { id: second.id } })).sender).toBe(
        "ACME",
      );
      const chosen = await send(apiKey, key(), { ...body(), sender: "EVIL" });
      expect(chosen.status).toBe(400);
    });
  });

  describe("idempotency", () => {
    it("replays the original response byte for byte, with Idempotent-Replayed, even after the message changed", async () => {
      const apiKey = await newKey();
      const idempotencyKey = key("replay");
      const first = await send(apiKey, idempotencyKey, body());
      const firstText = await first.text();
      t.clock.advance(6_000);
      await runJob("status-check");
      const message = JSON.parse(firstText) as MessageJson;
      const current = (await (await read(apiKey, message.id)).json()) as MessageJson;
      expect(current.status).toBe("delivered");

      const replay = await send(apiKey, idempotencyKey, body());
      expect(replay.status).toBe(200);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(await replay.text()).toBe(firstText);
      expect(first.headers.get("idempotent-replayed")).toBeNull();
    });

    it("treats variables in another order and an omitted default locale as the same request", async () => {
      const apiKey = await newKey();
      const idempotencyKey = key();
      const original = {
        to: ORDINARY,
        template: "password_reset_code",
        variables: { code: "1234", minutes: "15" },
        locale: "ka",
      };
      expect((await send(apiKey, idempotencyKey, original)).status).toBe(201);
      const reordered = {
        template: "password_reset_code",
        variables: { minutes: "15", code: "1234" },
        to: ORDINARY,
      };
      expect((await send(apiKey, idempotencyKey, reordered)).status).toBe(200);
    });

    it.each([
      ["another to", { to: "+995555123457" }],
      ["another template", { template: "login_code" }],
      ["other variables", { variables: { code: "482914" } }],
      ["another locale", { locale: "ka" }],
    ] as Array<[string, Partial<SendBody>]>)(
      "answers 409 idempotency_key_reused for the same key with %s",
      async (_label, change) => {
        const apiKey = await newKey();
        const idempotencyKey = key();
        expect((await send(apiKey, idempotencyKey, body())).status).toBe(201);
        const conflict = await send(apiKey, idempotencyKey, body(change));
        expect(conflict.status).toBe(409);
        expect(((await conflict.json()) as ErrorJson).error.code).toBe("idempotency_key_reused");
      },
    );

    it("is scoped to the project: another project's same key is a new message", async () => {
      const [a, b] = [await newKey(), await newKey()];
      const idempotencyKey = key("shared");
      const first = (await (await send(a, idempotencyKey, body())).json()) as MessageJson;
      const other = await send(b, idempotencyKey, body());
      expect(other.status).toBe(201);
      expect(((await other.json()) as MessageJson).id).not.toBe(first.id);
    });

    it("keeps a record 24 hours: replayed just before, a new send just after", async () => {
      const apiKey = await newKey();
      const idempotencyKey = key("ttl");
      t.clock.set("2026-11-23T08:00:00Z");
      const first = (await (await send(apiKey, idempotencyKey, body())).json()) as MessageJson;
      t.clock.set("2026-11-24T07:59:59Z");
      expect((await send(apiKey, idempotencyKey, body({ to: "+995555000999" }))).status).toBe(409);
      const replay = await send(apiKey, idempotencyKey, body());
      expect(replay.status).toBe(200);
      t.clock.set("2026-11-24T08:00:00Z");
      const fresh = await send(apiKey, idempotencyKey, body({ to: "+995555000999" }));
      expect(fresh.status).toBe(201);
      const second = (await fresh.json()) as MessageJson;
      expect(second.id).not.toBe(first.id);
      // The new answer now owns the key.
      const again = await send(apiKey, idempotencyKey, body({ to: "+995555000999" }));
      expect(again.status).toBe(200);
      expect(((await again.json()) as MessageJson).id).toBe(second.id);
    });

    it("creates exactly one message for 50 identical requests at once; every duplicate waits and replays it", async () => {
      const apiKey = await newKey();
      const idempotencyKey = key("burst");
      const responses = await Promise.all(
        Array.from({ length: 50 }, () => send(apiKey, idempotencyKey, body())),
      );
      const statuses = responses.map((response) => response.status);
      expect(statuses.filter((status) => status === 201)).toHaveLength(1);
      expect(statuses.filter((status) => status === 200)).toHaveLength(49);
      const texts = await Promise.all(responses.map((response) => response.text()));
      // Byte for byte the first answer.
      expect(new Set(texts).size).toBe(1);
      for (const response of responses) {
        if (response.status === 200) expect(response.headers.get("idempotent-replayed")).toBe("true");
      }
      const row = await t.app.db.prisma.idempotencyRecord.findFirstOrThrow({
        where: { key: idempotencyKey },
      });
      expect(await t.app.db.prisma.message.count({ where: { projectId: row.projectId } })).toBe(1);
    });
  });

  describe("live keys", () => {
    it("reuses a test-mode key in live mode as a new send, reserves a credit, and reaches uBill only", async () => {
      const testKey = await createTestKey(t.request);
      const live = await insertLiveKey(t.app.db.prisma, { credits: 5 });
      // Same project, both modes: attach a live key to the test key's project.
      await t.app.db.prisma.apiKey.updateMany({
        where: { projectId: live.projectId },
        data: { projectId: testKey.project_id },
      });
      await t.app.db.prisma.project.update({
        where: { id: testKey.project_id },
        data: { creditBalance: 5, hasPaidCredits: true },
      });
      const idempotencyKey = key("modes");
      const sendsBefore = fake.sends().length;
      const inTest = (await (await send(testKey.api_key, idempotencyKey, body())).json()) as MessageJson;
      expect(fake.sends().length).toBe(sendsBefore);
      const inLive = await send(live.apiKey, idempotencyKey, body());
      expect(inLive.status).toBe(201);
      const liveMessage = (await inLive.json()) as MessageJson;
      expect(liveMessage.id).not.toBe(inTest.id);
      expect(liveMessage.status).toBe("submitted");
      expect(fake.sends().length).toBe(sendsBefore + 1);
      const project = await t.app.db.prisma.project.findUniqueOrThrow({
        where: { id: testKey.project_id },
      });
      expect(project.creditBalance).toBe(4);
    });

    it("refunds the reservation when uBill rejects the message (201 failed)", async () => {
      const live = await insertLiveKey(t.app.db.prisma, { credits: 3 });
      fake.replyNext({ kind: "status", statusId: 50 }, "send");
      const response = await send(live.apiKey, key(), body());
      expect(response.status).toBe(201);
      expect(((await response.json()) as MessageJson).status).toBe("failed");
      const project = await t.app.db.prisma.project.findUniqueOrThrow({ where: { id: live.projectId } });
      expect(project.creditBalance).toBe(3);
    });

    it("answers 402 with too few credits and keeps nothing", async () => {
      const live = await insertLiveKey(t.app.db.prisma, { credits: 0 });
      const idempotencyKey = key();
      const response = await send(live.apiKey, idempotencyKey, body());
      expect(response.status).toBe(402);
      expect(await messageCount(live.projectId)).toBe(0);
      expect(await t.app.db.prisma.idempotencyRecord.count({ where: { key: idempotencyKey } })).toBe(0);
    });

    it("recovers a message left queued: unknown, the key replays it, the late answer does not change it", async () => {
      const live = await insertLiveKey(t.app.db.prisma, { credits: 3 });
      const idempotencyKey = key("stuck");
      fake.replyNext({ kind: "slow", delayMs: 1_500 }, "send");
      const sendsBefore = fake.sends().length;
      const inFlight = send(live.apiKey, idempotencyKey, body());
      await until(() => fake.sends().length > sendsBefore, 5_000);

      // While the provider holds it: the message is queued, and a duplicate waits for its answer.
      const queued = await t.app.db.prisma.message.findFirstOrThrow({
        where: { projectId: live.projectId },
      });
      expect(queued.status).toBe("queued");
      const duplicate = send(live.apiKey, idempotencyKey, body());

      // The sweep finds it once it is old enough.
      t.clock.advance(30_000);
      expect((await runJob("queued-recovery")).recovered).toBe(0);
      t.clock.advance(31_000);
      expect((await runJob("queued-recovery")).recovered).toBe(1);
      const swept = (await (await read(live.apiKey, queued.id)).json()) as MessageJson;
      expect(swept).toMatchObject({ status: "unknown", error: { code: "provider_unavailable" } });
      // The waiting duplicate answers with the sweep's answer, as does a later retry.
      const waited = await duplicate;
      expect(waited.status).toBe(200);
      expect(await waited.json()).toEqual(swept);
      const replay = await send(live.apiKey, idempotencyKey, body());
      expect(replay.status).toBe(200);
      expect(await replay.json()).toEqual(swept);

      // The provider's late acceptance does not overwrite the sweep's answer.
      const late = await inFlight;
      expect(late.status).toBe(201);
      expect(await late.json()).toEqual(swept);
      expect(((await (await read(live.apiKey, queued.id)).json()) as MessageJson).status).toBe("unknown");
      // Credits stay charged for unknown.
      expect(
        (await t.app.db.prisma.project.findUniqueOrThrow({ where: { id: live.projectId } })).creditBalance,
      ).toBe(2);
      expect(fake.sends().length).toBe(sendsBefore + 1);
    });
  });

  describe("the status check", () => {
    const runStatusCheck = () => runJob("status-check");

    it("settles test messages once the simulated delay has passed, then never again", async () => {
      const apiKey = await newKey();
      t.clock.set("2026-11-25T12:00:00Z");
      const delivered = (await (await send(apiKey, key(), body())).json()) as MessageJson;
      const undeliverable = (await (
        await send(apiKey, key(), body({ to: SIM.undeliverable }))
      ).json()) as MessageJson;

      t.clock.advance(4_999);
      await runStatusCheck();
      expect(((await (await read(apiKey, delivered.id)).json()) as MessageJson).status).toBe("submitted");

      t.clock.advance(1);
      await runStatusCheck();
      const first = (await (await read(apiKey, delivered.id)).json()) as MessageJson;
      expect(first).toMatchObject({ status: "delivered", error: null, updated_at: "2026-11-25T12:00:05Z" });
      const second = (await (await read(apiKey, undeliverable.id)).json()) as MessageJson;
      expect(second.status).toBe("undeliverable");
      expect(second.error?.code).toBe("invalid_recipient");
      expect(second.updated_at).toBe("2026-11-25T12:00:05Z");

      // Final states never change, even if a row were due again.
      await t.app.db.prisma.message.updateMany({
        where: { id: { in: [delivered.id, undeliverable.id] } },
        data: { nextCheckAt: new Date("2026-11-25T12:00:00Z") },
      });
      t.clock.advance(60_000);
      await runStatusCheck();
      expect(await (await read(apiKey, delivered.id)).json()).toEqual(first);
      expect(await (await read(apiKey, undeliverable.id)).json()).toEqual(second);
    });

    it("changes updated_at only on a real change", async () => {
      const live = await insertLiveKey(t.app.db.prisma);
      t.clock.set("2026-11-26T12:00:00Z");
      const message = (await (await send(live.apiKey, key(), body())).json()) as MessageJson;
      // uBill keeps answering "sent" (pending).
      for (let round = 0; round < 3; round++) {
        t.clock.advance(20_000);
        await runStatusCheck();
      }
      const pending = (await (await read(live.apiKey, message.id)).json()) as MessageJson;
      expect(pending).toEqual(message);
      const row = await t.app.db.prisma.message.findFirstOrThrow({ where: { id: message.id } });
      fake.setReport(row.providerRef ?? "", "1");
      t.clock.advance(20_000);
      await runStatusCheck();
      const after = (await (await read(live.apiKey, message.id)).json()) as MessageJson;
      expect(after.status).toBe("delivered");
      expect(after.updated_at).toBe("2026-11-26T12:01:20Z");
    });

    it("turns a submitted message with no final result after 72 hours into unknown", async () => {
      const live = await insertLiveKey(t.app.db.prisma);
      t.clock.set("2026-11-27T12:00:00Z");
      const message = (await (await send(live.apiKey, key(), body())).json()) as MessageJson;
      t.clock.set("2026-11-30T11:59:00Z");
      await runStatusCheck();
      expect(((await (await read(live.apiKey, message.id)).json()) as MessageJson).status).toBe("submitted");
      t.clock.set("2026-11-30T12:00:30Z");
      await runStatusCheck();
      const expired = (await (await read(live.apiKey, message.id)).json()) as MessageJson;
      expect(expired).toMatchObject({ status: "unknown", error: { code: "provider_unavailable" } });
      expect(expired.updated_at).toBe("2026-11-30T12:00:30Z");
    });

    it("a round that starts while a slow batch is still being asked about (another instance, one interval later) does not ask again; what stays pending is due one interval after its answer", async () => {
      const live = await insertLiveKey(t.app.db.prisma);
      t.clock.set("2026-12-02T12:00:00Z");
      for (let i = 0; i < 3; i++) await send(live.apiKey, key(), body({ to: `+99555500020${i}` }));
      t.clock.advance(20_000);
      const reportsBefore = fake.requests.filter((request) => request.endpoint === "report").length;
      const reportsSince = () =>
        fake.requests.filter((request) => request.endpoint === "report").length - reportsBefore;
      // Long enough that the next round surely starts while these calls still wait, on a busy machine too.
      fake.setReportDelay(2_000);
      let first: Promise<unknown>;
      try {
        first = runStatusCheck();
        await vi.waitFor(() => expect(reportsSince()).toBeGreaterThanOrEqual(3), { timeout: 10_000 });
        // The first round's calls are still waiting for uBill when the next round starts.
        t.clock.advance(20_001);
        const second = await runStatusCheck();
        expect(second?.checked).toBe(0);
        await first;
      } finally {
        fake.setReportDelay(0);
      }
      const asked = reportsSince();
      // Each of the three was asked once (uBill keeps answering "sent"), and is due again an interval later.
      const rows = await t.app.db.prisma.message.findMany({
        where: { projectId: live.projectId },
        select: { status: true, nextCheckAt: true },
      });
      expect(rows).toHaveLength(3);
      for (const row of rows) {
        expect(row.status).toBe("submitted");
        // Answered at 12:00:40.001 (the clock moved while the calls waited): due at 12:01:00.001, not at the claim's longer hold.
        expect(row.nextCheckAt?.toISOString()).toBe("2026-12-02T12:01:00.001Z");
      }
      t.clock.advance(20_000);
      const third = await runStatusCheck();
      expect(third?.checked).toBeGreaterThanOrEqual(3);
      expect(reportsSince()).toBeGreaterThanOrEqual(asked + 3);
    });

    it("checks each due message once per round, however many rounds run at once", async () => {
      const live = await insertLiveKey(t.app.db.prisma);
      t.clock.set("2026-12-01T12:00:00Z");
      for (let i = 0; i < 6; i++) await send(live.apiKey, key(), body({ to: `+99555500010${i}` }));
      t.clock.advance(20_000);
      const due = await t.app.db.prisma.message.count({
        where: { status: "submitted", nextCheckAt: { lte: t.clock.now() } },
      });
      expect(due).toBeGreaterThanOrEqual(6);
      const reportsBefore = fake.requests.filter((request) => request.endpoint === "report").length;
      // Three instances' rounds at once.
      const [a, b, c] = await Promise.all([runStatusCheck(), runStatusCheck(), runStatusCheck()]);
      expect((a?.checked ?? 0) + (b?.checked ?? 0) + (c?.checked ?? 0)).toBe(due);
      const reports = fake.requests.filter((request) => request.endpoint === "report").slice(reportsBefore);
      expect(new Set(reports.map((request) => request.path)).size).toBe(reports.length);
    });
  });

  describe("GET /v1/messages/{message_id}", () => {
    it("reads the project's own message in the shape it was created in", async () => {
      const apiKey = await newKey();
      const created = (await (await send(apiKey, key(), body({ to: SIM.rejected }))).json()) as MessageJson;
      const response = await read(apiKey, created.id);
      expect(response.status).toBe(200);
      const message = (await response.json()) as MessageJson;
      expectMessageShape(message, SIM.rejected);
      expect(message).toEqual(created);
    });

    it("answers the same 404 for another project's id, an absent id (at any time an id can carry) and a malformed id", async () => {
      const [owner, stranger] = [await newKey(), await newKey()];
      const created = (await (await send(owner, key(), body())).json()) as MessageJson;
      const absent = `msg_${"0".repeat(26)}`;
      // Well-formed, at the last time an id can carry (the year 10889): read without the month bound.
      const last = `msg_7${"z".repeat(25)}`;
      const answers: Array<{ code: string; message: string }> = [];
      for (const id of [created.id, absent, last, "nope", "msg_%E2%80%A2", `${created.id}x`]) {
        const response = await read(stranger, id);
        expect(response.status).toBe(404);
        const { error } = (await response.json()) as ErrorJson;
        answers.push({ code: error.code, message: error.message });
      }
      expect(new Set(answers.map((answer) => JSON.stringify(answer))).size).toBe(1);
      expect(answers[0]?.code).toBe("message_not_found");
      expect((await read(owner, created.id)).status).toBe(200);
    });

    it("requires the API key", async () => {
      const response = await t.request(`/v1/messages/msg_${"0".repeat(26)}`);
      expect(response.status).toBe(401);
    });
  });
});

describe.each(backends)("limits and an unreachable live provider on %s", (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    const port = await getRefusingPort();
    t = await startTestApp({
      backend,
      env: {
        ...KEY_LIMITS,
        MESSAGES_PER_MINUTE: "3",
        UBILL_BASE_URL: `http://127.0.0.1:${port}`,
        UBILL_API_KEY: "k",
        UBILL_DEFAULT_BRAND_ID: "1",
      },
    });
  });
  afterAll(async () => {
    await t?.close();
  });
  const send = (apiKey: string, idempotencyKey: string, payload: unknown) =>
    t.request("/v1/messages", sendMessageRequest(apiKey, idempotencyKey, payload));

  it("limits message creation per project and minute, sends nothing when limited, and still replays", async () => {
    const { api_key: apiKey, project_id: projectId } = await createTestKey(t.request);
    t.clock.set("2026-11-22T10:00:10Z");
    const remaining: Array<string | null> = [];
    for (const n of [1, 2, 3]) {
      const response = await send(apiKey, `rl-${n}`, body());
      expect(response.status).toBe(201);
      remaining.push(response.headers.get("ratelimit-remaining"));
    }
    expect(remaining).toEqual(["2", "1", "0"]);
    const limited = await send(apiKey, "rl-4", body());
    expect(limited.status).toBe(429);
    expect(((await limited.json()) as ErrorJson).error.code).toBe("rate_limited");
    expect(limited.headers.get("retry-after")).toBe("50");
    expect(limited.headers.get("ratelimit-limit")).toBe("3");
    expect(limited.headers.get("ratelimit-remaining")).toBe("0");
    expect(await t.app.db.prisma.message.count({ where: { projectId } })).toBe(3);
    // Idempotency comes before the limit: a replay still answers.
    expect((await send(apiKey, "rl-1", body())).status).toBe(200);
    // Another project has its own budget; the next minute is a new window.
    const other = await createTestKey(t.request);
    expect((await send(other.api_key, "rl-1", body())).status).toBe(201);
    t.clock.set("2026-11-22T10:01:00Z");
    expect((await send(apiKey, "rl-4", body())).status).toBe(201);
  });

  it("answers 503 when uBill cannot be reached, and gives the credits and the key back", async () => {
    const live = await insertLiveKey(t.app.db.prisma, { credits: 2, paid: false });
    t.clock.set("2026-11-22T11:00:00Z");
    const response = await send(live.apiKey, "live-503", body());
    expect(response.status).toBe(503);
    expect(((await response.json()) as ErrorJson).error.code).toBe("provider_unavailable");
    const project = await t.app.db.prisma.project.findUniqueOrThrow({ where: { id: live.projectId } });
    expect(project.creditBalance).toBe(2);
    expect(await t.app.db.prisma.message.count({ where: { projectId: live.projectId } })).toBe(0);
    expect(await t.app.db.prisma.idempotencyRecord.count({ where: { projectId: live.projectId } })).toBe(0);
    const ledger = await t.app.db.prisma.creditLedgerEntry.findMany({
      where: { projectId: live.projectId },
    });
    expect(ledger.reduce((sum, entry) => sum + entry.amount, 0)).toBe(2);
    // The free-tier segments it took are back too.
    const counters = await t.app.db.prisma.rateLimitCounter.findMany({
      where: { bucket: { startsWith: "free_tier" } },
    });
    expect(counters.every((counter) => counter.count === 0)).toBe(true);
  });
});

describe.each(backends)("the idempotency contract under concurrency on %s", (backend) => {
  // Two instances: `t` gives a duplicate the usual wait (the first request
  // answers well within it, however loaded the machine); `crashed` waits one
  // second (UBILL_SUBMIT_TIMEOUT_MS + DATABASE_STATEMENT_TIMEOUT_MS), for a
  // first request that never answers.
  let t: TestApp;
  let crashedApp: TestApp;
  beforeAll(async () => {
    const env = { ...KEY_LIMITS, MESSAGES_PER_MINUTE: "60", QUEUED_RECOVERY_SECONDS: "30" };
    t = await startTestApp({ backend, env: { ...env, UBILL_SUBMIT_TIMEOUT_MS: "10000" } });
    crashedApp = await startTestApp({
      backend,
      env: { ...env, UBILL_SUBMIT_TIMEOUT_MS: "500", DATABASE_STATEMENT_TIMEOUT_MS: "500" },
    });
  });
  afterAll(async () => {
    await t?.close();
    await crashedApp?.close();
  });
  const send = (apiKey: string, idempotencyKey: string, payload: unknown, app = t) =>
    app.request("/v1/messages", sendMessageRequest(apiKey, idempotencyKey, payload));

  it("60 sends, each sent twice at once, make 60 messages and no 429: duplicates are not counted", async () => {
    const { api_key: apiKey, project_id: projectId } = await createTestKey(t.request);
    t.clock.set("2026-11-22T10:00:05Z");
    const keys = Array.from({ length: 60 }, (_, i) => `pair-${i}`);
    const responses = await Promise.all(
      keys.flatMap((idempotencyKey, i) => {
        const payload = body({ to: `+9955551${String(i).padStart(5, "0")}` });
        return [send(apiKey, idempotencyKey, payload), send(apiKey, idempotencyKey, payload)];
      }),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 429)).toHaveLength(0);
    expect(statuses.filter((status) => status === 201)).toHaveLength(60);
    expect(statuses.filter((status) => status === 200)).toHaveLength(60);
    const ids = (await Promise.all(responses.map((response) => response.json()))) as MessageJson[];
    for (let pair = 0; pair < 60; pair++) expect(ids[2 * pair]?.id).toBe(ids[2 * pair + 1]?.id);
    expect(await t.app.db.prisma.message.count({ where: { projectId } })).toBe(60);
    // The limit itself holds exactly: the 61st new send of the minute is refused.
    expect((await send(apiKey, "pair-61", body())).status).toBe(429);
    // And the refusal stored nothing: the same key sends in the next minute.
    t.clock.set("2026-11-22T10:01:00Z");
    expect((await send(apiKey, "pair-61", body())).status).toBe(201);
  });

  it("a test send that died after claiming its key: the duplicate waits, gives the claim up and sends, once", async () => {
    const { api_key: apiKey, project_id: projectId } = await createTestKey(crashedApp.request);
    crashedApp.clock.set("2026-11-22T12:00:00Z");
    // What a process killed between a test send's two statements leaves: the
    // key claimed and counted, no message, no answer.
    const now = crashedApp.clock.now();
    const payload = body();
    const claim = await crashedApp.app.store.idempotency.claimCounted(
      {
        idempotencyId: newId("idem"),
        scope: { projectId, mode: "test", key: "abandoned" },
        fingerprint: await crashedApp.app.keyring.fingerprint(
          canonicalRequest(payload, payload.locale ?? "ka"),
        ),
        messageId: newId("msg"),
        expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
        now,
      },
      { bucket: `messages:${projectId}`, start: now, end: new Date(now.getTime() + 60_000), limit: 60 },
    );
    expect(claim).toEqual({ claimed: true, used: 1 });

    // A different body is still told at once that the key is taken.
    const other = await send(apiKey, "abandoned", body({ to: "+995555000001" }), crashedApp);
    expect(other.status).toBe(409);

    // The same body waits out the first request, then sends as a fresh attempt.
    const [first, second] = await Promise.all([
      send(apiKey, "abandoned", payload, crashedApp),
      send(apiKey, "abandoned", payload, crashedApp),
    ]);
    expect([first.status, second.status].sort()).toEqual([200, 201]);
    const [a, b] = (await Promise.all([first.json(), second.json()])) as MessageJson[];
    expect(a?.id).toBe(b?.id);
    expect(await crashedApp.app.db.prisma.message.count({ where: { projectId } })).toBe(1);
    const replay = await send(apiKey, "abandoned", payload, crashedApp);
    expect(replay.status).toBe(200);
    expect(((await replay.json()) as MessageJson).id).toBe(a?.id);
  });

  it("a duplicate of a request that crashed mid-send waits, then answers 500 with Retry-After; after the sweep it replays", async () => {
    const { api_key: apiKey, project_id: projectId } = await createTestKey(crashedApp.request);
    crashedApp.clock.set("2026-11-22T11:00:00Z");
    // What a process killed between the write-ahead and recording leaves behind.
    const now = crashedApp.clock.now();
    const messageId = newId("msg");
    const payload = body();
    const { keyring } = crashedApp.app;
    const [keyRow] = await crashedApp.app.db.prisma.apiKey.findMany({ where: { projectId } });
    const fingerprint = await keyring.fingerprint(canonicalRequest(payload, payload.locale ?? "ka"));
    const recipientCiphertext = await keyring.encrypt(payload.to, messageId);
    const textCiphertext = await keyring.encrypt("text", messageId);
    const claimed = await crashedApp.app.store.transaction((tx) =>
      tx.messages.insertQueuedLive(
        {
          messageId,
          idempotencyId: newId("idem"),
          scope: { projectId, mode: "test", key: "crashed" },
          fingerprint,
          expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
          apiKeyId: keyRow?.id ?? "",
          recipientMasked: maskRecipient(payload.to),
          recipientCiphertext,
          textCiphertext,
          template: payload.template,
          locale: payload.locale ?? "ka",
          sender: "SMSGE",
          segments: 1,
          encoding: "GSM-7",
          provider: "simulator",
          creditsReserved: 0,
          now,
        },
        { recipient: [] },
      ),
    );
    expect(claimed).toEqual({ written: true, recipient: [], paid: false });

    // A different body is told at once that the key is taken.
    const other = await send(apiKey, "crashed", body({ to: "+995555000001" }), crashedApp);
    expect(other.status).toBe(409);
    expect(((await other.json()) as ErrorJson).error.code).toBe("idempotency_key_reused");

    // The same body waits for an answer that never comes, then hears to retry later.
    const unresolved = await send(apiKey, "crashed", payload, crashedApp);
    expect(unresolved.status).toBe(500);
    expect(unresolved.headers.get("retry-after")).toBe("30");
    const error = ((await unresolved.json()) as ErrorJson).error;
    expect(error.code).toBe("internal_error");
    expect(error.message).toMatch(/same Idempotency-Key/);
    expect(await crashedApp.app.db.prisma.message.count({ where: { projectId } })).toBe(1);

    // The recovery sweep settles it; the retry replays that answer and sends nothing.
    crashedApp.clock.advance(31_000);
    const job = crashedApp.app.jobs.find((candidate) => candidate.name === "queued-recovery");
    expect((await job?.run())?.recovered).toBe(1);
    const replay = await send(apiKey, "crashed", payload, crashedApp);
    expect(replay.status).toBe(200);
    expect(await replay.json()).toMatchObject({ id: messageId, status: "unknown" });
    expect(await crashedApp.app.db.prisma.message.count({ where: { projectId } })).toBe(1);
  });
});
