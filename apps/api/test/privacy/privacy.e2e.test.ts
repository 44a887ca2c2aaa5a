// Privacy issue, point 3, over real HTTP against the Deno process: every route
// (the verifications extension's too: the code the service draws, and a wrong
// one typed) and every periodic job is driven with recognisable values (numbers, codes,
// texts, API keys, a claim token, encryption key material, a uBill key, uBill
// smsIDs and raw statuses), then every response (status line, headers, body)
// and every line the process printed is searched for them.
//
// Also the start-up rules of the keyring: production without
// MESSAGE_ENCRYPTION_KEYS stops with one line; development generates a key
// file once (0600) and reuses it.
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiKeyPrefix, newId, sha256Hex } from "@sms/crypto";
import { createDatabase } from "@sms/db";
import {
  availableBackends,
  createPostgresTestDatabase,
  type PrismaDatabase,
  withPrisma,
} from "@sms/db/testing";
import { type FakeUbill, startFakeUbill } from "@sms/provider-ubill/testing";
import { renderMessage } from "@sms/templates";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_DIR, DENO, denoRunArgs, freePort, type ServerProcess, startServer } from "../harness.ts";
import { findLeaks, type Haystack, type Needle, numberNeedles } from "../support/leaks.ts";

const backends = await availableBackends();
// One backend is enough for what the service says; PostgreSQL when there is one (production's).
const backend = backends.includes("postgres") ? "postgres" : "pglite";

// ---- recognisable values -------------------------------------------------------------------------

const KEY_MATERIAL = Buffer.from("PRIVACY-e2e-key-material-32byte!").toString("base64");
const ENCRYPTION_KEYS = `priv1:${KEY_MATERIAL}`;
const UBILL_KEY = "ubill-PRIVACY-credential-5e4f";
const LIVE_KEY = `sk_live_PRIVACYliveKEY${"L".repeat(43 - "PRIVACYliveKEY".length)}`;
const UNKNOWN_TEST_KEY = `sk_test_PRIVACYunknownTEST${"U".repeat(43 - "PRIVACYunknownTEST".length)}`;
const UNKNOWN_LIVE_KEY = `sk_live_PRIVACYunknownLIVE${"V".repeat(43 - "PRIVACYunknownLIVE".length)}`;
const BASIC_CREDENTIALS = Buffer.from("privacy-user:PRIVACY-basic-pass").toString("base64");
const INTERNAL_TOKEN = "PRIVACY-internal-api-token-0123456789abcdef";
const OAUTH_CODE = "PRIVACY-oauth-code-7731";
const RAW_UBILL_TEXTS = ["PRIVACY-RAW-STATUS-MESSAGE", "PRIVACY-RAW-502-BODY"];

/** Ordinary test-mode recipients (delivered by the simulator). */
const TEST_NUMBERS = ["+995577246813", "+995591357924", "+995568024613"];
/** The simulator's reserved recipients: they also appear in the docs and next_steps by design. */
const RESERVED = {
  rejected: "+995500000001",
  unreachable: "+995500000002",
  unknown: "+995500000003",
  undeliverable: "+995500000004",
};
/** Live recipients, scripted in the fake uBill. */
const LIVE = {
  delivered: { to: "+995599246801", smsId: "4817263", report: "1" },
  undeliverable: { to: "+995599246802", smsId: "4817264", report: "2" },
  failedLater: { to: "+995599246805", smsId: "ubillref-PRIVACY-77", report: "4" },
  rejected: { to: "+995599246803" },
  unknown: { to: "+995599246804" },
} as const;

type Send = { to: string; template: string; variables: Record<string, string>; locale?: "en" | "ka" };
type MessageBody = {
  id: string;
  object: string;
  to: string;
  status: string;
  segments: number;
  error: unknown;
};

function renderedText(send: Send): string {
  const result = renderMessage({
    template: send.template,
    variables: send.variables,
    locale: send.locale ?? "ka",
  });
  if (!result.ok) throw new Error(result.message);
  return result.text;
}

