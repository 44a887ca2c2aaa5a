// Migration 20261220000000_partitions on a database that already holds data:
// migrate up to the one before it, write rows across several months (every
// column set), then apply it and find every row again, unchanged, in its
// month's partition, with message_events carrying its message's created_at.
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { MIGRATIONS_DIR } from "./migrator.ts";
import { availableBackends, createTestDatabase } from "./testing/index.ts";

const backends = await availableBackends();
const PARTITIONS = "20261220000000_partitions";

/** A copy of the repository's migrations before `PARTITIONS` (and `PARTITIONS` itself once `add` is called). */
async function migrationsBefore(): Promise<{ dir: string; add(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "sms-partitions-"));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  for (const name of await readdir(MIGRATIONS_DIR)) {
    if (name >= PARTITIONS && name !== "migration_lock.toml") continue;
    await cp(join(MIGRATIONS_DIR, name), join(dir, name), { recursive: true });
  }
  return { dir, add: () => cp(join(MIGRATIONS_DIR, PARTITIONS), join(dir, PARTITIONS), { recursive: true }) };
}

// Rows written with the columns the tables had before the migration.
const SEED = `
  INSERT INTO projects (id, claimed_at) VALUES ('prj_a', '2026-01-02T00:00:00Z'), ('prj_b', NULL);
  INSERT INTO messages (id, project_id, api_key_id, mode, recipient_masked, recipient_ciphertext, text_ciphertext,
                        template, locale, sender, segments, encoding, status, error_code, error_message, provider,
                        provider_ref, credits_reserved, next_check_at, submitted_at, text_purged_at, created_at,
                        updated_at)
  SELECT 'msg_' || lpad(g::text, 4, '0'), CASE WHEN g % 2 = 0 THEN 'prj_a' ELSE 'prj_b' END, 'key_' || g,
         CASE WHEN g % 3 = 0 THEN 'live' ELSE 'test' END::"KeyMode", '+9955••••••' || lpad(g::text, 2, '0'),
         decode(lpad(to_hex(g), 4, '0'), 'hex'), CASE WHEN g % 4 = 0 THEN NULL ELSE decode('00ff' || lpad(to_hex(g), 2, '0'), 'hex') END,
         'verification_code', 'ka', 'SMSGE', 1 + g % 2, 'ucs2',
         (ARRAY['queued','submitted','delivered','undeliverable','failed','unknown'])[1 + g % 6]::"MessageStatus",
         CASE WHEN g % 6 = 4 THEN 'provider_rejected' END, CASE WHEN g % 6 = 4 THEN 'rejected' END,
         'simulator', 'ref-' || g, g % 3, '2026-12-01T00:00:00Z'::timestamptz + g * interval '1 minute',
         CASE WHEN g % 6 > 0 THEN '2025-10-01T00:00:01Z'::timestamptz + g * interval '9 days' END,
         CASE WHEN g % 5 = 0 THEN '2026-11-01T00:00:00Z'::timestamptz END,
         '2025-10-01T00:00:00.123Z'::timestamptz + g * interval '9 days',
         '2025-10-01T00:00:05.456Z'::timestamptz + g * interval '9 days'
  FROM generate_series(1, 40) AS g;
  INSERT INTO message_events (message_id, status, error_code, created_at)
  SELECT id, 'queued', NULL, created_at FROM messages
  UNION ALL SELECT id, status, error_code, updated_at FROM messages WHERE status <> 'queued';
  INSERT INTO request_log (id, project_id, key_id, mode, method, route, status, error_code, idempotency_key, replayed,
                           duration_ms, message_id, verification_id, created_at)
  SELECT 'req_' || lpad(g::text, 4, '0'), 'prj_a', 'key_1', CASE WHEN g % 2 = 0 THEN 'test'::"KeyMode" END, 'POST',
         '/v1/messages', 200 + g, CASE WHEN g % 2 = 1 THEN 'rate_limited' END, 'idem-' || g, g % 2 = 0, g,
         'msg_' || lpad(g::text, 4, '0'), NULL, '2026-08-20T10:00:00Z'::timestamptz + g * interval '5 days'
  FROM generate_series(1, 20) AS g;`;

