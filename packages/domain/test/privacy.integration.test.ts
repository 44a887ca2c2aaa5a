// The retention purges and key rotation against both backends, on rows
// written directly (the API-level proof is apps/api/test/privacy.*.test.ts).
import { DecryptError, generateKeySpec, type Keyring, newId, parseKeyring } from "@sms/crypto";
import type { PrismaClient } from "@sms/db/testing";
import {
  availableBackends,
  createTestDatabase,
  dropAllTestDatabases,
  type TestDatabase,
} from "@sms/db/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { DAY_MS } from "../src/model/time.ts";
import {
  purgeIdempotencyRecords,
  purgeMessageText,
  purgeRateLimitCounters,
} from "../src/privacy/retention.ts";
import { rotateMessageKeys } from "../src/privacy/rotate-message-keys.ts";
import { createStore } from "../src/store/index.ts";
import { PURGE_CODES_SQL } from "../src/store/verifications.ts";
import { rowsRead } from "./support/plan-rows.ts";
import { projectDatabase } from "./support/project-database.ts";

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });
afterAll(() => dropAllTestDatabases());

const backends = await availableBackends();

const NOW = new Date("2026-11-22T10:00:00Z");
const HOUR_MS = 3_600_000;
const RETENTION_MS = 7 * DAY_MS;
const HOLD_MS = 72 * HOUR_MS;

type Status = "queued" | "submitted" | "delivered" | "undeliverable" | "failed" | "unknown";

async function insertProject(prisma: PrismaClient): Promise<string> {
  const id = newId("prj");
  await prisma.project.create({ data: { id, createdAt: NOW, updatedAt: NOW } });
  return id;
}

async function insertMessage(
  prisma: PrismaClient,
  keyring: Keyring,
  projectId: string,
  options: { ageMs: number; status: Status; to?: string; text?: string },
): Promise<string> {
  const id = newId("msg");
  const createdAt = new Date(NOW.getTime() - options.ageMs);
  await prisma.message.create({
    data: {
      id,
      projectId,
      mode: "test",
      recipientMasked: "+9955••••••21",
      recipientCiphertext: await keyring.encrypt(options.to ?? "+995577001121", id),
      textCiphertext: await keyring.encrypt(options.text ?? "Your verification code is 90817263.", id),
      template: "verification_code",
      locale: "en",
      sender: "SMSGE",
      segments: 1,
      status: options.status,
      provider: "simulator",
      createdAt,
      updatedAt: createdAt,
    },
  });
  return id;
}

type RawMessage = {
  id: string;
  recipient_ciphertext: Uint8Array | null;
  text_ciphertext: Uint8Array | null;
  text_purged_at: Date | null;
  updated_at: Date;
};

async function rawMessage(prisma: PrismaClient, id: string): Promise<RawMessage> {
  const [row] = await prisma.$queryRaw<RawMessage[]>`
    SELECT id, recipient_ciphertext, text_ciphertext, text_purged_at, updated_at FROM messages WHERE id = ${id}`;
  if (!row) throw new Error(`no message ${id}`);
  return row;
}