// ---- the live key, written straight into the database -----------------------------------------

async function seedLiveProject(db: PrismaDatabase): Promise<string> {
  const now = new Date();
  const projectId = newId("prj");
  await db.prisma.project.create({
    data: {
      id: projectId,
      claimedAt: now,
      creditBalance: 100,
      hasPaidCredits: true,
      createdAt: now,
      updatedAt: now,
    },
  });
  await db.prisma.apiKey.create({
    data: {
      id: newId("key"),
      projectId,
      mode: "live",
      keyHash: await sha256Hex(LIVE_KEY),
      prefix: apiKeyPrefix(LIVE_KEY),
    },
  });
  await db.prisma.creditLedgerEntry.create({
    data: { id: newId("cre"), projectId, kind: "grant_paid", amount: 100, note: "privacy e2e" },
  });
  return projectId;
}

describe(`leak scan over HTTP on ${backend}`, () => {
  let server: ServerProcess | undefined;
  let fake: FakeUbill;
  let db: PrismaDatabase | undefined;
  let dropDatabase: (() => Promise<void>) | undefined;
  let dataRoot: string | undefined;
  const database: { databaseUrl?: string; pgliteDataDir?: string } = {};

  /** Secrets nowhere: not in any response, not in any log line. */
  const needles: Needle[] = [
    { label: "encryption key material", value: KEY_MATERIAL },
    { label: "encryption key material (hex)", value: Buffer.from(KEY_MATERIAL, "base64").toString("hex") },
    { label: "uBill API key", value: UBILL_KEY },
    { label: "live API key", value: LIVE_KEY },
    { label: "unknown test key", value: UNKNOWN_TEST_KEY },
    { label: "unknown live key", value: UNKNOWN_LIVE_KEY },
    { label: "Basic credentials", value: BASIC_CREDENTIALS },
    { label: "internal API token", value: INTERNAL_TOKEN },
    { label: "OAuth code", value: OAUTH_CODE },
    { label: "raw uBill status field", value: "statusID" },
    ...RAW_UBILL_TEXTS.map((value) => ({ label: "raw uBill text", value })),
    { label: "uBill smsID", value: LIVE.delivered.smsId },
    { label: "uBill smsID", value: LIVE.undeliverable.smsId },
    { label: "uBill smsID", value: LIVE.failedLater.smsId },
    ...[...TEST_NUMBERS, ...Object.values(LIVE).map((live) => live.to)].flatMap((n) =>
      numberNeedles(`number ${n}`, n),
    ),
  ];
  /** The reserved numbers: allowed only where they are documented (docs, OpenAPI, next_steps). */
  const reservedNeedles: Needle[] = Object.values(RESERVED).flatMap((n) => numberNeedles(`reserved ${n}`, n));
  /** Issued keys and claim tokens: allowed only in the response that issues them (and the claim page for its token). */
  const issued: Array<{ apiKey: string; token: string }> = [];

  const responses: Array<Haystack & { documented: boolean; issuedTo?: number; claimPage?: boolean }> = [];

  async function call(
    path: string,
    init: RequestInit = {},
    tags: { documented?: boolean; claimPage?: boolean } = {},
  ): Promise<{ status: number; headers: Headers; text: string; json<T>(): T }> {
    // A path, or a full URL (the internal listener).
    const target = path.startsWith("http") ? path : `${server!.baseUrl}${path}`;
    const response = await fetch(target, { redirect: "manual", ...init });
    const text = await response.text();
    responses.push({
      where: `${init.method ?? "GET"} ${path} → ${response.status}`,
      text: `${response.status} ${response.statusText}\n${[...response.headers].map(([k, v]) => `${k}: ${v}`).join("\n")}\n\n${text}`,
      documented: tags.documented ?? false,
      claimPage: tags.claimPage ?? false,
    });
    return { status: response.status, headers: response.headers, text, json: <T>() => JSON.parse(text) as T };
  }

  const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

  const sentBodies: Array<Send | string> = [];

  async function send(
    apiKey: string,
    idempotencyKey: string,
    body: Send | string,
    extra: Record<string, string> = {},
  ) {
    sentBodies.push(body);
    if (typeof body !== "string") {
      const code = body.variables.code!;
      needles.push(
        { label: `code ${code}`, value: code },
        { label: `text with ${code}`, value: renderedText(body) },
      );
    }
    return call("/v1/messages", {
      method: "POST",
      headers: {
        ...bearer(apiKey),
        "Content-Type": "application/json",
        "Idempotency-Key": idempotencyKey,
        ...extra,
      },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  }

  async function issueTestKey(): Promise<{ apiKey: string; token: string; claimUrl: string }> {
    const response = await call("/v1/test-keys", { method: "POST" }, { documented: true });
    expect(response.status).toBe(201);
    const body = response.json<{ api_key: string; claim_url: string }>();
    const token = body.claim_url.split("/").pop()!;
    issued.push({ apiKey: body.api_key, token });
    responses.at(-1)!.issuedTo = issued.length - 1;
    return { apiKey: body.api_key, token, claimUrl: body.claim_url };
  }

  async function waitForStatus(
    apiKey: string,
    id: string,
    done: (status: string) => boolean,
    timeoutMs = 30_000,
  ) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const response = await call(`/v1/messages/${id}`, { headers: bearer(apiKey) });
      const body = response.json<MessageBody>();
      if (done(body.status) || Date.now() > deadline) return body;
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
  }

  beforeAll(async () => {
    fake = await startFakeUbill({ apiKey: UBILL_KEY, firstSmsId: 9_100_001 });
    fake.replyToNumber(LIVE.delivered.to, { kind: "accept", smsId: LIVE.delivered.smsId });
    fake.replyToNumber(LIVE.undeliverable.to, { kind: "accept", smsId: LIVE.undeliverable.smsId });
    fake.replyToNumber(LIVE.failedLater.to, { kind: "accept", smsId: LIVE.failedLater.smsId });
    fake.replyToNumber(LIVE.rejected.to, { kind: "status", statusId: 50, message: RAW_UBILL_TEXTS[0] });
    fake.replyToNumber(LIVE.unknown.to, { kind: "http", status: 502, body: RAW_UBILL_TEXTS[1] });

    if (backend === "postgres") {
      const created = await createPostgresTestDatabase();
      database.databaseUrl = created.databaseUrl;
      dropDatabase = created.drop;
      db = withPrisma(await createDatabase({ databaseUrl: created.databaseUrl, poolSize: 2 }));
    } else {
      dataRoot = await mkdtemp(join(tmpdir(), "sms-privacy-"));
      database.pgliteDataDir = join(dataRoot, "pglite");
      db = withPrisma(await createDatabase({ pgliteDataDir: database.pgliteDataDir }));
      await db.migrate();
    }
    await seedLiveProject(db);
    if (backend === "pglite") {
      // PGlite has one owner at a time: the server's, until it stops.
      await db.close();
      db = undefined;
    }

    server = await startServer({
      backend,
      ...database,
      internalToken: INTERNAL_TOKEN,
      env: {
        LOG_LEVEL: "trace",
        MESSAGE_ENCRYPTION_KEYS: ENCRYPTION_KEYS,
        UBILL_BASE_URL: fake.baseUrl,
        UBILL_API_KEY: UBILL_KEY,
        UBILL_DEFAULT_BRAND_ID: "1",
        STATUS_CHECK_INTERVAL_SECONDS: "1",
        SIMULATOR_DELIVERY_DELAY_MS: "300",
        PURGE_INTERVAL_SECONDS: "1",
        UNCLAIMED_PURGE_INTERVAL_SECONDS: "1",
        QUEUED_RECOVERY_SECONDS: "5",
        UBILL_SUBMIT_TIMEOUT_MS: "2000",
      },
    });
  }, 120_000);

  afterAll(async () => {
    await server?.cleanup();
    await db?.close();
    await dropDatabase?.();
    await fake?.close();
    if (dataRoot) await rm(dataRoot, { recursive: true, force: true });
  });

  it("drives every route and job, then finds no secret in any response or log line", async () => {
    // -- public routes
    expect((await call("/healthz")).status).toBe(200);
    expect((await call("/readyz")).status).toBe(200);
    expect((await call("/healthz", { method: "HEAD" })).status).toBe(200);
    expect((await call("/openapi.json", {}, { documented: true })).status).toBe(200);
    expect((await call("/docs", {}, { documented: true })).status).toBe(200);
    expect((await call("/nope")).status).toBe(404);
    expect((await call("/v1/test-keys", { method: "GET" })).status).toBe(405);

    // -- test keys and the claim pages
    const alice = await issueTestKey();
    const bob = await issueTestKey();
    expect((await call(`/claim/${alice.token}`, {}, { claimPage: true })).status).toBe(200);
    expect((await call(`/claim/${"Z".repeat(43)}`, {}, { claimPage: true })).status).toBe(404);
    const signIn = await call(
      `/claim/${alice.token}/sign-in`,
      {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: "provider=google",
      },
      { claimPage: true },
    );
    // No Google provider is configured here: the sign-in is refused as a bad request and the callback
    // route is unknown. What this drives is the OAuth code and state in the URL, which no answer or log
    // line may repeat (the scan below).
    expect(signIn.status, "sign-in").toBe(400);
    const callback = await call(
      `/claim/callback/google?code=${OAUTH_CODE}&state=PRIVACY-state`,
      {},
      { claimPage: true },
    );
    expect(callback.status, "callback").toBe(404);

    // -- test sends: ordinary numbers in both locales and all templates, and every reserved number
    const testSends: Array<{ send: Send; status: number; expect: string }> = [
      {
        send: {
          to: TEST_NUMBERS[0]!,
          template: "verification_code",
          variables: { code: "73519864" },
          locale: "en",
        },
        status: 201,
        expect: "delivered",
      },
      {
        send: { to: TEST_NUMBERS[1]!, template: "login_code", variables: { code: "86204751" }, locale: "ka" },
        status: 201,
        expect: "delivered",
      },
      {
        send: {
          to: TEST_NUMBERS[2]!,
          template: "password_reset_code",
          variables: { code: "40917358", minutes: "45" },
        },
        status: 201,
        expect: "delivered",
      },
      {
        send: { to: RESERVED.rejected, template: "verification_code", variables: { code: "51739246" } },
        status: 201,
        expect: "failed",
      },
      {
        send: { to: RESERVED.unreachable, template: "verification_code", variables: { code: "62840173" } },
        status: 503,
        expect: "",
      },
      {
        send: { to: RESERVED.unknown, template: "login_code", variables: { code: "39182754" } },
        status: 201,
        expect: "unknown",
      },
      {
        send: { to: RESERVED.undeliverable, template: "verification_code", variables: { code: "84736251" } },
        status: 201,
        expect: "undeliverable",
      },
    ];
    const testMessages: Array<{ id: string; expect: string }> = [];
    for (const [index, { send: body, status, expect: final }] of testSends.entries()) {
      const response = await send(alice.apiKey, `privacy-test-${index}`, body);
      expect(response.status, response.text).toBe(status);
      if (status === 201) testMessages.push({ id: response.json<MessageBody>().id, expect: final });
    }
    // Replay, conflict, another project's read, unknown id.
    const replay = await send(alice.apiKey, "privacy-test-0", testSends[0]!.send);
    expect(replay.status).toBe(200);
    const conflict = await send(alice.apiKey, "privacy-test-0", {
      ...testSends[0]!.send,
      to: TEST_NUMBERS[1]!,
    });
    expect(conflict.status).toBe(409);
    expect((await call(`/v1/messages/${testMessages[0]!.id}`, { headers: bearer(bob.apiKey) })).status).toBe(
      404,
    );
    expect((await call(`/v1/messages/msg_${"0".repeat(26)}`, { headers: bearer(alice.apiKey) })).status).toBe(
      404,
    );

    // -- bad input carrying recognisable values
    const malformed = await send(
      alice.apiKey,
      "privacy-bad-1",
      `{"to":"${TEST_NUMBERS[0]}","template":"verification_code","variables":{"code":"7351`,
    );
    expect(malformed.status).toBe(400);
    const tooLong = await send(
      alice.apiKey,
      "privacy-bad-2",
      JSON.stringify({
        to: `${TEST_NUMBERS[0]}9`,
        template: "verification_code",
        variables: { code: "1234" },
      }),
    );
    expect(tooLong.status).toBe(400);
    const spaced = await send(
      alice.apiKey,
      "privacy-bad-3",
      JSON.stringify({
        to: `+995 ${TEST_NUMBERS[0]!.slice(4)}`,
        template: "login_code",
        variables: { code: "1234" },
      }),
    );
    expect(spaced.status).toBe(400);
    const phoneLike = await send(
      alice.apiKey,
      "privacy-bad-4",
      JSON.stringify({
        to: TEST_NUMBERS[1],
        template: "verification_code",
        variables: { code: TEST_NUMBERS[0]!.slice(1) },
      }),
    );
    expect(phoneLike.status).toBe(400);
    const extraText = await send(
      alice.apiKey,
      "privacy-bad-5",
      JSON.stringify({
        to: TEST_NUMBERS[1],
        template: "verification_code",
        variables: { code: "1234" },
        text: renderedText(testSends[0]!.send),
      }),
    );
    expect(extraText.status).toBe(400);
    const wrongType = await send(
      alice.apiKey,
      "privacy-bad-6",
      JSON.stringify({
        to: Number(TEST_NUMBERS[2]!.slice(1)),
        template: "verification_code",
        variables: { code: "1234" },
      }),
    );
    expect(wrongType.status).toBe(400);

    // -- authentication failures with secrets in the headers
    const noAuth = await call("/v1/messages", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Api-Key": LIVE_KEY },
      body: "{}",
    });
    expect(noAuth.status).toBe(401);
    for (const authorization of [
      `Bearer ${UNKNOWN_TEST_KEY}`,
      `Bearer ${UNKNOWN_LIVE_KEY}`,
      `Basic ${BASIC_CREDENTIALS}`,
      UNKNOWN_TEST_KEY,
      `Bearer ${TEST_NUMBERS[0]}`,
    ]) {
      const refused = await call("/v1/messages", {
        method: "POST",
        headers: {
          Authorization: authorization,
          "Content-Type": "application/json",
          "Idempotency-Key": "privacy-401",
        },
        body: JSON.stringify(testSends[0]!.send),
      });
      expect(refused.status).toBe(401);
      expect(
        (await call(`/v1/messages/${testMessages[0]!.id}`, { headers: { Authorization: authorization } }))
          .status,
      ).toBe(401);
    }

    // -- the same procedures over tRPC, on the internal listener (the public port has no /trpc)
    expect(
      (await call("/trpc/messages.send", { method: "POST", headers: bearer(alice.apiKey) })).status,
    ).toBe(404);
    const internal = (procedure: string) => `${server!.internalUrl}/trpc/${procedure}`;
    const asInternal = (apiKey: string) => ({ ...bearer(INTERNAL_TOKEN), "X-Api-Key": apiKey });
    const trpcSend = await call(internal("messages.send"), {
      method: "POST",
      headers: {
        ...asInternal(alice.apiKey),
        "Content-Type": "application/json",
        "Idempotency-Key": "privacy-trpc-1",
      },
      body: JSON.stringify({
        to: TEST_NUMBERS[2],
        template: "verification_code",
        variables: { code: "27495816" },
        locale: "en",
      }),
    });
    needles.push({ label: "code 27495816", value: "27495816" });
    expect(trpcSend.status, trpcSend.text).toBeLessThan(300);
    const trpcBad = await call(internal("messages.send"), {
      method: "POST",
      headers: {
        ...asInternal(alice.apiKey),
        "Content-Type": "application/json",
        "Idempotency-Key": "privacy-trpc-2",
      },
      body: JSON.stringify({
        to: `${TEST_NUMBERS[2]}0`,
        template: "verification_code",
        variables: { code: TEST_NUMBERS[0] },
      }),
    });
    expect(trpcBad.status).toBe(400);
    const input = encodeURIComponent(JSON.stringify({ message_id: testMessages[0]!.id }));
    expect(
      (await call(internal(`messages.get?input=${input}`), { headers: asInternal(alice.apiKey) })).status,
    ).toBe(200);
    expect(
      (await call(internal(`messages.get?input=${input}`), { headers: asInternal(UNKNOWN_TEST_KEY) })).status,
    ).toBe(401);
    // A wrong internal token, and the API key where the token belongs: 401, neither echoed.
    expect(
      (await call(internal("health.liveness"), { headers: bearer(`${INTERNAL_TOKEN.slice(0, -1)}x`) }))
        .status,
    ).toBe(401);
    expect((await call(internal("health.liveness"), { headers: bearer(alice.apiKey) })).status).toBe(401);

    // -- live sends through the fake uBill
    const liveSends: Array<{ to: string; status: string; code: string }> = [
      { to: LIVE.delivered.to, status: "submitted", code: "91827364" },
      { to: LIVE.undeliverable.to, status: "submitted", code: "19283746" },
      { to: LIVE.failedLater.to, status: "submitted", code: "56473829" },
      { to: LIVE.rejected.to, status: "failed", code: "38475610" },
      { to: LIVE.unknown.to, status: "unknown", code: "74829301" },
    ];
    const liveIds: string[] = [];
    for (const [index, live] of liveSends.entries()) {
      const response = await send(LIVE_KEY, `privacy-live-${index}`, {
        to: live.to,
        template: "verification_code",
        variables: { code: live.code },
        locale: index % 2 ? "ka" : "en",
      });
      expect(response.status, response.text).toBe(201);
      const body = response.json<MessageBody>();
      expect(body.status).toBe(live.status);
      liveIds.push(body.id);
    }
    expect(fake.sends()).toHaveLength(liveSends.length);
    // The fake really saw the numbers and texts (so the scan looks for values that existed).
    expect(fake.sends()[0]!.body).toContain(LIVE.delivered.to.slice(1));
    expect(fake.sends()[0]!.body).toContain("91827364");
    for (const live of [LIVE.delivered, LIVE.undeliverable, LIVE.failedLater])
      fake.setReport(live.smsId, live.report, live.to.slice(1));

    // -- verifications (issue 22): the service draws a live code; it is checked wrong, then right
    const verifyTo = "+995599246809";
    needles.push(...numberNeedles(`number ${verifyTo}`, verifyTo));
    const started = await call("/v1/verifications", {
      method: "POST",
      headers: {
        ...bearer(LIVE_KEY),
        "Content-Type": "application/json",
        "Idempotency-Key": "privacy-vrf-1",
      },
      body: JSON.stringify({ to: verifyTo, code_length: 8, locale: "en" }),
    });
    expect(started.status, started.text).toBe(201);
    const verificationId = started.json<{ id: string }>().id;
    const smsText = String((fake.sends().at(-1)!.json as { text?: string }).text ?? "");
    const drawn = /(\d{8})/.exec(smsText)?.[1];
    expect(drawn).toMatch(/^\d{8}$/);
    const typed = drawn!.startsWith("9") ? `8${drawn!.slice(1)}` : `9${drawn!.slice(1)}`;
    needles.push({ label: "verification code", value: drawn! }, { label: "typed wrong code", value: typed });
    const checkVerification = (code: string) =>
      call(`/v1/verifications/${verificationId}/check`, {
        method: "POST",
        headers: { ...bearer(LIVE_KEY), "Content-Type": "application/json" },
        body: JSON.stringify({ code }),
      });
    expect((await checkVerification(typed)).status).toBe(200);
    expect((await checkVerification(drawn!)).json<{ status: string }>().status).toBe("approved");
    expect((await call(`/v1/verifications/${verificationId}`, { headers: bearer(LIVE_KEY) })).status).toBe(
      200,
    );
    // A malformed check (its "code" is a number) is refused without echoing it.
    expect((await checkVerification(Number(typed) as unknown as string)).status).toBe(400);

    // -- the jobs: wait for final states, then for a round of every job
    for (const message of testMessages) {
      expect((await waitForStatus(alice.apiKey, message.id, (status) => status !== "submitted")).status).toBe(
        message.expect,
      );
    }
    const liveFinal = ["delivered", "undeliverable", "failed"];
    for (const [index, id] of liveIds.slice(0, 3).entries()) {
      expect((await waitForStatus(LIVE_KEY, id, (status) => status !== "submitted")).status).toBe(
        liveFinal[index],
      );
    }
    const jobNames = [
      "status-check",
      "queued-recovery",
      "unclaimed-messages-purge",
      "message-text-purge",
      "idempotency-purge",
      "rate-limit-purge",
      "dashboard-session-purge",
      "partition-maintenance",
    ];
    for (const name of jobNames) {
      await server!.waitForOutput((line) => line.includes(`"job":"${name}"`), 20_000);
    }
    expect(fake.requests.some((request) => request.endpoint === "report")).toBe(true);

    // -- stop (flushes the logs), then collect the provider references stored for the messages
    expect(await server!.stop()).toBe(0);
    if (!db) db = withPrisma(await createDatabase({ pgliteDataDir: database.pgliteDataDir! }));
    const refs = await db.prisma.message.findMany({
      where: { providerRef: { not: null } },
      select: { providerRef: true },
    });
    expect(refs.length).toBeGreaterThanOrEqual(8);
    for (const { providerRef } of refs) needles.push({ label: "provider ref", value: providerRef! });

    // -- the scan
    const logs: Haystack = { where: "server output", text: server!.output.join("\n") };
    expect(logs.text).toContain('"msg":"request"');
    expect(logs.text).toContain('"msg":"job round"');
    const leaks = [
      ...findLeaks([logs], [...needles, ...reservedNeedles]),
      ...findLeaks(
        [logs],
        issued.flatMap(({ apiKey, token }) => [
          { label: "issued test key", value: apiKey },
          { label: "claim token", value: token },
        ]),
      ),
    ];
    for (const response of responses) {
      const own = response.issuedTo === undefined ? undefined : issued[response.issuedTo];
      let text = response.text;
      if (own) text = text.replaceAll(own.apiKey, "[issued key]").replaceAll(own.token, "[issued token]");
      const keys = issued.flatMap(({ apiKey, token }) => [
        { label: "issued test key", value: apiKey },
        // The claim page is reached with its token, and its form posts back to it.
        ...(response.claimPage ? [] : [{ label: "claim token", value: token }]),
      ]);
      leaks.push(
        ...findLeaks(
          [{ where: response.where, text }],
          [...needles, ...keys, ...(response.documented ? [] : reservedNeedles)],
        ),
      );
    }
    // Shapes, not just the values above: any key, any full number, any Authorization value.
    const shapes: Array<[string, RegExp]> = [
      ["an API key", /sk_(?:test|live)_(?!\[redacted\])[A-Za-z0-9_-]{8}/],
      // (+995555123456 is the documented example, quoted in validation messages.)
      ["a full number", /(?<!\d)995(?!555123456)\d{9}(?!\d)/],
      ["an Authorization value", /Bearer[ \t]+(?!\[redacted\]|<)\S|Basic[ \t]+[A-Za-z0-9+/=]{8}/],
    ];
    for (const [what, pattern] of shapes) {
      if (pattern.test(logs.text)) leaks.push(`${what} in server output: ${logs.text.match(pattern)?.[0]}`);
      for (const response of responses) {
        if (response.documented || response.claimPage) continue;
        if (pattern.test(response.text))
          leaks.push(`${what} in ${response.where}: ${response.text.match(pattern)?.[0]}`);
      }
    }
    expect(leaks).toEqual([]);
    expect(responses.length).toBeGreaterThan(50);
    // Control: the same scan does find the values in what was sent.
    expect(
      findLeaks([{ where: "requests", text: JSON.stringify(sentBodies) }], needles).length,
    ).toBeGreaterThan(20);
  });
});

