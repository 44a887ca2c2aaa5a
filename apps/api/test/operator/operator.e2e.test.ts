// The operator's command-line tool, spawned the way `npm run operator` runs it
// (Deno, apps/operator/src/main.ts), calling a running service (Deno, on a
// PostgreSQL test database) through its internal listener with the typed
// @trpc/client; the service checks set-sender against a fake uBill. Every
// command, its one-line errors and exit codes, idempotency, the audit lines,
// and that no key material is stored or logged beyond the one-time print.
import { spawn } from "node:child_process";
import { newId, sha256Hex } from "@sms/crypto";
import { createDatabase } from "@sms/db";
import {
  availableBackends,
  createDatabaseProxy,
  createPostgresTestDatabase,
  type PostgresTestDatabase,
  type PrismaDatabase,
  withPrisma,
} from "@sms/db/testing";
import { type FakeUbill, startFakeUbill } from "@sms/provider-ubill/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runOperatorCli } from "../../../operator/src/cli.ts";
import {
  API_DIR,
  createTestKey,
  DENO,
  denoRunArgs,
  inProcessInternalClient,
  type ServerProcess,
  sendMessageRequest,
  startServer,
  startTestApp,
  type TestApp,
} from "../harness.ts";

const hasPostgres = (await availableBackends()).includes("postgres");
const UBILL_KEY = "ubill-operator-secret-0b7e";
const INTERNAL_TOKEN = "operator-e2e-internal-token-7c1d9a2b4e6f8a0c";

type Run = { code: number | null; stdout: string; stderr: string };

const withoutEmpty = (env: Record<string, string>) =>
  Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ""));