describe.each(backends)("privacy on %s", (kind) => {
  let t: TestDatabase;
  let prisma: PrismaClient;
  const keyring = parseKeyring(generateKeySpec("k1"));
  const deps = () => ({ store: createStore(t.db) });
  const rotate = ({ keyring, ...input }: { keyring: Keyring; batchSize?: number; now: Date }) =>
    rotateMessageKeys({ ...deps(), keyring }, input);

  beforeAll(async () => {
    t = await createTestDatabase(kind);
    prisma = t.db.prisma;
  }, 60_000);
  afterAll(() => t?.drop());
  beforeEach(async () => {
    await prisma.$executeRaw`TRUNCATE messages, idempotency_records, rate_limit_counters, projects CASCADE`;
  });

  describe("purgeMessageText", () => {
    it("purges final messages past retention, keeps younger ones and what the API returns", async () => {
      const projectId = await insertProject(prisma);
      const old = await Promise.all(
        (["delivered", "undeliverable", "failed", "unknown"] as const).map((status) =>
          insertMessage(prisma, keyring, projectId, { ageMs: RETENTION_MS + 60_000, status }),
        ),
      );
      const young = await insertMessage(prisma, keyring, projectId, {
        ageMs: RETENTION_MS - 60_000,
        status: "delivered",
      });
      const before = await rawMessage(prisma, old[0]!);

      expect(
        await purgeMessageText(deps(), { now: NOW, retentionMs: RETENTION_MS, pendingHoldMs: HOLD_MS }),
      ).toEqual({
        purged: 4,
      });
      for (const id of old) {
        const row = await rawMessage(prisma, id);
        expect(row.recipient_ciphertext).toBeNull();
        expect(row.text_ciphertext).toBeNull();
        expect(row.text_purged_at).toEqual(NOW);
      }
      expect((await rawMessage(prisma, old[0]!)).updated_at).toEqual(before.updated_at);
      const kept = await prisma.message.findFirstOrThrow({ where: { id: old[0]! } });
      expect(kept).toMatchObject({ recipientMasked: "+9955••••••21", status: "delivered", segments: 1 });
      const youngRow = await rawMessage(prisma, young);
      expect(youngRow.text_ciphertext).not.toBeNull();
      expect(youngRow.text_purged_at).toBeNull();
      // A second round finds nothing left to do.
      expect(
        await purgeMessageText(deps(), { now: NOW, retentionMs: RETENTION_MS, pendingHoldMs: HOLD_MS }),
      ).toEqual({
        purged: 0,
      });
    });

    it("holds queued and submitted messages until final, but never past retention + hold", async () => {
      const projectId = await insertProject(prisma);
      const submitted = await insertMessage(prisma, keyring, projectId, {
        ageMs: RETENTION_MS + 60_000,
        status: "submitted",
      });
      const queued = await insertMessage(prisma, keyring, projectId, {
        ageMs: RETENTION_MS + 60_000,
        status: "queued",
      });
      const stuck = await insertMessage(prisma, keyring, projectId, {
        ageMs: RETENTION_MS + HOLD_MS + 60_000,
        status: "submitted",
      });
      const options = { now: NOW, retentionMs: RETENTION_MS, pendingHoldMs: HOLD_MS };
      expect(await purgeMessageText(deps(), options)).toEqual({ purged: 1 });
      expect((await rawMessage(prisma, stuck)).text_ciphertext).toBeNull();
      expect((await rawMessage(prisma, submitted)).recipient_ciphertext).not.toBeNull();
      expect((await rawMessage(prisma, queued)).recipient_ciphertext).not.toBeNull();

      await prisma.message.updateMany({ where: { id: submitted }, data: { status: "delivered" } });
      expect(await purgeMessageText(deps(), options)).toEqual({ purged: 1 });
      expect((await rawMessage(prisma, submitted)).recipient_ciphertext).toBeNull();
    });

    it("works through more rows than one batch", async () => {
      const projectId = await insertProject(prisma);
      for (let i = 0; i < 7; i++) {
        await insertMessage(prisma, keyring, projectId, {
          ageMs: RETENTION_MS + i * 1000 + 1000,
          status: "delivered",
        });
      }
      const options = { now: NOW, retentionMs: RETENTION_MS, pendingHoldMs: HOLD_MS, batchSize: 3 };
      expect(await purgeMessageText(deps(), options)).toEqual({ purged: 7 });
      const [left] = await prisma.$queryRaw<Array<{ n: number }>>`
        SELECT count(*)::int AS n FROM messages WHERE text_ciphertext IS NOT NULL OR recipient_ciphertext IS NOT NULL`;
      expect(left?.n).toBe(0);
    });

    it("two purges at once purge each row once", async () => {
      const projectId = await insertProject(prisma);
      for (let i = 0; i < 10; i++) {
        await insertMessage(prisma, keyring, projectId, { ageMs: RETENTION_MS + 1000, status: "delivered" });
      }
      const options = { now: NOW, retentionMs: RETENTION_MS, pendingHoldMs: HOLD_MS, batchSize: 2 };
      const [a, b] = await Promise.all([
        purgeMessageText(deps(), options),
        purgeMessageText(deps(), options),
      ]);
      expect(a.purged + b.purged).toBe(10);
    });

    it("refuses nonsense options", async () => {
      await expect(
        purgeMessageText(deps(), { now: NOW, retentionMs: -1, pendingHoldMs: 0 }),
      ).rejects.toBeInstanceOf(RangeError);
      await expect(
        purgeMessageText(deps(), { now: NOW, retentionMs: 1, pendingHoldMs: 0, batchSize: 0 }),
      ).rejects.toBeInstanceOf(RangeError);
    });
  });

  describe("purgeIdempotencyRecords and purgeRateLimitCounters", () => {
    it("delete exactly the expired rows, in batches", async () => {
      const projectId = await insertProject(prisma);
      for (let i = 0; i < 5; i++) {
        await prisma.idempotencyRecord.create({
          data: {
            id: newId("idem"),
            projectId,
            mode: "test",
            key: `key-${i}`,
            fingerprint: "k1:00",
            messageId: newId("msg"),
            // i = 0, 1, 2: expired (the boundary counts as expired); 3, 4: alive.
            expiresAt: new Date(NOW.getTime() + (i - 2) * HOUR_MS),
          },
        });
        await prisma.rateLimitCounter.create({
          data: {
            bucket: `test:${i}`,
            windowStart: new Date(NOW.getTime() - DAY_MS),
            count: 1,
            expiresAt: new Date(NOW.getTime() + (i - 2) * 60_000),
          },
        });
      }
      expect(await purgeIdempotencyRecords(deps(), { now: NOW, batchSize: 2 })).toEqual({ purged: 3 });
      expect(
        (await prisma.idempotencyRecord.findMany({ orderBy: { key: "asc" } })).map((r) => r.key),
      ).toEqual(["key-3", "key-4"]);
      expect(await purgeRateLimitCounters(deps(), { now: NOW, batchSize: 2 })).toEqual({ purged: 3 });
      expect(
        (await prisma.rateLimitCounter.findMany({ orderBy: { bucket: "asc" } })).map((r) => r.bucket),
      ).toEqual(["test:3", "test:4"]);
      expect(await purgeIdempotencyRecords(deps(), { now: NOW })).toEqual({ purged: 0 });
      expect(await purgeRateLimitCounters(deps(), { now: NOW })).toEqual({ purged: 0 });
    });
  });

  describe("rotateMessageKeys", () => {
    it("re-encrypts old-key rows under the current key; the old key can then go", async () => {
      const k1 = generateKeySpec("k1");
      const k2 = generateKeySpec("k2");
      const old = parseKeyring(k1);
      const projectId = await insertProject(prisma);
      const texts = new Map<string, string>();
      for (let i = 0; i < 5; i++) {
        const text = `Your sign-in code is 5550${i}123.`;
        const id = await insertMessage(prisma, old, projectId, {
          ageMs: 1000,
          status: "delivered",
          text,
          to: `+99557700112${i}`,
        });
        texts.set(id, text);
      }
      const purged = await insertMessage(prisma, old, projectId, { ageMs: 1000, status: "delivered" });
      await prisma.message.updateMany({
        where: { id: purged },
        data: { recipientCiphertext: null, textCiphertext: null, textPurgedAt: NOW },
      });
      await prisma.idempotencyRecord.create({
        data: {
          id: newId("idem"),
          projectId,
          mode: "test",
          key: "k",
          fingerprint: await old.fingerprint("request"),
          messageId: purged,
          expiresAt: new Date(NOW.getTime() + HOUR_MS),
        },
      });

      const rotating = parseKeyring(`${k2},${k1}`);
      const first = await rotate({ keyring: rotating, batchSize: 2, now: NOW });
      expect(first).toEqual({ rotated: 5, failed: 0, remaining: 0, fingerprints_on_old_keys: 1 });
      expect(await rotate({ keyring: rotating, batchSize: 2, now: NOW })).toEqual({
        rotated: 0,
        failed: 0,
        remaining: 0,
        fingerprints_on_old_keys: 1,
      });
      // After 24 hours the old fingerprints are gone too.
      expect(
        (await rotate({ keyring: rotating, now: new Date(NOW.getTime() + DAY_MS) })).fingerprints_on_old_keys,
      ).toBe(0);

      const onlyNew = parseKeyring(k2);
      for (const [id, text] of texts) {
        const row = await rawMessage(prisma, id);
        expect(onlyNew.keyIdOf(row.text_ciphertext!)).toBe("k2");
        expect(await onlyNew.decrypt(row.text_ciphertext!, id)).toBe(text);
        expect(await onlyNew.decrypt(row.recipient_ciphertext!, id)).toMatch(/^\+99557700112\d$/);
        await expect(old.decrypt(row.text_ciphertext!, id)).rejects.toBeInstanceOf(DecryptError);
      }
      expect((await rawMessage(prisma, purged)).text_ciphertext).toBeNull();
    });

    it("counts undecryptable rows as failed, leaves them, and still finishes", async () => {
      const k3 = generateKeySpec("k3");
      const k9 = generateKeySpec("k9");
      const old = parseKeyring(k9);
      const lost = parseKeyring(generateKeySpec("lost"));
      const projectId = await insertProject(prisma);
      // Under a key that is no longer in the ring.
      const unknownKey = await insertMessage(prisma, lost, projectId, { ageMs: 1000, status: "delivered" });
      // A blob bound to another row (as if copied over): authentication fails.
      const swapped = await insertMessage(prisma, old, projectId, { ageMs: 1000, status: "delivered" });
      await prisma.message.updateMany({
        where: { id: swapped },
        data: { textCiphertext: await old.encrypt("copied", newId("msg")) },
      });
      const fine = await insertMessage(prisma, old, projectId, {
        ageMs: 1000,
        status: "delivered",
        text: "fine text",
      });

      const counts = await rotate({ keyring: parseKeyring(`${k3},${k9}`), batchSize: 1, now: NOW });
      expect(counts).toEqual({ rotated: 1, failed: 2, remaining: 2, fingerprints_on_old_keys: 0 });
      const current = parseKeyring(k3);
      expect(await current.decrypt((await rawMessage(prisma, fine)).text_ciphertext!, fine)).toBe(
        "fine text",
      );
      expect(lost.keyIdOf((await rawMessage(prisma, unknownKey)).text_ciphertext!)).toBe("lost");
      expect(old.keyIdOf((await rawMessage(prisma, swapped)).recipient_ciphertext!)).toBe("k9");
    });
  });
});

