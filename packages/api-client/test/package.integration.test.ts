// The client against the real service (`deno run src/main.ts` over HTTP, from
// apps/api's harness): the same codes as REST for the same input, the request
// id, replays, rate limits, polling to a final status. Then the package as an
// integrator gets it: `pnpm pack` → installed from the tarball, offline, in a
// fresh Node project → imported from plain Node (.mjs) and type-checked from
// TypeScript with its bundled types → calling the same server.
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DENO, type ServerProcess, startServer } from "../../../apps/api/test/harness.ts";
import {
  createSmsClient,
  type RetryEvent,
  type SendMessageRequest,
  SmsApiError,
  SmsTimeoutError,
} from "../src/index.ts";

const run = promisify(execFile);
const PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), "..");
const ROOT = join(PACKAGE_DIR, "..", "..");
const TSC = createRequire(import.meta.url).resolve("typescript/bin/tsc");

let server: ServerProcess;
let work: string;
/** A server that takes requests and never answers (the timeout's test); what it received. */
let silent: Server;
let silentUrl: string;
const silentRequests: IncomingMessage[] = [];

beforeAll(async () => {
  silent = createServer((request) => {
    silentRequests.push(request);
  });
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
  [server, work] = await Promise.all([
    startServer({
      backend: "pglite",
      // The suite takes seven test keys from one address, more than the default five a minute; the limit
      // itself is tested in apps/api (test-keys.integration), not here.
      env: { STATUS_CHECK_INTERVAL_SECONDS: "1", SIMULATOR_DELIVERY_DELAY_MS: "0", TEST_KEYS_PER_MINUTE: "60" },
    }),
    mkdtemp(join(tmpdir(), "sms-api-client-")),
  ]);
});
afterAll(async () => {
  silent?.closeAllConnections();
  silent?.close();
  await server?.cleanup();
  if (work) await rm(work, { recursive: true, force: true });
});

const valid = {
  to: "+995555123456",
  template: "password_reset_code",
  variables: { code: "482913", minutes: "15" },
  locale: "en",
} as const satisfies SendMessageRequest;