describe.skipIf(!hasPostgres)("operator CLI (Deno) against PostgreSQL", () => {
  let pg: PostgresTestDatabase;
  let db: PrismaDatabase;
  let fake: FakeUbill;
  /** The running service the tool calls, with uBill credentials (its brand list) … */
  let service: ServerProcess;
  /** … and one on the same database without them (set-sender cannot check brands). */
  let offlineService: ServerProcess | undefined;
  const outputs: string[] = [];
  const ubillEnv = () => ({
    UBILL_BASE_URL: fake.baseUrl,
    UBILL_API_KEY: UBILL_KEY,
    UBILL_DEFAULT_BRAND_ID: "1",
  });
  /** The variables that point the tool at a service's internal listener. */
  const internalEnv = (internalUrl: string | undefined) => ({
    INTERNAL_PORT: new URL(internalUrl ?? "").port,
    INTERNAL_API_TOKEN: INTERNAL_TOKEN,
  });

  beforeAll(async () => {
    fake = await startFakeUbill({
      apiKey: UBILL_KEY,
      brands: [
        { id: 1, name: "SMSGE", approved: true },
        { id: 7, name: "Acme", approved: true },
        { id: 8, name: "Pending", approved: false },
      ],
    });
    pg = await createPostgresTestDatabase();
    db = withPrisma(await createDatabase({ databaseUrl: pg.databaseUrl, poolSize: 2 }));
    service = await startServer({
      backend: "postgres",
      databaseUrl: pg.databaseUrl,
      internalToken: INTERNAL_TOKEN,
      env: ubillEnv(),
    });
  }, 120_000);
  afterAll(async () => {
    await service?.stop();
    await offlineService?.stop();
    await db?.close();
    await pg?.drop();
    await fake?.close();
  });

  function operator(args: string[], env: Record<string, string> = {}): Promise<Run> {
    return new Promise((resolve, reject) => {
      const child = spawn(DENO, denoRunArgs("../operator/src/main.ts", ...args), {
        cwd: API_DIR,
        // An empty value leaves the variable out altogether.
        env: withoutEmpty({
          PATH: process.env.PATH ?? "",
          HOME: process.env.HOME ?? "/tmp",
          DENO_NO_UPDATE_CHECK: "1",
          NO_COLOR: "1",
          DATABASE_URL: pg.databaseUrl,
          ...internalEnv(service.internalUrl),
          ...env,
        }),
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString("utf8");
      });
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString("utf8");
      });
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      child.once("error", reject);
      child.once("exit", (code) => {
        clearTimeout(timer);
        outputs.push(stdout, stderr);
        resolve({ code, stdout, stderr });
      });
    });
  }

  /** A bare project, optionally claimed (the browser claim flow is not needed here). */
  async function project(claimed = true): Promise<string> {
    const id = newId("prj");
    await db.prisma.project.create({ data: { id, ...(claimed ? { claimedAt: new Date() } : {}) } });
    return id;
  }

  it("prints help, and rejects bad usage with one line and exit 2 (before touching the database)", async () => {
    const help = await operator(["help"], { DATABASE_URL: "postgresql://nobody@127.0.0.1:1/none" });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("create-live-key --project");
    for (const args of [
      ["frobnicate"],
      ["show"],
      ["show", "--project"],
      ["grant-credits", "--project", "prj_x", "--bogus", "1"],
    ]) {
      const run = await operator(args, { DATABASE_URL: "postgresql://nobody@127.0.0.1:1/none" });
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr.trim().split("\n"), args.join(" ")).toHaveLength(1);
      expect(run.stderr).toMatch(/^operator: /);
    }
    const badEnv = await operator(["show", "--project", "prj_x"], { DATABASE_URL: "mysql://x" });
    expect(badEnv.code).toBe(2);
    expect(badEnv.stderr).toMatch(/^operator: Invalid configuration: DATABASE_URL/);
  }, 60_000);

  it("refuses to run without the internal listener's address and token, and with a wrong token", async () => {
    const unset = await operator(["show", "--project", "prj_0000000000000000000000"], {
      INTERNAL_PORT: "",
      INTERNAL_API_TOKEN: "",
    });
    expect(unset.code).toBe(2);
    expect(unset.stderr).toMatch(/^operator: .*INTERNAL_PORT and INTERNAL_API_TOKEN/);
    const wrong = await operator(["show", "--project", "prj_0000000000000000000000"], {
      INTERNAL_API_TOKEN: "a-wrong-token-of-at-least-thirty-two-characters",
    });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toBe("operator: The service refused INTERNAL_API_TOKEN.\n");
  }, 60_000);

  it("gives up on a service that never answers at its deadline: one line, exit 1", async () => {
    // Accepts connections and says nothing: a frozen network path.
    const internalUrl = service.internalUrl ?? "";
    const proxy = await createDatabaseProxy(internalUrl);
    proxy.freeze();
    try {
      const run = await operator(["show", "--project", "prj_0000000000000000000000"], {
        ...internalEnv(proxy.urlFor(internalUrl)),
        OPERATOR_TIMEOUT_MS: "500",
      });
      expect(run.code).toBe(1);
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
      expect(run.stderr).toMatch(/^operator: /);
    } finally {
      await proxy.close();
    }
  });

  it("create-live-key: refuses an unclaimed project, prints a working key once, stores only its hash", async () => {
    const unclaimed = await project(false);
    const refused = await operator(["create-live-key", "--project", unclaimed]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toMatch(/^operator: Project prj_\w+ has not been claimed/);
    expect(refused.stderr.trim().split("\n")).toHaveLength(1);

    const claimed = await project();
    const created = await operator(["create-live-key", "--project", claimed, "--actor", "nino"]);
    expect(created.code).toBe(0);
    const apiKey = /sk_live_[A-Za-z0-9_-]{43}/.exec(created.stdout)?.[0];
    expect(apiKey).toBeDefined();
    expect(created.stdout).toContain("only time the key is shown");
    const stored = await db.prisma.apiKey.findFirstOrThrow({ where: { projectId: claimed, mode: "live" } });
    expect(stored.keyHash).toBe(await sha256Hex(apiKey ?? ""));
    expect(stored.prefix).toBe(apiKey?.slice(0, 12));

    const json = await operator(["create-live-key", "--project", claimed, "--json"]);
    const parsed = JSON.parse(json.stdout) as {
      ok: boolean;
      api_key: string;
      key_id: string;
      prefix: string;
    };
    expect(parsed).toMatchObject({ ok: true, command: "create-live-key", project_id: claimed });
    expect(parsed.api_key).toMatch(/^sk_live_/);

    const audit = await db.prisma.auditEntry.findMany({ where: { projectId: claimed } });
    expect(audit.map((entry) => [entry.actor, entry.action])).toContainEqual(["nino", "api_key.created"]);
    expect(JSON.stringify(audit)).not.toContain(apiKey?.slice(12));
  }, 60_000);

  it("grant-credits with a reference is idempotent; show reports balance, keys (prefixes) and counts", async () => {
    const id = await project();
    const first = await operator([
      "grant-credits",
      "--project",
      id,
      "--amount",
      "100",
      "--reference",
      "INV-7",
      "--json",
    ]);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({
      ok: true,
      amount: 100,
      balance: 100,
      already_granted: false,
    });
    const again = await operator([
      "grant-credits",
      "--project",
      id,
      "--amount",
      "100",
      "--reference",
      "INV-7",
    ]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("already granted");
    const conflict = await operator([
      "grant-credits",
      "--project",
      id,
      "--amount",
      "5",
      "--reference",
      "INV-7",
    ]);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain("already used");
    for (const amount of ["--amount=-3", "--amount=1.5", "--amount=lots"]) {
      const bad = await operator(["grant-credits", "--project", id, amount]);
      expect(bad.code, amount).toBe(2);
      expect(bad.stderr, amount).toBe("operator: --amount must be a whole number.\n");
    }
    const zero = await operator(["grant-credits", "--project", id, "--amount", "0"]);
    expect(zero.code).toBe(1);
    expect(zero.stderr).toBe("operator: The amount must be a whole number from 1 to 1000000.\n");

    const shown = await operator(["show", "--project", id, "--json"]);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      ok: true,
      project: { id, suspended_at: null, sender: null },
      credits: { balance: 100, ledger_sum: 100, consistent: true, has_paid_credits: true },
      free_tier: { applies: false },
      keys: [],
      messages: [],
    });
    const human = await operator(["show", "--project", id]);
    expect(human.stdout).toContain("credits     100 (matches the ledger)");
    expect(human.stdout).toContain("does not apply (paid credits)");
  }, 60_000);

  it("set-sender checks uBill's brand list; clear-sender; both idempotent", async () => {
    const id = await project();
    const set = await operator(["set-sender", "--project", id, "--name", "acme"]);
    expect(set.code).toBe(0);
    expect(set.stdout).toContain("now sends as Acme (uBill brand 7)");
    expect(await db.prisma.project.findUniqueOrThrow({ where: { id } })).toMatchObject({
      sender: "Acme",
      senderBrandId: 7,
    });
    expect(
      (await operator(["set-sender", "--project", id, "--name", "Acme", "--brand-id", "7"])).stdout,
    ).toContain("nothing changed");
    const pending = await operator(["set-sender", "--project", id, "--name", "Pending"]);
    expect(pending.code).toBe(1);
    expect(pending.stderr).toContain("not approved");
    const unknown = await operator(["set-sender", "--project", id, "--name", "Nobody"]);
    expect(unknown.code).toBe(1);
    // A service without uBill credentials requires a brand id and says it was not checked.
    offlineService = await startServer({
      backend: "postgres",
      databaseUrl: pg.databaseUrl,
      internalToken: INTERNAL_TOKEN,
    });
    const offline = internalEnv(offlineService.internalUrl);
    expect((await operator(["set-sender", "--project", id, "--name", "Other"], offline)).code).toBe(1);
    const unchecked = await operator(
      ["set-sender", "--project", id, "--name", "Other", "--brand-id", "12"],
      offline,
    );
    expect(unchecked.code).toBe(0);
    expect(unchecked.stdout).toContain("Not checked against uBill");

    expect((await operator(["clear-sender", "--project", id])).stdout).toContain("shared default sender");
    expect((await operator(["clear-sender", "--project", id])).stdout).toContain("nothing changed");
    expect(await db.prisma.project.findUniqueOrThrow({ where: { id } })).toMatchObject({
      sender: null,
      senderBrandId: null,
    });
    expect(fake.requests.filter((request) => request.endpoint === "brands").length).toBeGreaterThanOrEqual(4);
    expect(fake.sends()).toHaveLength(0);
  }, 60_000);

  it("suspend / reinstate and revoke-key are idempotent, audited, and reach the API within the key-cache TTL", async () => {
    const id = await project();
    const created = await operator(["create-live-key", "--project", id, "--json"]);
    const { prefix, key_id: keyId } = JSON.parse(created.stdout) as { prefix: string; key_id: string };

    const suspended = await operator(["suspend", "--project", id, "--reason", "abuse report"]);
    expect(suspended.stdout).toContain("is now suspended");
    expect(suspended.stdout).toContain("within 2000 ms");
    expect((await operator(["suspend", "--project", id])).stdout).toContain("already suspended");
    expect((await db.prisma.project.findUniqueOrThrow({ where: { id } })).suspendedAt).not.toBeNull();
    expect((await operator(["reinstate", "--project", id])).stdout).toContain("is now active");

    const whole = await operator(["revoke-key", "--key", JSON.parse(created.stdout).api_key]);
    expect(whole.code).toBe(1);
    expect(whole.stderr).toContain("never paste one");
    const revoked = await operator(["revoke-key", "--prefix", prefix]);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain(`Revoked live key ${keyId}`);
    expect((await operator(["revoke-key", "--key", keyId])).stdout).toContain("already revoked");
    expect((await operator(["revoke-key", "--key", "key_nope"])).code).toBe(1);

    const actions = (
      await db.prisma.auditEntry.findMany({ where: { projectId: id }, orderBy: { createdAt: "asc" } })
    ).map((entry) => entry.action);
    expect(actions).toEqual([
      "api_key.created",
      "project.suspended",
      "project.suspended",
      "project.reinstated",
      "api_key.revoked",
      "api_key.revoked",
    ]);
  }, 60_000);

  it("set-daily-cap sets and clears a project's daily credit cap, audited; show prints it; bad values are refused", async () => {
    const id = await project();
    const set = await operator(["set-daily-cap", "--project", id, "--cap", "25", "--json"]);
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({
      ok: true,
      command: "set-daily-cap",
      project_id: id,
      daily_credit_cap: 25,
    });
    expect((await db.prisma.project.findUniqueOrThrow({ where: { id } })).dailyCreditCap).toBe(25);
    const shown = await operator(["show", "--project", id]);
    expect(shown.stdout).toContain("daily cap   25 live credits a UTC day");
    expect(JSON.parse((await operator(["show", "--project", id, "--json"])).stdout)).toMatchObject({
      project: { id, daily_credit_cap: 25 },
    });

    const cleared = await operator(["set-daily-cap", "--project", id, "--cap", "none", "--actor", "nino"]);
    expect(cleared.code).toBe(0);
    expect(cleared.stdout).toBe(
      `Project ${id} has no daily credit cap now: live sends are limited by the balance only.\n`,
    );
    expect((await db.prisma.project.findUniqueOrThrow({ where: { id } })).dailyCreditCap).toBeNull();

    for (const cap of ["--cap=-1", "--cap=lots", "--cap=1.5"]) {
      const bad = await operator(["set-daily-cap", "--project", id, cap]);
      expect(bad.code, cap).toBe(2);
      expect(bad.stderr, cap).toBe("operator: --cap must be a whole number.\n");
    }
    const missing = await operator(["set-daily-cap", "--project", id]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe("operator: 'set-daily-cap' needs --cap.\n");
    const zero = await operator(["set-daily-cap", "--project", id, "--cap", "0"]);
    expect(zero.code).toBe(1);
    expect(zero.stderr).toBe(
      "operator: The daily credit cap must be a whole number from 1 to 1000000, or none for no cap.\n",
    );
    const unknown = await operator([
      "set-daily-cap",
      "--project",
      "prj_00000000000000000000000000",
      "--cap",
      "5",
    ]);
    expect(unknown.code).toBe(1);

    const rows = await db.prisma.auditEntry.findMany({
      where: { projectId: id },
      orderBy: { createdAt: "asc" },
    });
    expect(rows.map((row) => [row.action, row.details])).toEqual([
      ["project.spending_set", { daily_credit_cap: 25 }],
      ["project.spending_set", { daily_credit_cap: null }],
    ]);
    expect(rows[1]?.actor).toBe("nino");
  }, 60_000);

  it("no key material or uBill key in anything the tool printed beyond the one-time key line, nor in the audit log", async () => {
    const printed = outputs.join("\n");
    expect(printed).not.toContain(UBILL_KEY);
    const audit = JSON.stringify(await db.prisma.auditEntry.findMany());
    expect(audit).not.toMatch(/sk_(live|test)_[A-Za-z0-9_-]{13,}/);
    expect(audit).not.toContain(UBILL_KEY);
  });
});