describe.runIf(backends.includes("postgres"))("the verification codes' purge on PostgreSQL", () => {
  const now = new Date("2026-11-25T10:00:00Z");
  const suite = projectDatabase("postgres", new Date(now.getTime() - 30 * DAY_MS));

  it("reads the codes still held, not every verification ever made", async () => {
    const { t, projectId } = suite;
    const cutoff = new Date(now.getTime() - 7 * DAY_MS);
    // 5 000 verifications whose codes are long gone (kept, as a claimed project's are), 3 past retention with their
    // codes, 2 recent ones.
    await t.db.query(
      `INSERT INTO verifications (id, project_id, mode, message_id, recipient_masked, recipient_fingerprint,
                                  template, locale, code_hash, status, attempts_remaining, expires_at,
                                  created_at, updated_at)
       SELECT 'vrf_' || g, $3, 'live', 'msg_v' || g, '+9955••••••12', 'fp' || g, 'verification_code',
              'en', CASE WHEN g > 5000 THEN 'hash' || g END, 'approved', 3, t, t, t
       FROM (SELECT g, CASE WHEN g <= 5003 THEN CAST($1 AS timestamptz) - (5004 - g) * interval '1 minute'
                            ELSE CAST($2 AS timestamptz) END AS t
             FROM generate_series(1, 5005) AS g) s`,
      [cutoff, now, projectId],
    );
    await t.db.query("ANALYZE verifications");
    const read = await rowsRead(t.db, PURGE_CODES_SQL, [cutoff, 500]);
    expect(read.get("verifications")).toBeLessThanOrEqual(3 + 3);
    const [held] = await t.db.query<{ count: number }>(
      "SELECT count(*)::int AS count FROM verifications WHERE code_hash IS NOT NULL",
    );
    expect(held?.count).toBe(2);
  });
});
