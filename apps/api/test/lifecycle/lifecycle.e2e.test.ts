// Issue 2, points 3 and 4: the Deno process starts on a zero configuration,
// refuses bad configuration with a one-line error naming the variable, and
// on SIGTERM finishes in-flight requests before it exits.
import { spawn } from "node:child_process";
import { createDatabase } from "@sms/db";
import { availableBackends, withPrisma } from "@sms/db/testing";
import { startFakeUbill } from "@sms/provider-ubill/testing";
import { afterAll, describe, expect, it } from "vitest";
import { API_DIR, DENO, denoRunArgs, type ServerProcess, startServer } from "../harness.ts";
import { insertLiveKey } from "../support/messages.ts";

const servers: ServerProcess[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.cleanup()));
});

function runMain(
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(DENO, denoRunArgs("src/main.ts"), {
      cwd: API_DIR,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        DENO_NO_UPDATE_CHECK: "1",
        PGLITE_DATA_DIR: "memory://",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, stdout });
    });
  });
}

describe("configuration", () => {
  it.each([
    [{ PORT: "not-a-port" }, "PORT"],
    [{ PORT: "70000" }, "PORT"],
    [{ LOG_LEVEL: "loud" }, "LOG_LEVEL"],
    [{ DATABASE_URL: "mysql://x" }, "DATABASE_URL"],
    [{ TEST_KEYS_PER_MINUTE: "0" }, "TEST_KEYS_PER_MINUTE"],
    [{ TRUST_PROXY: "10.0.0.0/99" }, "TRUST_PROXY"],
    [{ QUEUED_RECOVERY_SECONDS: "10", UBILL_SUBMIT_TIMEOUT_MS: "10000" }, "QUEUED_RECOVERY_SECONDS"],
    [{ MESSAGE_ENCRYPTION_KEYS: "k1:c2hvcnQ=" }, "MESSAGE_ENCRYPTION_KEYS"],
    [{ NODE_ENV: "production", DATABASE_URL: "postgresql://127.0.0.1:1/x" }, "MESSAGE_ENCRYPTION_KEYS"],
    [{ INTERNAL_PORT: "3001" }, "INTERNAL_API_TOKEN"],
    [{ INTERNAL_PORT: "3001", INTERNAL_API_TOKEN: "c2hvcnQ-too-short" }, "INTERNAL_API_TOKEN"],
    [{ HTTP_IDLE_TIMEOUT_SECONDS: "0" }, "HTTP_IDLE_TIMEOUT_SECONDS"],
    [{ MAX_CONNECTIONS: "many" }, "MAX_CONNECTIONS"],
    [{ SHUTDOWN_TIMEOUT_SECONDS: "-1" }, "SHUTDOWN_TIMEOUT_SECONDS"],
  ])("refuses %o with a one-line error naming %s", async (env, variable) => {
    const result = await runMain(env);
    expect(result.code).not.toBe(0);
    const lines = result.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(variable);
    expect(lines[0]).not.toMatch(/\bat \w|c2hvcnQ/);
  });
});

describe.skipIf(!(await availableBackends()).includes("postgres"))("graceful shutdown", () => {
  it("finishes an in-flight send on SIGTERM, then exits 0", async () => {
    const fake = await startFakeUbill();
    const server = await startServer({
      backend: "postgres",
      env: {
        UBILL_BASE_URL: fake.baseUrl,
        UBILL_API_KEY: fake.apiKey,
        UBILL_DEFAULT_BRAND_ID: "1",
        UBILL_SUBMIT_TIMEOUT_MS: "10000",
      },
    });
    servers.push(server);
    const db = withPrisma(await createDatabase({ databaseUrl: server.databaseUrl }));
    try {
      const { apiKey } = await insertLiveKey(db.prisma, { credits: 10 });
      // The provider holds the submission for 1.5 s: the request is provably in flight.
      // biome-ignore lint/suspicious/noThenProperty: the fake's reply type names its follow-up `then`.
      fake.replyNext({ kind: "slow", delayMs: 1500, then: { kind: "accept", smsId: "4711" } }, "send");
      const send = fetch(`${server.baseUrl}/v1/messages`, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${apiKey}`,
          "Idempotency-Key": "shutdown-1",
          "Content-Type": "application/json",
        },
        body: JSON.stringify({
          to: "+995555000111",
          template: "verification_code",
          variables: { code: "1234" },
        }),
      });
      for (let i = 0; i < 100 && fake.sends().length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(fake.sends()).toHaveLength(1);

      const stopped = server.stop("SIGTERM");
      const response = await send;
      expect(response.status).toBe(201);
      expect(((await response.json()) as { status: string }).status).toBe("submitted");
      expect(await stopped).toBe(0);
      const lines = server.output.join("\n");
      expect(lines).toContain('"msg":"shutting down"');
      expect(lines).toContain('"msg":"stopped"');
      await expect(fetch(`${server.baseUrl}/healthz`)).rejects.toThrow();
      const row = await db.prisma.message.findFirstOrThrow({ where: { mode: "live" } });
      expect(row.status).toBe("submitted");
    } finally {
      await db.close();
      await fake.close();
    }
  });
});
