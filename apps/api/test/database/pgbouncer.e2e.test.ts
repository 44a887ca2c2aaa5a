// The service behind PgBouncer in transaction mode (Debian's 1.18, which keeps
// no prepared statements across transactions): with
// DATABASE_PREPARED_STATEMENTS=false it sends, replays, reads and runs the
// status check through the pooler, and migrates through
// DATABASE_MIGRATION_URL. Live sends too: their reservation goes to the
// server with its COMMIT as one simple query. The control case shows why the
// switch exists: named statements through the same pooler fail.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createDatabase } from "@sms/db";
import {
  availableBackends,
  createPostgresTestDatabase,
  type PostgresTestDatabase,
  type PrismaDatabase,
  withPrisma,
} from "@sms/db/testing";
import { createStore, systemClock } from "@sms/domain";
import { type FakeUbill, startFakeUbill } from "@sms/provider-ubill/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_DIR, createTestKey, type ServerProcess, sendMessageRequest, startServer } from "../harness.ts";
import { claimWithLiveKey } from "../support/live-projects.ts";
import {
  type PgBouncer,
  pgbouncerAvailable,
  RECOMMENDED_PGBOUNCER_SETTINGS,
  startPgBouncer,
} from "../support/pgbouncer.ts";

const UBILL_KEY = "ubill-bouncer-secret-5e21";
const runs = (await availableBackends()).includes("postgres") && pgbouncerAvailable();

