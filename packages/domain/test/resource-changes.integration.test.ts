// The store's change notifications (store/changes.ts) on PostgreSQL: the
// statements that change what a caller reads of a message notify its id when
// their transaction commits, and resourceChanges() wakes the watchers of that
// id and no other. On PGlite there is no listener (callers poll).
import { generateKeySpec, newId, parseKeyring } from "@sms/crypto";
import { availableBackends, createTestDatabase, type TestDatabase } from "@sms/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkMessageStatuses } from "../src/messages/check-statuses.ts";
import { recoverQueuedMessages } from "../src/messages/recover-queued.ts";
import type { SmsProvider } from "../src/provider.ts";
import { createStore, type ResourceChanges, resourceChanges } from "../src/store/index.ts";

const backends = await availableBackends();
const NOW = new Date("2026-11-22T10:00:00Z");
const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function insertMessages(
  t: TestDatabase,
  status: "submitted" | "queued",
  count: number,
): Promise<string[]> {
  const projectId = newId("prj");
  await t.db.query("INSERT INTO projects (id) VALUES ($1)", [projectId]);
  const ids = Array.from({ length: count }, () => newId("msg", NOW.getTime() - 120_000));
  const past = new Date(NOW.getTime() - 60_000);
  await t.db.query(
    `INSERT INTO messages (id, project_id, mode, recipient_masked, template, locale, sender, segments, encoding,
                           provider, provider_ref, status, submitted_at, next_check_at, created_at, updated_at)
     SELECT id, $2, 'test', '+9955••••••12', 'verification_code', 'en', 'SMSGE', 1, 'gsm7', 'simulator',
            'ref-' || n, CAST($4 AS "MessageStatus"), $3, $3, $3, $3
     FROM unnest(CAST($1 AS text[])) WITH ORDINALITY AS m(id, n)`,
    [ids, projectId, past, status],
  );
  return ids;
}

describe("resource changes on PGlite", () => {
  it("has no listener: nothing is heard, watchers poll", async () => {
    const t = await createTestDatabase("pglite");
    try {
      const changes = resourceChanges(t.db);
      expect(changes.listening()).toBe(false);
      await changes.close();
    } finally {
      await t.drop();
    }
  });
});

describe.runIf(backends.includes("postgres"))("resource changes on PostgreSQL", () => {
  let t: TestDatabase;
  let changes: ResourceChanges;
  beforeAll(async () => {
    t = await createTestDatabase("postgres", { poolSize: 4 });
    changes = resourceChanges(t.db);
    await until(() => changes.listening());
  }, 120_000);
  afterAll(async () => {
    await changes?.close();
    await t?.drop();
  });

  /** Watches `ids` and returns how often each was woken. */
  function watchAll(ids: string[]) {
    const woken = new Map<string, number>();
    const stops = ids.map((id) => changes.watch(id, () => woken.set(id, (woken.get(id) ?? 0) + 1)));
    return {
      woken,
      stop: () => {
        for (const stop of stops) stop();
      },
    };
  }

  it("the status check's settle notifies every message it settles, and only those", async () => {
    const ids = await insertMessages(t, "submitted", 5);
    const untouched = await insertMessages(t, "queued", 1);
    const watched = watchAll([...ids, ...untouched]);
    const simulator: SmsProvider = {
      name: "simulator",
      submit: async () => ({ kind: "unreachable", reason: "unused" }),
      checkStatus: async ({ providerRef }) =>
        providerRef === "ref-5" ? { kind: "pending" } : { kind: "delivered" },
    };
    await checkMessageStatuses({
      store: createStore(t.db),
      keyring: parseKeyring(generateKeySpec("unit")),
      clock: { now: () => NOW },
      logger: silent,
      providers: { test: simulator, live: null },
      config: {
        intervalMs: 20_000,
        batchSize: 50,
        concurrency: 2,
        deadlineMs: 72 * 3_600_000,
        callTimeoutMs: 1_000,
      },
    });
    const settled = ids.slice(0, 4);
    await until(() => settled.every((id) => watched.woken.get(id) === 1));
    // A marker sent after the round arrives after anything the round sent: nothing else is on its way.
    const marker = watchAll(["marker"]);
    await t.db.query("SELECT pg_notify('sms_resource_changes', 'marker')");
    await until(() => marker.woken.get("marker") === 1);
    expect(watched.woken.get(ids[4] ?? "")).toBeUndefined();
    expect(watched.woken.get(untouched[0] ?? "")).toBeUndefined();
    watched.stop();
    marker.stop();
    expect(changes.watching()).toBe(0);
  });

  it("the recovery sweep notifies the queued messages it ends as unknown", async () => {
    const ids = await insertMessages(t, "queued", 3);
    const watched = watchAll(ids);
    const result = await recoverQueuedMessages({
      store: createStore(t.db),
      clock: { now: () => NOW },
      config: { olderThanMs: 30_000, batchSize: 10 },
    });
    expect(result.recovered).toBeGreaterThanOrEqual(3);
    await until(() => ids.every((id) => watched.woken.get(id) === 1));
    watched.stop();
  });

  it("a rolled-back change notifies nobody", async () => {
    const [id = ""] = await insertMessages(t, "queued", 1);
    const watched = watchAll([id, "marker"]);
    await t.db
      .transaction(async (sql) => {
        await sql.query("UPDATE messages SET status = 'unknown' WHERE id = $1", [id]);
        await sql.query("SELECT pg_notify('sms_resource_changes', $1)", [id]);
        throw new Error("roll back");
      })
      .catch(() => undefined);
    await t.db.query("SELECT pg_notify('sms_resource_changes', 'marker')");
    await until(() => watched.woken.get("marker") === 1);
    expect(watched.woken.get(id)).toBeUndefined();
    watched.stop();
  });
});