describe("createSmsClient against the service", () => {
  it("gets a key, sends, replays, reads and polls to a final status", async () => {
    const anonymous = createSmsClient({ baseUrl: server.baseUrl });
    const { testKey, status, rateLimit } = await anonymous.createTestKey();
    expect(status).toBe(201);
    expect(testKey.api_key).toMatch(/^sk_test_/);
    expect(rateLimit?.limit).toBeGreaterThan(0);

    const sms = createSmsClient({ baseUrl: server.baseUrl, apiKey: testKey.api_key });
    const sent = await sms.sendMessage(valid, { idempotencyKey: "client-1" });
    expect(sent).toMatchObject({
      status: 201,
      replayed: false,
      message: { status: "submitted", segments: 1 },
    });
    expect(sent.requestId).toMatch(/^req_/);
    expect(sent.rateLimit?.remaining).toBeLessThan(sent.rateLimit?.limit as number);
    const replay = await sms.sendMessage(valid, { idempotencyKey: "client-1" });
    expect(replay).toMatchObject({ status: 200, replayed: true, message: sent.message });

    expect((await sms.getMessage(sent.message.id)).id).toBe(sent.message.id);
    const polled: string[] = [];
    const final = await sms.waitForFinalStatus(sent.message.id, {
      initialDelayMs: 250,
      maxDelayMs: 1000,
      onUpdate: (m) => polled.push(m.status),
      signal: AbortSignal.timeout(60_000),
    });
    expect(final.status).toBe("delivered");
    expect(polled.at(-1)).toBe("delivered");
    expect(await sms.liveness()).toEqual({ status: "alive" });
    expect(await sms.readiness()).toEqual({ status: "ready", database: "ok" });
  });

  it("starts, checks and reads a verification with typed outcomes (test keys: zeros)", async () => {
    const { testKey } = await createSmsClient({ baseUrl: server.baseUrl }).createTestKey();
    const sms = createSmsClient({ baseUrl: server.baseUrl, apiKey: testKey.api_key });
    const started = await sms.verifications.start(
      { to: "+995555123457", code_length: 4 },
      { idempotencyKey: "vrf-1" },
    );
    expect(started).toMatchObject({ status: 201, replayed: false, verification: { status: "pending" } });
    const { id } = started.verification;
    expect(await sms.verifications.check(id, "1234")).toMatchObject({
      outcome: "wrong_code",
      verification: { attempts_remaining: 4 },
    });
    expect((await sms.verifications.check(id, "0000")).outcome).toBe("approved");
    expect((await sms.verifications.get(id)).status).toBe("approved");
    const replaced = await sms.verifications.start({ to: "+995555123458" }, { idempotencyKey: "vrf-2" });
    await sms.verifications.start({ to: "+995555123458" }, { idempotencyKey: "vrf-3" });
    const refused = await sms.verifications.check(replaced.verification.id, "000000");
    expect(refused).toMatchObject({ outcome: "not_pending", requestId: expect.stringMatching(/^req_/) });
  });

  it("fails with the same code as REST for the same input, and the request id", async () => {
    const { testKey } = await createSmsClient({ baseUrl: server.baseUrl }).createTestKey();
    // One attempt: the outage's code, not the retries (tested below).
    const sms = createSmsClient({ baseUrl: server.baseUrl, apiKey: testKey.api_key, retry: { attempts: 1 } });
    const cases: Array<[string, unknown]> = [
      ["bad recipient", { ...valid, to: "555123456" }],
      ["unknown template", { ...valid, template: "marketing" }],
      ["missing minutes", { ...valid, variables: { code: "482913" } }],
      ["extra field", { ...valid, text: "hi" }],
      ["simulated outage", { ...valid, to: "+995500000002" }],
    ];
    for (const [what, body] of cases) {
      const key = `codes-${what}`;
      const rest = await fetch(`${server.baseUrl}/v1/messages`, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${testKey.api_key}`,
          "Idempotency-Key": `${key}-rest`,
          "Content-Type": "application/json",
        },
        body: JSON.stringify(body),
      });
      const restCode = ((await rest.json()) as { error: { code: string } }).error.code;
      const error = await sms
        .sendMessage(body as SendMessageRequest, { idempotencyKey: `${key}-client` })
        .catch((e: unknown) => e);
      expect(error, what).toBeInstanceOf(SmsApiError);
      expect((error as SmsApiError).code, what).toBe(restCode);
      expect((error as SmsApiError).status, what).toBe(rest.status);
      expect((error as SmsApiError).requestId, what).toMatch(/^req_/);
    }
    const codes = await Promise.all([
      sms.sendMessage(valid, { idempotencyKey: "" }).catch((e: SmsApiError) => e.code),
      sms.getMessage("msg_nope").catch((e: SmsApiError) => e.code),
      createSmsClient({ baseUrl: server.baseUrl })
        .getMessage("msg_nope")
        .catch((e: SmsApiError) => e.code),
      createSmsClient({ baseUrl: server.baseUrl, apiKey: "sk_test_nope" })
        .getMessage("msg_nope")
        .catch((e: SmsApiError) => e.code),
    ]);
    expect(codes).toEqual([
      "idempotency_key_required",
      "message_not_found",
      "unauthorized",
      "invalid_api_key",
    ]);
  });
});

describe("retries, timeouts and replays against the service", () => {
  /** The access-log lines of the server's answers to POST /v1/messages with this status. */
  const answered = (status: number) =>
    server.output.filter(
      (line) => line.includes('"route":"/v1/messages"') && line.includes(`"status":${status},`),
    ).length;

  it("+995500000002 answers 503 every time: the client gives up after its attempts; the server saw exactly those and kept nothing", async () => {
    const { testKey } = await createSmsClient({ baseUrl: server.baseUrl }).createTestKey();
    const retries: RetryEvent[] = [];
    const waits: number[] = [];
    const sms = createSmsClient({
      baseUrl: server.baseUrl,
      apiKey: testKey.api_key,
      retry: { attempts: 4, onRetry: (event) => retries.push(event) },
      // Retry-After is honoured (recorded here rather than slept).
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    const before = answered(503);
    const error = await sms
      .sendMessage({ ...valid, to: "+995500000002" }, { idempotencyKey: "outage-1" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SmsApiError);
    expect(error).toMatchObject({ code: "provider_unavailable", status: 503, retryAfter: 5, attempts: 4 });
    expect((error as SmsApiError).requestId).toMatch(/^req_/);
    expect(waits).toEqual([5000, 5000, 5000]);
    expect(retries.map((event) => event.attempt)).toEqual([1, 2, 3]);
    await server.waitForOutput(() => answered(503) - before >= 4);
    expect(answered(503) - before).toBe(4);
    // Nothing was kept under the key: it is free for a different message (a kept key would answer 409).
    const reused = await sms.sendMessage(valid, { idempotencyKey: "outage-1" });
    expect(reused).toMatchObject({ status: 201, replayed: false, attempts: 1 });
  });

  it("an answer lost on the way back: the retry with the same key replays the original message", async () => {
    const { testKey } = await createSmsClient({ baseUrl: server.baseUrl }).createTestKey();
    const first: Array<{ status: number; body: unknown }> = [];
    let lose = true;
    const sms = createSmsClient({
      baseUrl: server.baseUrl,
      apiKey: testKey.api_key,
      sleep: async () => {},
      fetch: async (request) => {
        const response = await fetch(request);
        if (!lose) return response;
        lose = false;
        first.push({ status: response.status, body: await response.json() });
        throw new TypeError("connection reset");
      },
    });
    const result = await sms.sendMessage(valid);
    expect(first).toHaveLength(1);
    expect(first[0]?.status).toBe(201);
    expect(result).toMatchObject({ status: 200, replayed: true, attempts: 2 });
    expect(result.message).toEqual(first[0]?.body);
    expect(await sms.getMessage(result.message.id)).toMatchObject({ id: result.message.id });
  });

  it("a server that never answers: each attempt times out, the send is retried with the same key, then SmsTimeoutError", async () => {
    silentRequests.length = 0;
    const sms = createSmsClient({
      baseUrl: silentUrl,
      apiKey: "sk_test_x",
      timeoutMs: 300,
      retry: { attempts: 3 },
      sleep: async () => {},
    });
    const error = await sms.sendMessage(valid, { idempotencyKey: "silent-1" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SmsTimeoutError);
    expect(error).toMatchObject({ code: "timeout", status: null, attempts: 3 });
    expect(silentRequests.map((request) => request.headers["idempotency-key"])).toEqual([
      "silent-1",
      "silent-1",
      "silent-1",
    ]);
  });

  it("runs unchanged under Deno: a send with a generated key, its replay, the outage and the timeout", async () => {
    const { stdout } = await run(
      DENO,
      [
        "run",
        "--quiet",
        "--allow-net",
        "--allow-env",
        join(PACKAGE_DIR, "test", "fixtures", "deno-client.ts"),
      ],
      {
        cwd: PACKAGE_DIR,
        env: { ...process.env, BASE_URL: server.baseUrl, SILENT_URL: silentUrl, DENO_NO_UPDATE_CHECK: "1" },
      },
    );
    expect(JSON.parse(stdout)).toEqual({
      sent: "submitted",
      key: true,
      replayed: true,
      outage: ["provider_unavailable", 2],
      timeout: ["timeout", 2],
    });
  });
});

const MODULE_CHECK = `import { createSmsClient, SmsApiError, FINAL_STATUSES } from "@sms/api-client";
const sms = createSmsClient({ baseUrl: process.env.BASE_URL });
const { testKey } = await sms.createTestKey();
const client = createSmsClient({ baseUrl: process.env.BASE_URL, apiKey: testKey.api_key });
const { message, status } = await client.sendMessage(
  { to: "+995555123456", template: "verification_code", variables: { code: "4821" } },
  { idempotencyKey: "packed-1" },
);
const error = await client
  .sendMessage({ to: "+995555123456", template: "verification_code", variables: { code: "4821", minutes: "5" } }, { idempotencyKey: "packed-2" })
  .catch((e) => e);
console.log(JSON.stringify({ status, message: message.status, read: (await client.getMessage(message.id)).id === message.id,
  error: error instanceof SmsApiError ? error.code : String(error), finals: FINAL_STATUSES.length }));
`;

const TYPES_CHECK = `import { createSmsClient, type Message, type SendMessageErrorCode, type SmsApiError, SmsTimeoutError } from "@sms/api-client";

export async function send(baseUrl: string, apiKey: string): Promise<Message> {
  const sms = createSmsClient({ baseUrl, apiKey });
  const { message, replayed } = await sms.sendMessage(
    { to: "+995555123456", template: "password_reset_code", variables: { code: "482913", minutes: "15" }, locale: "ka" },
    { idempotencyKey: "typed-1" },
  );
  const flag: boolean = replayed;
  void flag;
  const code: SendMessageErrorCode = "invalid_variables";
  void code;
  // @ts-expect-error: password_reset_code without minutes
  await sms.sendMessage({ to: "+995555123456", template: "password_reset_code", variables: { code: "482913" } }, { idempotencyKey: "x" });
  // @ts-expect-error: an extra variable
  await sms.sendMessage({ to: "+995555123456", template: "login_code", variables: { code: "4821", minutes: "5" } }, { idempotencyKey: "x" });
  // No Idempotency-Key: the client makes one and returns it.
  const generated: string = (await sms.sendMessage({ to: "+995555123456", template: "login_code", variables: { code: "4821" } })).idempotencyKey;
  void generated;
  const isTimeout = (error: unknown): boolean => error instanceof SmsTimeoutError && error.status === null;
  void isTimeout;
  // @ts-expect-error: not a code the API has
  const wrong: SendMessageErrorCode = "no_such_code";
  void wrong;
  const onError = (error: SmsApiError): string | null => error.requestId;
  void onError;
  return sms.waitForFinalStatus(message.id, { signal: AbortSignal.timeout(60_000) });
}
`;

describe("the packed package in a fresh Node project", () => {
  it("installs offline from its tarball, imports from .mjs, type-checks from TypeScript and calls the service", async () => {
    // pnpm pack runs prepack (the build) and rewrites workspace versions.
    await run(join(ROOT, "node_modules", ".bin", "pnpm"), ["pack", "--pack-destination", work], {
      cwd: PACKAGE_DIR,
    });
    const tarball = (await readdir(work)).find((name) => name.endsWith(".tgz")) as string;
    const packed = await run("tar", ["tzf", join(work, tarball)]);
    expect(packed.stdout.split("\n").filter(Boolean).sort()).toEqual(
      [
        "package/README.md",
        "package/dist/index.d.ts",
        "package/dist/index.js",
        "package/package.json",
      ].sort(),
    );

    const project = join(work, "app");
    await run("mkdir", ["-p", project]);
    await writeFile(
      join(project, "package.json"),
      JSON.stringify({ name: "app", private: true, type: "module" }),
    );
    await run(
      "npm",
      ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", join(work, tarball)],
      {
        cwd: project,
      },
    );
    const installed = JSON.parse(
      await readFile(join(project, "node_modules", "@sms", "api-client", "package.json"), "utf8"),
    ) as { dependencies?: object; private?: boolean };
    expect(installed.dependencies ?? {}).toEqual({});
    expect(installed.private).toBeUndefined();
    // Nothing but the client itself was installed.
    expect((await readdir(join(project, "node_modules"))).filter((name) => !name.startsWith("."))).toEqual([
      "@sms",
    ]);
    const bundle = await readFile(
      join(project, "node_modules", "@sms", "api-client", "dist", "index.js"),
      "utf8",
    );
    expect(bundle).not.toMatch(/from ["'](@sms\/api|@trpc|zod|node:)/);

    await writeFile(join(project, "check.mjs"), MODULE_CHECK);
    const { stdout } = await run(process.execPath, ["check.mjs"], {
      cwd: project,
      env: { ...process.env, BASE_URL: server.baseUrl },
    });
    expect(JSON.parse(stdout)).toEqual({
      status: 201,
      message: "submitted",
      read: true,
      error: "invalid_variables",
      finals: 4,
    });

    await writeFile(join(project, "check.ts"), TYPES_CHECK);
    await writeFile(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          lib: ["ES2022", "DOM"],
          strict: true,
          noEmit: true,
          types: [],
        },
        files: ["check.ts"],
      }),
    );
    const tsc = await run(process.execPath, [TSC, "-p", "tsconfig.json"], { cwd: project }).then(
      (result) => result.stdout,
      (error: { stdout?: string }) => `FAILED\n${error.stdout ?? String(error)}`,
    );
    expect(tsc).toBe("");
    // The check can fail: a valid call under @ts-expect-error does not compile.
    await writeFile(
      join(project, "check.ts"),
      `${TYPES_CHECK}\n// @ts-expect-error\nexport const ok = createSmsClient({ baseUrl: "x" });\n`,
    );
    const unused = await run(process.execPath, [TSC, "-p", "tsconfig.json"], { cwd: project }).then(
      () => "",
      (error: { stdout?: string }) => error.stdout ?? "",
    );
    expect(unused).toContain("Unused '@ts-expect-error' directive");
  });
});
