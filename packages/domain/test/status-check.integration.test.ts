// The status check's rounds over the simulator's messages on PGlite and
// PostgreSQL: each batch locked, asked and settled in one transaction, so two
// rounds at once ask every message once, write it once (settled, with one
// timeline event, or given its next check one interval on).
import { newId, generateKeySpec, parseKeyring } from "@sms/crypto";
import { availableBackends, createTestDatabase, type TestDatabase } from "@sms/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkMessageStatuses, type CheckStatusesDeps } from "../src/messages/check-statuses.ts";
import type { SmsProvider } from "../src/provider.ts";
import { createStore } from "../src/store/index.ts";

const backends = await availableBackends();
const NOW = new Date("2026-11-22T10:00:00Z");
const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

describe.each(backends)("the status check on %s", (kind) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(kind, { poolSize: 10 });
  }, 120_000);
  afterAll(() => t?.drop());

  it("two rounds at once over 450 of the simulator's messages ask and settle each once; a pending one is due an interval on", async () => {
    const projectId = newId("prj");
    await t.db.query("INSERT INTO projects (id) VALUES ($1)", [projectId]);
    const ids = Array.from({ length: 450 }, () => newId("msg", NOW.getTime() - 120_000));
    const past = new Date(NOW.getTime() - 60_000);
    await t.db.query(
      `INSERT INTO messages (id, project_id, mode, recipient_masked, template, locale, sender, segments, encoding,
                             provider, provider_ref, status, submitted_at, next_check_at, created_at, updated_at)
       SELECT id, $2, 'test', '+9955••••••12', 'verification_code', 'en', 'SMSGE', 1, 'gsm7', 'simulator',
              'ref-' || n, 'submitted', $3, $3, $3, $3
       FROM unnest(CAST($1 AS text[])) WITH ORDINALITY AS m(id, n)`,
      [ids, projectId, past],
    );
    // Every row version the round writes to messages, counted by a trigger of this test's own.
    await t.db.query("CREATE TABLE updates_seen (id text NOT NULL)");
    await t.db.query(
      `CREATE FUNCTION count_update() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN INSERT INTO updates_seen VALUES (NEW.id); RETURN NEW; END $$`,
    );
    await t.db.query(
      "CREATE TRIGGER count_update AFTER UPDATE ON messages FOR EACH ROW EXECUTE FUNCTION count_update()",
    );
    const asked = new Map<string, number>();
    const simulator: SmsProvider = {
      name: "simulator",
      submit: async () => ({ kind: "unreachable", reason: "unused" }),
      async checkStatus({ providerRef }) {
        asked.set(providerRef, (asked.get(providerRef) ?? 0) + 1);
        // Another turn of the event loop, so the two rounds' batches interleave.
        await new Promise((resolve) => setTimeout(resolve, 0));
        return providerRef === "ref-7" ? { kind: "pending" } : { kind: "delivered" };
      },
    };
    const deps = (): CheckStatusesDeps => ({
      store: createStore(t.db),
      keyring: parseKeyring(generateKeySpec("unit")),
      clock: { now: () => NOW },
      logger: silent,
      providers: { test: simulator, live: null },
      config: {
        intervalMs: 20_000,
        batchSize: 50,
        concurrency: 8,
        deadlineMs: 72 * 3_600_000,
        callTimeoutMs: 1_000,
      },
    });
    const [first, second] = await Promise.all([checkMessageStatuses(deps()), checkMessageStatuses(deps())]);

    expect(first.checked + second.checked).toBe(450);
    expect(first.delivered + second.delivered).toBe(449);
    expect([...asked.values()].every((times) => times === 1)).toBe(true);
    expect(asked.size).toBe(450);
    const rows = await t.db.query<{ status: string; n: number }>(
      "SELECT status::text AS status, count(*)::int AS n FROM messages WHERE project_id = $1 GROUP BY 1 ORDER BY 1",
      [projectId],
    );
    expect(rows).toEqual([
      { status: "delivered", n: 449 },
      { status: "submitted", n: 1 },
    ]);
    const events = await t.db.query<{ n: number; messages: number }>(
      `SELECT count(*)::int AS n, count(DISTINCT message_id)::int AS messages FROM message_events
       WHERE message_id = ANY(CAST($1 AS text[])) AND status = 'delivered'`,
      [ids],
    );
    expect(events).toEqual([{ n: 449, messages: 449 }]);
    // Each message written once: settled, or (the pending one) given its next check. A claim first would be 900.
    const [writes] = await t.db.query<{ n: number; messages: number }>(
      "SELECT count(*)::int AS n, count(DISTINCT id)::int AS messages FROM updates_seen",
    );
    expect(writes).toEqual({ n: 450, messages: 450 });
    const [pending] = await t.db.query<{ next_check_at: Date }>(
      "SELECT next_check_at FROM messages WHERE project_id = $1 AND status = 'submitted'",
      [projectId],
    );
    expect(new Date(pending!.next_check_at).getTime()).toBe(NOW.getTime() + 20_000);
    // A round now finds nothing due: the pending one is an interval away.
    expect(await checkMessageStatuses(deps())).toMatchObject({ checked: 0 });
  });
});
