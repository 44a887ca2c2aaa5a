// Issue 51 §5, the rolling-upgrade drill (docs/operations.md#upgrades), on
// PostgreSQL: HAProxy from deploy/haproxy/sms-api.cfg in front of two API
// instances (the real Deno service, JOBS_ENABLED=false) and a worker
// (--role=worker), all on one fresh database. Under steady load through the
// proxy (concurrent clients sending with fresh Idempotency-Keys and reading
// back), each instance is replaced in turn by a newer one (the same commit
// serves for the mechanics) through the runtime API: start it on a new port,
// wait for its /readyz, put it in a free slot and wait until HAProxy has it
// UP, drain the old one until it holds no session, put it in maintenance,
// SIGTERM it and see it exit 0. Between the two replacements an additive,
// expand-only migration (a nullable column and a new table) is applied by the
// project's migrator from a migrations folder that includes it: the old
// instance still serving and the second new one (whose folder lacks it: the
// previous release meeting the next one's schema) run on it.
//
// Proven: every request during the drill was answered as expected (201 for a
// send, 200 for a read), no client saw a connection error, HAProxy neither
// retried nor redispatched a request, nor had one fail at a server; every
// acknowledged message is readable afterwards with its id, and the database
// holds exactly one message per acknowledged key.
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDatabase, findBreakingChanges, MIGRATIONS_DIR, migratePostgres } from "@sms/db";
import {
  availableBackends,
  createPostgresTestDatabase,
  type PostgresTestDatabase,
  withPrisma,
} from "@sms/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestKey, type ServerProcess, sendMessageRequest, startServer } from "../harness.ts";
import {
  type HaproxyProcess,
  haproxyAvailable,
  type ServerSlot,
  startHaproxy,
  until,
} from "../support/haproxy.ts";

const runs = (await availableBackends()).includes("postgres") && haproxyAvailable();

/** The expand step of the next release: additive only, so the running release is unaffected. */
const EXPAND_MIGRATION = "29991231000000_upgrade_drill_expand";
const EXPAND_SQL = [
  "-- The next release's expand step: a nullable column and a new table, nothing the running release reads changes.",
  'ALTER TABLE "messages" ADD COLUMN "upgrade_drill_note" TEXT;',
  'CREATE TABLE "upgrade_drill" ("id" BIGINT PRIMARY KEY, "noted_at" TIMESTAMPTZ NOT NULL DEFAULT now());',
  "",
].join("\n");

const CLIENTS = 4;
/** Each client's bound: the drill stops the load itself long before. */
const MAX_TURNS_PER_CLIENT = 20_000;

type Outcome =
  | { kind: "send" | "read"; status: number; body?: string }
  | { kind: "send" | "read"; error: string };