describe.runIf(runs)("behind PgBouncer in transaction mode", () => {
  let bouncer: PgBouncer;
  let database: PostgresTestDatabase;
  let server: ServerProcess;
  let fake: FakeUbill;

  beforeAll(async () => {
    bouncer = await startPgBouncer({ poolSize: 4 });
    database = await createPostgresTestDatabase();
    fake = await startFakeUbill({ apiKey: UBILL_KEY });
    server = await startServer({
      backend: "postgres",
      databaseUrl: bouncer.through(database.databaseUrl),
      env: {
        DATABASE_MIGRATION_URL: database.databaseUrl,
        DATABASE_PREPARED_STATEMENTS: "false",
        DATABASE_POOL_SIZE: "12",
        MESSAGES_PER_MINUTE: "100000",
        STATUS_CHECK_INTERVAL_SECONDS: "1",
        SIMULATOR_DELIVERY_DELAY_MS: "200",
        UBILL_BASE_URL: fake.baseUrl,
        UBILL_API_KEY: UBILL_KEY,
        UBILL_DEFAULT_BRAND_ID: "1",
        RECIPIENT_MESSAGES_PER_MINUTE: "10000",
        RECIPIENT_MESSAGES_PER_DAY: "10000",
      },
    });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await database?.drop();
    await bouncer?.stop();
    await fake?.close();
  });

  const call = (path: string, init?: RequestInit) => fetch(`${server.baseUrl}${path}`, init);
  const body = (to: string) => ({
    to,
    template: "verification_code",
    variables: { code: "482913" },
    locale: "en",
  });

  it("runs with the settings docs/operations.md recommends (server_login_retry = 1)", () => {
    const operations = readFileSync(join(API_DIR, "../../docs/operations.md"), "utf8");
    const section = operations.slice(operations.indexOf("## Behind PgBouncer"));
    for (const [name, value] of Object.entries(RECOMMENDED_PGBOUNCER_SETTINGS)) {
      expect(section).toContain(`${name} = ${value}`);
      expect(bouncer.setting(name)).toBe(value);
    }
    expect(RECOMMENDED_PGBOUNCER_SETTINGS.server_login_retry).toBe("1");
  });

  it("migrated through DATABASE_MIGRATION_URL and is ready through the pooler", async () => {
    const ready = await call("/readyz");
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: "ready", database: "ok" });
  });

  it("sends, replays and reads concurrently, and the status check delivers, all through the pooler", async () => {
    const { api_key: apiKey } = await createTestKey(call);
    const sends = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        call(
          "/v1/messages",
          sendMessageRequest(apiKey, `bouncer-${i}`, body(`+99555512${String(i).padStart(4, "0")}`)),
        ),
      ),
    );
    expect(sends.map((response) => response.status)).toEqual(Array(40).fill(201));
    const messages = (await Promise.all(sends.map((response) => response.json()))) as Array<{
      id: string;
      status: string;
    }>;
    expect(new Set(messages.map((message) => message.status))).toEqual(new Set(["submitted"]));

    const replays = await Promise.all(
      Array.from({ length: 20 }, () =>
        call("/v1/messages", sendMessageRequest(apiKey, "bouncer-0", body("+995555120000"))),
      ),
    );
    expect(replays.map((response) => response.status)).toEqual(Array(20).fill(200));
    for (const replay of replays) expect(((await replay.json()) as { id: string }).id).toBe(messages[0]?.id);

    const reads = await Promise.all(
      messages.map((message) =>
        call(`/v1/messages/${message.id}`, { headers: { Authorization: `Bearer ${apiKey}` } }),
      ),
    );
    expect(reads.map((response) => response.status)).toEqual(Array(40).fill(200));

    await expect
      .poll(
        async () => {
          const states = await Promise.all(
            messages.map(async (message) => {
              const response = await call(`/v1/messages/${message.id}`, {
                headers: { Authorization: `Bearer ${apiKey}` },
              });
              return ((await response.json()) as { status: string }).status;
            }),
          );
          return states.filter((status) => status === "delivered").length;
        },
        { timeout: 30_000, interval: 500 },
      )
      .toBe(40);
    // The harness polls /readyz until the database is reached; its "not ready" (503) at start-up is the
    // documented answer, not a failure through the pooler.
    const served = server.output.filter((line) => !line.includes('"route":"/readyz"'));
    expect(served.join("\n")).not.toMatch(/prepared statement|"status":5\d\d/);
  }, 90_000);

  it("live sends through the pooler: 20 at once against 10 paid credits send exactly 10, the rest 402 with nothing kept", async () => {
    const { project_id: projectId } = await createTestKey(call);
    const db: PrismaDatabase = withPrisma(
      await createDatabase({ databaseUrl: database.databaseUrl, poolSize: 2 }),
    );
    try {
      const { apiKey } = await claimWithLiveKey(
        { store: createStore(db), clock: systemClock, prisma: db.prisma },
        projectId,
        { paid: 10 },
      );
      const sends = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          call("/v1/messages", sendMessageRequest(apiKey, `bouncer-live-${i}`, body("+995555123456"))),
        ),
      );
      const statuses = sends.map((response) => response.status).sort();
      expect(statuses).toEqual([...Array(10).fill(201), ...Array(10).fill(402)]);
      expect(fake.sends()).toHaveLength(10);
      expect(await db.prisma.message.count({ where: { projectId } })).toBe(10);
      const project = await db.prisma.project.findUniqueOrThrow({ where: { id: projectId } });
      expect(project.creditBalance).toBe(0);
      expect(await db.prisma.creditLedgerEntry.count({ where: { projectId, kind: "reservation" } })).toBe(10);
    } finally {
      await db.close();
    }
  }, 60_000);

  it("control: named prepared statements through the same pooler fail", async () => {
    const db = await createDatabase({
      databaseUrl: bouncer.through(database.databaseUrl),
      poolSize: 8,
      preparedStatements: true,
      logger: { info() {}, warn() {}, error() {} },
    });
    try {
      const outcomes = await Promise.allSettled(
        Array.from({ length: 200 }, (_, i) => db.query("SELECT CAST($1 AS integer) AS n", [i])),
      );
      const failures = outcomes.filter((outcome) => outcome.status === "rejected");
      expect(failures.length).toBeGreaterThan(0);
      expect(String((failures[0] as PromiseRejectedResult).reason)).toMatch(/prepared statement/);
    } finally {
      await db.close();
    }
  });
});