// The same tool's revocation and suspension seen from the API, in-process with a manual clock.
describe("operator changes seen by the API", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      backend: "pglite",
      env: { INTERNAL_PORT: "0", INTERNAL_API_TOKEN: INTERNAL_TOKEN },
    });
  }, 120_000);
  afterAll(() => t?.close());

  it("a suspension answers 403 once the key cache (2 s) has expired", async () => {
    const { api_key: apiKey, project_id: projectId } = await createTestKey(t.request);
    const body = { to: "+995555123456", template: "verification_code", variables: { code: "1234" } };
    expect((await t.request("/v1/messages", sendMessageRequest(apiKey, "a", body))).status).toBe(201);
    const run = await runOperatorCli({
      argv: ["suspend", "--project", projectId],
      client: (actor) => inProcessInternalClient(t, { token: INTERNAL_TOKEN, operator: actor }),
      defaultActor: "tester",
      cacheTtlMs: t.app.config.apiKeyCacheTtlMs,
    });
    expect(run.exitCode).toBe(0);
    t.clock.advance(1_000);
    expect((await t.request("/v1/messages", sendMessageRequest(apiKey, "b", body))).status).toBe(201);
    t.clock.advance(1_001);
    expect((await t.request("/v1/messages", sendMessageRequest(apiKey, "c", body))).status).toBe(403);
  });
});