describe.runIf(runs)("rolling upgrade behind HAProxy, on PostgreSQL", () => {
  let database: PostgresTestDatabase;
  let haproxy: HaproxyProcess;
  let worker: ServerProcess;
  const instances: ServerProcess[] = [];
  let migrationsDir: string;

  const instanceEnv = {
    JOBS_ENABLED: "false",
    TRUST_PROXY: "1",
    MESSAGES_PER_MINUTE: "1000000",
    TEST_KEYS_PER_MINUTE: "100",
    SHUTDOWN_TIMEOUT_SECONDS: "10",
    // Longer than HAProxy needs to see /readyz fail twice (fall 2, inter 300 ms here; docs/operations.md#upgrades).
    SHUTDOWN_READINESS_DELAY_SECONDS: "3",
    LOG_LEVEL: "info",
  };

  const startInstance = async () => {
    const instance = await startServer({
      backend: "postgres",
      databaseUrl: database.databaseUrl,
      env: instanceEnv,
    });
    instances.push(instance);
    return instance;
  };

  beforeAll(async () => {
    database = await createPostgresTestDatabase();
    migrationsDir = await mkdtemp(join(tmpdir(), "sms-next-migrations-"));
    await cp(MIGRATIONS_DIR, migrationsDir, { recursive: true });
    await mkdir(join(migrationsDir, EXPAND_MIGRATION));
    await writeFile(join(migrationsDir, EXPAND_MIGRATION, "migration.sql"), EXPAND_SQL);
    const first = await startInstance();
    const second = await startInstance();
    worker = await startServer({
      backend: "postgres",
      databaseUrl: database.databaseUrl,
      args: ["--role=worker"],
      env: { STATUS_CHECK_INTERVAL_SECONDS: "1", SIMULATOR_DELIVERY_DELAY_MS: "200", LOG_LEVEL: "info" },
    });
    haproxy = await startHaproxy({
      servers: { api1: `127.0.0.1:${first.port}`, api2: `127.0.0.1:${second.port}` },
      env: {
        SMS_HAPROXY_CHECK_INTER: "300ms",
        SMS_HAPROXY_SLOWSTART: "2s",
        SMS_HAPROXY_CLIENT_REQUESTS_10S: "1000000",
      },
    });
    await until("both instances UP in HAProxy", async () => {
      const states = await Promise.all((["api1", "api2"] as const).map((slot) => haproxy.serverState(slot)));
      return states.every((state) => state.operational === 2);
    });
  }, 180_000);

  afterAll(async () => {
    await haproxy?.stop();
    await Promise.all([...instances, worker].filter(Boolean).map((server) => server.stop()));
    await database?.drop();
    if (migrationsDir) await rm(migrationsDir, { recursive: true, force: true });
  });

  const viaProxy = (path: string, init?: RequestInit) => fetch(`${haproxy.baseUrl}${path}`, init);

  /** Replaces the instance in `oldSlot` by a new one in `newSlot`, the documented way. */
  async function replace(old: ServerProcess, oldSlot: ServerSlot, newSlot: ServerSlot) {
    const next = await addInstance(newSlot);
    await haproxy.command(`set server api/${oldSlot} state drain`);
    await until(`${oldSlot} drained`, async () => (await haproxy.currentSessions(oldSlot)) === 0);
    await haproxy.command(`set server api/${oldSlot} state maint`);
    const code = await old.stop("SIGTERM");
    return { next, code };
  }

  /** Starts a new instance, puts it in `slot` through the runtime API and waits until HAProxy has it UP. */
  async function addInstance(slot: ServerSlot) {
    const next = await startInstance();
    await haproxy.command(`set server api/${slot} addr 127.0.0.1 port ${next.port}`);
    await haproxy.command(`set server api/${slot} state ready`);
    await until(`${slot} UP`, async () => (await haproxy.serverState(slot)).operational === 2);
    return next;
  }

  /** HAProxy's counters for a row of `show stat` (a server, or BACKEND). */
  async function stats(name: string) {
    const lines = (await haproxy.command("show stat")).split("\n");
    const header = lines[0]?.replace(/^# /, "").split(",") ?? [];
    const fields = lines.map((line) => line.split(",")).find((f) => f[0] === "api" && f[1] === name);
    return (field: string) => Number(fields?.[header.indexOf(field)] ?? Number.NaN);
  }

  /** What HAProxy did beyond delivering each request once: every figure must stay 0. */
  async function proxyTrouble() {
    const backend = await stats("BACKEND");
    return {
      retries: backend("wretr"),
      redispatches: backend("wredis"),
      connectionErrors: backend("econ"),
      responseErrors: backend("eresp"),
    };
  }

  /**
   * CLIENTS concurrent clients through the proxy, each sending with a fresh
   * Idempotency-Key and reading the message back, until stopped (or
   * MAX_TURNS_PER_CLIENT each).
   */
  function startLoad(apiKey: string, label: string) {
    const auth = { Authorization: `Bearer ${apiKey}` };
    const outcomes: Outcome[] = [];
    const acknowledged = new Map<string, string>(); // Idempotency-Key -> message id
    let stopped = false;

    async function client(index: number) {
      for (let turn = 0; turn < MAX_TURNS_PER_CLIENT && !stopped; turn++) {
        const key = `${label}-${index}-${turn}`;
        const to = `+99557${index}${String(turn).padStart(6, "0")}`;
        let id: string | undefined;
        try {
          const response = await viaProxy(
            "/v1/messages",
            sendMessageRequest(apiKey, key, {
              to,
              template: "verification_code",
              variables: { code: "482913" },
              locale: "en",
            }),
          );
          const text = await response.text();
          outcomes.push({
            kind: "send",
            status: response.status,
            ...(response.status === 201 ? {} : { body: text }),
          });
          const message = JSON.parse(text) as { id?: string };
          if (response.status === 201 && message.id) {
            id = message.id;
            acknowledged.set(key, id);
          }
        } catch (error) {
          outcomes.push({ kind: "send", error: String((error as Error).cause ?? error) });
        }
        if (!id) continue;
        try {
          const response = await viaProxy(`/v1/messages/${id}`, { headers: auth });
          outcomes.push({ kind: "read", status: response.status });
          await response.arrayBuffer();
        } catch (error) {
          outcomes.push({ kind: "read", error: String((error as Error).cause ?? error) });
        }
      }
    }

    const running = Promise.all(Array.from({ length: CLIENTS }, (_, index) => client(index)));
    const served = () => outcomes.length;
    return {
      served,
      /** Waits until `count` more requests have been answered. */
      async more(what: string, count = 40) {
        const from = served();
        await until(what, async () => served() >= from + count, 30_000);
      },
      async stop() {
        stopped = true;
        await running;
        const failed = outcomes.filter(
          (outcome) => !("status" in outcome) || outcome.status !== (outcome.kind === "send" ? 201 : 200),
        );
        if (failed.length > 0)
          console.error(haproxy.output.filter((line) => !/ 20[01] /.test(line)).join("\n"));
        return { outcomes, failed, acknowledged };
      },
      auth,
    };
  }

  /** Every acknowledged message is in the database once and readable through the proxy with its id. */
  async function expectAllReadable(acknowledged: Map<string, string>, auth: Record<string, string>) {
    const ids = [...acknowledged.values()];
    const db = withPrisma(await createDatabase({ databaseUrl: database.databaseUrl, poolSize: 2 }));
    try {
      const rows = await db.prisma.$queryRawUnsafe<Array<{ count: bigint }>>(
        "SELECT count(*) AS count FROM messages WHERE id = ANY($1::text[])",
        ids,
      );
      expect(Number(rows[0]?.count)).toBe(acknowledged.size);
    } finally {
      await db.close();
    }
    const unreadable: string[] = [];
    for (let start = 0; start < ids.length; start += 16) {
      await Promise.all(
        ids.slice(start, start + 16).map(async (id) => {
          const response = await viaProxy(`/v1/messages/${id}`, { headers: auth });
          const ok = response.status === 200 && ((await response.json()) as { id: string }).id === id;
          if (!ok) unreadable.push(id);
        }),
      );
    }
    expect(unreadable).toEqual([]);
  }

  it("replaces both instances and applies an expand migration under load: 0 failed requests, 0 connection errors, every acknowledged message readable", async () => {
    // The drill's own migration passes the CI check a contract step would fail.
    expect(findBreakingChanges(EXPAND_SQL)).toEqual([]);
    const { api_key: apiKey } = await createTestKey(viaProxy);
    const load = startLoad(apiKey, "drill");
    let result: Awaited<ReturnType<typeof load.stop>>;
    let exitCodes: Array<number | null> = [];
    try {
      await load.more("load under way");
      const [first, second] = instances;
      if (!first || !second) throw new Error("two instances expected");

      const one = await replace(first, "api1", "api3");
      // Expand, meanwhile: the project's migrator, from the next release's migrations folder.
      const { applied } = await migratePostgres(database.databaseUrl, { migrationsDir });
      expect(applied).toEqual([EXPAND_MIGRATION]);
      await load.more("load on the expanded schema");

      const two = await replace(second, "api2", "api4");
      await load.more("load on the new instances");
      exitCodes = [one.code, two.code];
    } finally {
      result = await load.stop();
    }
    expect(exitCodes).toEqual([0, 0]);
    expect(result.failed).toEqual([]);
    console.info(
      `rolling upgrade: ${result.outcomes.length} requests (${result.acknowledged.size} sends) through HAProxy, 2 instances replaced, 1 migration applied, ${result.failed.length} failed`,
    );
    // HAProxy delivered every request on its first try, and each new instance served.
    expect(await proxyTrouble()).toEqual({
      retries: 0,
      redispatches: 0,
      connectionErrors: 0,
      responseErrors: 0,
    });
    expect((await stats("api3"))("hrsp_2xx")).toBeGreaterThan(0);
    expect((await stats("api4"))("hrsp_2xx")).toBeGreaterThan(0);

    const db = withPrisma(await createDatabase({ databaseUrl: database.databaseUrl, poolSize: 2 }));
    try {
      const column = await db.prisma.$queryRawUnsafe<unknown[]>(
        "SELECT 1 FROM information_schema.columns WHERE table_name = 'messages' AND column_name = 'upgrade_drill_note'",
      );
      expect(column).toHaveLength(1);
    } finally {
      await db.close();
    }
    await expectAllReadable(result.acknowledged, load.auth);
  }, 240_000);

  it("a plain SIGTERM (systemctl stop, no runtime API) takes the instance out through the health check before its listener closes: /readyz 503 for SHUTDOWN_READINESS_DELAY_SECONDS, 0 retries", async () => {
    const api3 = await haproxy.serverState("api3");
    const running = instances.find((instance) => instance.port === api3.port);
    if (!running) throw new Error("the instance in api3 is not running");
    const { api_key: apiKey } = await createTestKey(viaProxy);
    const before = await proxyTrouble();
    const load = startLoad(apiKey, "signal");
    let result: Awaited<ReturnType<typeof load.stop>>;
    try {
      await load.more("load under way");
      await addInstance("api1");
      await load.more("load on three instances");
      // Only the signal: HAProxy learns from /readyz (503 while the instance still serves).
      const stopping = running.stop("SIGTERM");
      await until(
        "api3 DOWN by its health check",
        async () => (await haproxy.serverState("api3")).operational === 0,
      );
      expect(await stopping).toBe(0);
      await load.more("load after the stop");
    } finally {
      result = await load.stop();
    }
    expect(result.failed).toEqual([]);
    expect(await proxyTrouble()).toEqual(before);
    console.info(
      `plain SIGTERM: ${result.outcomes.length} requests (${result.acknowledged.size} sends), ${result.failed.length} failed, 0 retried by HAProxy`,
    );
    await expectAllReadable(result.acknowledged, load.auth);
  }, 120_000);
});