// ---- start-up --------------------------------------------------------------------------------------

function runMain(env: Record<string, string>): Promise<{ code: number | null; lines: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(DENO, denoRunArgs("src/main.ts"), {
      cwd: API_DIR,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        DENO_NO_UPDATE_CHECK: "1",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const chunks: string[] = [];
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => chunks.push(chunk.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.once("error", reject);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, lines: chunks.join("").split("\n").filter(Boolean) });
    });
  });
}

describe("start-up and the encryption key", () => {
  it("refuses to start in production without MESSAGE_ENCRYPTION_KEYS: one line, no stack", async () => {
    const { code, lines } = await runMain({
      NODE_ENV: "production",
      PORT: String(await freePort()),
      DATABASE_URL: "postgresql://privacy@127.0.0.1:1/never",
      CLAIM_COOKIE_SECRET: "privacy-cookie-secret-0123456789abcdef",
    });
    expect(code).not.toBe(0);
    expect(lines).toEqual([
      "Invalid configuration: MESSAGE_ENCRYPTION_KEYS is required when NODE_ENV=production",
    ]);
  });

  it("refuses a malformed key in one line that names the variable and not the value", async () => {
    const { code, lines } = await runMain({
      NODE_ENV: "production",
      PORT: String(await freePort()),
      DATABASE_URL: "postgresql://privacy@127.0.0.1:1/never",
      CLAIM_COOKIE_SECRET: "privacy-cookie-secret-0123456789abcdef",
      MESSAGE_ENCRYPTION_KEYS: "k1:UFJJVkFDWS1zaG9ydC1rZXk",
    });
    expect(code).not.toBe(0);
    const text = lines.join("\n");
    expect(text).toMatch(/MESSAGE_ENCRYPTION_KEYS/);
    expect(text).not.toContain("UFJJVkFDWS1zaG9ydC1rZXk");
    expect(text).not.toMatch(/^\s+at /m);
    expect(lines.filter((line) => !line.startsWith("{"))).toHaveLength(1);
  });

  it("generates a development key file and cookie secret once (0600) and reuses them on restart", async () => {
    const root = await mkdtemp(join(tmpdir(), "sms-devkey-"));
    const pgliteDataDir = join(root, "pglite");
    const keyFile = join(root, "message-encryption-keys");
    const cookieFile = join(root, "cookie-secret");
    try {
      const first = await startServer({ backend: "pglite", pgliteDataDir, env: { NODE_ENV: "development" } });
      await first.stop();
      const spec = await readFile(keyFile, "utf8");
      expect(spec).toMatch(/^dev:[A-Za-z0-9+/]{43}=\n$/);
      expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
      expect(first.output.some((line) => line.includes("generated a development key"))).toBe(true);
      const cookieSecret = await readFile(cookieFile, "utf8");
      expect(cookieSecret.trim().length).toBeGreaterThanOrEqual(32);
      expect((await stat(cookieFile)).mode & 0o777).toBe(0o600);
      expect(first.output.some((line) => line.includes("generated a development cookie secret"))).toBe(true);
      // Neither secret reaches the log.
      expect(first.output.join("\n")).not.toContain(spec.trim().slice(4));
      expect(first.output.join("\n")).not.toContain(cookieSecret.trim());

      const second = await startServer({
        backend: "pglite",
        pgliteDataDir,
        env: { NODE_ENV: "development" },
      });
      await second.stop();
      expect(await readFile(keyFile, "utf8")).toBe(spec);
      expect(await readFile(cookieFile, "utf8")).toBe(cookieSecret);
      expect(second.output.some((line) => line.includes("generated a development"))).toBe(false);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
