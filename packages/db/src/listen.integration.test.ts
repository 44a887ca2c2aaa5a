// listen(): one LISTEN session per call on PostgreSQL, none on PGlite.
// Notifications arrive once their transaction commits (never for a rollback),
// and a session that was cut reconnects and says so (onReconnect).
import { describe, expect, it, onTestFinished } from "vitest";
import { listen } from "./listen.ts";
import { availableBackends, createTestDatabase } from "./testing/index.ts";

const backends = await availableBackends();

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("listen on PGlite", () => {
  it("there is no second session to listen on: null (callers poll)", async () => {
    const { db, drop } = await createTestDatabase("pglite");
    onTestFinished(() => drop());
    expect(listen(db, { channel: "sms_test_changes", onNotify: () => {} })).toBeNull();
  });
});

describe.runIf(backends.includes("postgres"))("listen on PostgreSQL", () => {
  it("hears committed notifications in order, none of a rolled-back transaction", async () => {
    const { db, drop } = await createTestDatabase("postgres");
    onTestFinished(() => drop());
    const heard: string[] = [];
    const listener = listen(db, { channel: "sms_test_changes", onNotify: (payload) => heard.push(payload) });
    onTestFinished(() => listener?.close());
    await until(() => listener?.listening() === true);
    await db
      .transaction(async (sql) => {
        await sql.query("SELECT pg_notify('sms_test_changes', 'rolled back')");
        throw new Error("roll back");
      })
      .catch(() => undefined);
    await db.transaction(async (sql) => {
      await sql.query("SELECT pg_notify('sms_test_changes', $1)", ["msg_a"]);
      // Not sent before the commit.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(heard).toEqual([]);
      await sql.query("SELECT pg_notify('sms_test_changes', $1)", ["msg_b"]);
    });
    await db.query("SELECT pg_notify('sms_other_channel', 'x')");
    await db.query("SELECT pg_notify('sms_test_changes', 'last')");
    await until(() => heard.includes("last"));
    expect(heard).toEqual(["msg_a", "msg_b", "last"]);
  });

  it("a terminated session comes back and calls onReconnect; close() ends it", async () => {
    const { db, drop } = await createTestDatabase("postgres");
    onTestFinished(() => drop());
    const heard: string[] = [];
    let reconnects = 0;
    const warnings: string[] = [];
    const listener = listen(db, {
      channel: "sms_test_changes",
      logger: { info: () => {}, warn: (_fields, message) => warnings.push(message), error: () => {} },
      onNotify: (payload) => heard.push(payload),
      onReconnect: () => {
        reconnects += 1;
      },
    });
    await until(() => listener?.listening() === true);
    const [terminated] = await db.query<{ n: number }>(
      `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND query = 'LISTEN sms_test_changes'`,
    );
    expect(terminated?.n).toBe(1);
    await until(() => reconnects === 1 && listener?.listening() === true);
    expect(warnings).toEqual(["the LISTEN session broke; reconnecting"]);
    await db.query("SELECT pg_notify('sms_test_changes', 'after')");
    await until(() => heard.includes("after"));
    await listener?.close();
    expect(listener?.listening()).toBe(false);
    // Its session is gone from the server.
    const sessions = async () =>
      (
        await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND query = 'LISTEN sms_test_changes'`,
        )
      )[0]?.n;
    for (let i = 0; (await sessions()) !== 0; i++) {
      if (i > 200) throw new Error("the LISTEN session outlived close()");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });
});