describe.each(backends)("the partitions migration on %s", (kind) => {
  it("moves the rows already there into monthly partitions, every column unchanged", async () => {
    const migrations = await migrationsBefore();
    const test = await createTestDatabase(kind, { migrate: false, migrationsDir: migrations.dir });
    onTestFinished(() => test.drop());
    const { db } = test;
    await db.migrate();
    for (const statement of SEED.split(";").filter((part) => part.trim())) await db.query(statement);

    const snapshot = async () => ({
      messages: await db.query("SELECT * FROM messages ORDER BY id"),
      events: await db.query(
        "SELECT message_id, status::text, error_code, created_at FROM message_events ORDER BY 1, 2",
      ),
      requests: await db.query("SELECT * FROM request_log ORDER BY id"),
    });
    const before = await snapshot();
    expect(before.messages).toHaveLength(40);
    expect(before.events).toHaveLength(40 + 34);
    expect(before.requests).toHaveLength(20);

    await migrations.add();
    expect(await db.migrate()).toEqual({ applied: [PARTITIONS] });
    expect(await snapshot()).toEqual(before);

    // Each row is in its own month's partition; months run Oct 2025 to Sep 2026.
    const misplaced = await db.query(
      `SELECT id FROM messages
       WHERE tableoid::regclass::text <> 'messages_p' || to_char(created_at AT TIME ZONE 'UTC', 'YYYY_MM')`,
    );
    expect(misplaced).toEqual([]);
    const events = await db.query<{ ok: boolean; n: number }>(
      `SELECT bool_and(e.message_created_at = m.created_at
                       AND e.tableoid::regclass::text = 'message_events_p' || to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY_MM')) AS ok,
              count(*)::int AS n
       FROM message_events e JOIN messages m ON m.id = e.message_id`,
    );
    expect(events).toEqual([{ ok: true, n: 74 }]);
    const requests = await db.query(
      `SELECT id FROM request_log
       WHERE tableoid::regclass::text <> 'request_log_p' || to_char(created_at AT TIME ZONE 'UTC', 'YYYY_MM')`,
    );
    expect(requests).toEqual([]);
    const parts = await db.query<{ name: string }>(
      `SELECT c.relname::text AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = 'messages'::regclass ORDER BY 1`,
    );
    const names = parts.map((part) => part.name);
    expect(names[0]).toBe("messages_default");
    expect(names).toContain("messages_p2025_10");
    expect(names).toContain("messages_p2026_09");

    // Still one row per id: a second row with the same key is refused, and the
    // request log's ON CONFLICT target exists.
    await expect(
      db.query("INSERT INTO messages SELECT * FROM messages WHERE id = 'msg_0001'"),
    ).rejects.toThrow();
    await db.query(
      `INSERT INTO request_log SELECT * FROM request_log WHERE id = 'req_0001' ON CONFLICT (id, created_at) DO NOTHING`,
    );
    expect(await db.query("SELECT count(*)::int AS n FROM request_log")).toEqual([{ n: 20 }]);
    // Deleting a message row takes its timeline along, as the foreign key's cascade did.
    await db.query("DELETE FROM messages WHERE id = 'msg_0006'");
    expect(
      await db.query("SELECT count(*)::int AS n FROM message_events WHERE message_id = 'msg_0006'"),
    ).toEqual([{ n: 0 }]);
    // Deleting the project does too, through messages' own cascade.
    await db.query("DELETE FROM projects WHERE id = 'prj_b'");
    expect(
      await db.query(
        "SELECT count(*)::int AS n FROM message_events e WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = e.message_id)",
      ),
    ).toEqual([{ n: 0 }]);
  });
});
