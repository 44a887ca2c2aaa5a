// describeClaim, claimProject and purgeUnclaimedMessages against PGlite and
// PostgreSQL: outcomes, the single grant, concurrency and the 30-day purge.
import { newId, sha256Hex } from "@sms/crypto";
import { availableBackends, createTestDatabase, type TestDatabase } from "@sms/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLAIM_GRANT_NOTE, claimProject } from "../src/claims/claim-project.ts";
import { type ClaimIdentity, describeClaim } from "../src/claims/describe-claim.ts";
import { purgeUnclaimedMessages } from "../src/claims/purge-unclaimed-messages.ts";
import { DAY_MS } from "../src/model/time.ts";
import { DELETE_FOR_MESSAGES_SQL } from "../src/store/idempotency.ts";
import { createStore, type Store } from "../src/store/index.ts";
import { LOCK_UNCLAIMED_SQL } from "../src/store/message-sweeps.ts";
import { createTestKey } from "../src/test-keys/create-test-key.ts";
import { insertMessages } from "./support/bulk-messages.ts";
import { rowsRead } from "./support/plan-rows.ts";
import { projectDatabase } from "./support/project-database.ts";

const backends = await availableBackends();
const T0 = new Date("2026-11-22T10:00:00Z");
const LIMITS = { perMinute: 1000, perDay: 1000, perDayTotal: 1000 };

const alice: ClaimIdentity = {
  provider: "google",
  subject: "g-alice",
  email: "alice@example.com",
  name: "Alice",
};
const bob: ClaimIdentity = { provider: "github", subject: "4242", email: "bob@example.com", name: "Bob" };

describe.each(backends)("claims on %s", (kind) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(kind, { poolSize: 10 });
  }, 120_000);
  afterAll(() => t?.drop());

  async function newProject(now = T0) {
    const result = await createTestKey(
      { store: store(), config: { publicBaseUrl: "http://api.test", limits: LIMITS } },
      { now, callerSubject: `198.51.100.${Math.floor(Math.random() * 250)}` },
    );
    if (!result.ok) throw new Error("test key refused");
    const token = result.claimUrl.split("/claim/")[1]!;
    return { projectId: result.projectId, apiKey: result.apiKey, tokenHash: await sha256Hex(token) };
  }

  async function addMessage(projectId: string, createdAt: Date, idempotencyKey?: string) {
    const id = newId("msg", createdAt.getTime());
    await t.db.prisma.message.create({
      data: {
        id,
        projectId,
        mode: "test",
        recipientMasked: "+9955••••••12",
        template: "verification_code",
        locale: "en",
        sender: "SMSGE",
        provider: "simulator",
        status: "delivered",
        createdAt,
        updatedAt: createdAt,
      },
    });
    if (idempotencyKey) {
      await t.db.prisma.idempotencyRecord.create({
        data: {
          id: newId("idem"),
          projectId,
          mode: "test",
          key: idempotencyKey,
          fingerprint: "f",
          messageId: id,
          expiresAt: new Date(createdAt.getTime() + DAY_MS),
          createdAt,
        },
      });
    }
    return id;
  }

  const prisma = () => t.db.prisma;
  const store = (): Store => createStore(t.db);
  const claim = ({ freeCredits, ...input }: Parameters<typeof claimProject>[1] & { freeCredits: number }) =>
    claimProject({ store: store(), config: { freeCredits } }, input);
  const describe_ = (input: Parameters<typeof describeClaim>[1]) => describeClaim({ store: store() }, input);
  const purge = ({ clock, ...config }: { clock: { now(): Date }; batchSize: number; olderThanMs?: number }) =>
    purgeUnclaimedMessages({ store: store(), clock, config });

  it("describes a fresh link with the project summary, and unknown hashes as unknown", async () => {
    const { projectId, apiKey, tokenHash } = await newProject();
    await addMessage(projectId, T0);
    await addMessage(projectId, T0);
    const described = await describe_({ tokenHash, now: T0 });
    expect(described).toEqual({
      ok: true,
      summary: {
        projectId,
        projectCreatedAt: T0,
        messagesSent: 2,
        keyPrefix: apiKey.slice(0, 12),
        expiresAt: new Date(T0.getTime() + 30 * DAY_MS),
      },
    });
    expect(await describe_({ tokenHash: "0".repeat(64), now: T0 })).toEqual({
      ok: false,
      code: "unknown",
    });
    expect(await claim({ tokenHash: "0".repeat(64), identity: alice, freeCredits: 50, now: T0 })).toEqual({
      ok: false,
      code: "unknown",
    });
  });

  it("claims once: account, project, grant_free entry and balance in one go; has_paid_credits stays false", async () => {
    const { projectId, tokenHash } = await newProject();
    const now = new Date(T0.getTime() + DAY_MS);
    const result = await claim({ tokenHash, identity: alice, freeCredits: 50, now });
    expect(result).toMatchObject({ ok: true, projectId, creditsGranted: 50, accountCreated: true });
    if (result.ok !== true) throw new Error("unreachable");

    const project = await prisma().project.findUniqueOrThrow({ where: { id: projectId } });
    expect(project).toMatchObject({
      accountId: result.accountId,
      claimedAt: now,
      creditBalance: 50,
      hasPaidCredits: false,
    });
    const entries = await prisma().creditLedgerEntry.findMany({ where: { projectId } });
    expect(entries).toEqual([
      expect.objectContaining({
        kind: "grant_free",
        amount: 50,
        messageId: null,
        note: CLAIM_GRANT_NOTE,
        createdAt: now,
      }),
    ]);
    const token = await prisma().claimToken.findUniqueOrThrow({ where: { tokenHash } });
    expect(token).toMatchObject({ usedAt: now, usedByAccountId: result.accountId });
    const account = await prisma().account.findUniqueOrThrow({
      where: { id: result.accountId },
      include: { identities: true },
    });
    expect(account).toMatchObject({ email: "alice@example.com", name: "Alice" });
    expect(account.identities).toEqual([expect.objectContaining({ provider: "google", subject: "g-alice" })]);

    // The same identity again: success, nothing granted twice.
    const again = await claim({ tokenHash, identity: alice, freeCredits: 50, now });
    expect(again).toEqual({ ok: false, code: "claimed_by_you", projectId, accountId: result.accountId });
    // Another identity: the link is spent.
    expect(await claim({ tokenHash, identity: bob, freeCredits: 50, now })).toEqual({
      ok: false,
      code: "used",
    });
    expect((await prisma().project.findUniqueOrThrow({ where: { id: projectId } })).creditBalance).toBe(50);
    expect(await prisma().creditLedgerEntry.count({ where: { projectId } })).toBe(1);

    expect(await describe_({ tokenHash, now })).toEqual({ ok: false, code: "used" });
    expect(await describe_({ tokenHash, now, identity: alice })).toEqual({
      ok: false,
      code: "claimed_by_you",
      projectId,
      accountId: result.accountId,
    });
    expect(await describe_({ tokenHash, now, identity: bob })).toEqual({
      ok: false,
      code: "used",
    });
  });

  it("reuses the account of a known identity for a second project", async () => {
    const first = await newProject();
    const second = await newProject();
    const a = await claim({ tokenHash: first.tokenHash, identity: bob, freeCredits: 5, now: T0 });
    const b = await claim({ tokenHash: second.tokenHash, identity: bob, freeCredits: 5, now: T0 });
    expect(a.ok).toBe(true);
    expect(b).toMatchObject({ ok: true, accountCreated: false });
    if (a.ok !== true || b.ok !== true) throw new Error("unreachable");
    expect(b.accountId).toBe(a.accountId);
  });

  it("refuses an expired link, including at the exact expiry instant, and grants nothing", async () => {
    const { projectId, tokenHash } = await newProject();
    const expiry = new Date(T0.getTime() + 30 * DAY_MS);
    expect(await describe_({ tokenHash, now: new Date(expiry.getTime() - 1) })).toMatchObject({ ok: true });
    expect(await describe_({ tokenHash, now: expiry })).toEqual({ ok: false, code: "expired" });
    expect(await claim({ tokenHash, identity: alice, freeCredits: 50, now: expiry })).toEqual({
      ok: false,
      code: "expired",
    });
    const project = await prisma().project.findUniqueOrThrow({ where: { id: projectId } });
    expect(project).toMatchObject({ accountId: null, claimedAt: null, creditBalance: 0 });
    expect(await prisma().creditLedgerEntry.count({ where: { projectId } })).toBe(0);
  });

  it("grants no ledger entry when the free credits are 0", async () => {
    const { projectId, tokenHash } = await newProject();
    expect(await claim({ tokenHash, identity: alice, freeCredits: 0, now: T0 })).toMatchObject({
      ok: true,
      creditsGranted: 0,
    });
    expect(await prisma().creditLedgerEntry.count({ where: { projectId } })).toBe(0);
  });

  it("treats a project attached some other way as used", async () => {
    const { projectId, tokenHash } = await newProject();
    await prisma().project.update({ where: { id: projectId }, data: { claimedAt: T0 } });
    expect(await describe_({ tokenHash, now: T0 })).toEqual({ ok: false, code: "used" });
    expect(await claim({ tokenHash, identity: alice, freeCredits: 50, now: T0 })).toEqual({
      ok: false,
      code: "used",
    });
  });

  it("claims exactly once when many identities confirm at the same moment", async () => {
    const { projectId, tokenHash } = await newProject();
    const identities = Array.from({ length: 6 }, (_, i) => ({
      provider: i % 2 ? "github" : "google",
      subject: `racer-${kind}-${i}`,
      email: null,
      name: null,
    }));
    const results = await Promise.all(
      identities.map((identity) => claim({ tokenHash, identity, freeCredits: 50, now: T0 })),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok && r.code === "used")).toHaveLength(5);
    const project = await prisma().project.findUniqueOrThrow({ where: { id: projectId } });
    expect(project.creditBalance).toBe(50);
    expect(await prisma().creditLedgerEntry.count({ where: { projectId } })).toBe(1);
  });

  it("gives one account to a new identity claiming two projects at once", async () => {
    const first = await newProject();
    const second = await newProject();
    const carol = { provider: "google", subject: `carol-${kind}`, email: "carol@example.com", name: null };
    const [a, b] = await Promise.all([
      claim({ tokenHash: first.tokenHash, identity: carol, freeCredits: 1, now: T0 }),
      claim({ tokenHash: second.tokenHash, identity: carol, freeCredits: 1, now: T0 }),
    ]);
    expect(a?.ok).toBe(true);
    expect(b?.ok).toBe(true);
    expect(await prisma().accountIdentity.count({ where: { subject: carol.subject } })).toBe(1);
    const identity = await prisma().accountIdentity.findFirstOrThrow({ where: { subject: carol.subject } });
    const projects = await prisma().project.findMany({
      where: { id: { in: [first.projectId, second.projectId] } },
    });
    expect(projects.map((p) => p.accountId)).toEqual([identity.accountId, identity.accountId]);
    // No orphan account was left behind by the loser of the race.
    expect(await prisma().account.count({ where: { email: "carol@example.com" } })).toBe(1);
  });

  it("purges unclaimed projects' messages older than 30 days, with their idempotency records, in batches", async () => {
    const unclaimed = await newProject();
    const claimed = await newProject();
    const now = new Date(T0.getTime() + 40 * DAY_MS);
    const old = new Date(now.getTime() - 30 * DAY_MS - 1);
    const young = new Date(now.getTime() - 30 * DAY_MS + 60_000);
    const doomed = await Promise.all(
      [0, 1, 2, 3, 4].map((i) => addMessage(unclaimed.projectId, old, `k-${kind}-${i}`)),
    );
    const kept = await addMessage(unclaimed.projectId, young, `k-${kind}-young`);
    const claimedOld = await addMessage(claimed.projectId, old, `k-${kind}-claimed`);
    await claim({ tokenHash: claimed.tokenHash, identity: alice, freeCredits: 0, now: T0 });

    // Earlier tests' messages (sent at T0, unclaimed) are due as well.
    const due = { project: { claimedAt: null }, createdAt: { lt: new Date(now.getTime() - 30 * DAY_MS) } };
    const dueMessages = await prisma().message.count({ where: due });
    const dueRecords = await prisma().idempotencyRecord.count({
      where: {
        messageId: {
          in: (await prisma().message.findMany({ where: due, select: { id: true } })).map((m) => m.id),
        },
      },
    });
    expect(dueMessages).toBeGreaterThanOrEqual(5);
    const counts = await purge({ clock: { now: () => now }, batchSize: 2 });
    expect(counts).toEqual({ messages: dueMessages, idempotency_records: dueRecords });
    expect(await prisma().message.count({ where: { id: { in: doomed } } })).toBe(0);
    expect(await prisma().idempotencyRecord.count({ where: { messageId: { in: doomed } } })).toBe(0);
    expect(await prisma().message.count({ where: { id: { in: [kept, claimedOld] } } })).toBe(2);
    expect(await prisma().idempotencyRecord.count({ where: { messageId: { in: [kept, claimedOld] } } })).toBe(
      2,
    );

    expect(await purge({ clock: { now: () => now }, batchSize: 2 })).toEqual({
      messages: 0,
      idempotency_records: 0,
    });
  });

  it("purges project by project in batches that end inside a project; two purges at once delete each message once", async () => {
    const projects = [await newProject(), await newProject(), await newProject()];
    const claimed = await newProject();
    await claim({ tokenHash: claimed.tokenHash, identity: bob, freeCredits: 0, now: T0 });
    const now = new Date(T0.getTime() + 50 * DAY_MS);
    const cutoff = new Date(now.getTime() - 30 * DAY_MS);
    const doomed: string[] = [];
    const kept: string[] = [];
    for (const [p, project] of projects.entries()) {
      for (let i = 0; i < 5; i++) {
        const createdAt = new Date(cutoff.getTime() - (i + 1) * 60_000);
        doomed.push(await addMessage(project.projectId, createdAt, `order-${kind}-${p}-${i}`));
      }
      kept.push(
        await addMessage(project.projectId, new Date(cutoff.getTime() + 60_000), `order-${kind}-${p}-y`),
      );
    }
    for (let i = 0; i < 3; i++)
      kept.push(
        await addMessage(claimed.projectId, new Date(cutoff.getTime() - DAY_MS), `order-${kind}-c-${i}`),
      );

    const due = { project: { claimedAt: null }, createdAt: { lt: cutoff } };
    const dueIds = (await prisma().message.findMany({ where: due, select: { id: true } })).map((m) => m.id);
    const dueRecords = await prisma().idempotencyRecord.count({ where: { messageId: { in: dueIds } } });
    expect(dueIds).toEqual(expect.arrayContaining(doomed));
    const runs = await Promise.all([0, 1].map(() => purge({ clock: { now: () => now }, batchSize: 3 })));
    expect(runs.reduce((sum, run) => sum + run.messages, 0)).toBe(dueIds.length);
    expect(runs.reduce((sum, run) => sum + run.idempotency_records, 0)).toBe(dueRecords);
    expect(await prisma().message.count({ where: { id: { in: dueIds } } })).toBe(0);
    expect(await prisma().idempotencyRecord.count({ where: { messageId: { in: doomed } } })).toBe(0);
    expect(await prisma().message.count({ where: { id: { in: kept } } })).toBe(kept.length);
    expect(await prisma().idempotencyRecord.count({ where: { messageId: { in: kept } } })).toBe(kept.length);
  });
});

describe.runIf(backends.includes("postgres"))("the unclaimed purge's statements on PostgreSQL", () => {
  const NOW = new Date("2026-11-25T10:00:00Z");
  const CUTOFF = new Date(NOW.getTime() - 30 * DAY_MS);
  const CLAIMED_OLD = 5_000;
  // Its project is the unclaimed one.
  const suite = projectDatabase("postgres", new Date(CUTOFF.getTime() - 20 * DAY_MS), { timeoutMs: 120_000 });

  it("a batch reads the unclaimed project's rows it takes, not a claimed project's history; the records are found by their expiry", async () => {
    const { t, projectId } = suite;
    // A claimed project with a long history (kept forever) and a day of idempotency records, an unclaimed
    // one with a few expired messages: the batch must not read the claimed rows.
    await t.db.query(
      "INSERT INTO projects (id, claimed_at, created_at, updated_at) VALUES ('prj_history', $1, $1, $1)",
      [new Date(CUTOFF.getTime() - 20 * DAY_MS)],
    );
    const beforeCutoff = { at: CUTOFF, stepMs: -60_000 };
    await insertMessages(t.db, {
      idPrefix: "msg_history_",
      projectId: "prj_history",
      count: CLAIMED_OLD,
      ...beforeCutoff,
    });
    await insertMessages(t.db, { idPrefix: "msg_unclaimed_", projectId, count: 10, ...beforeCutoff });
    await t.db.query(
      `INSERT INTO idempotency_records (id, project_id, mode, key, fingerprint, message_id, expires_at, created_at)
       SELECT 'idem_' || g, 'prj_history', 'test', 'k' || g, 'f', 'msg_day_' || g,
              CAST($1 AS timestamptz) + g * interval '1 second', CAST($1 AS timestamptz)
       FROM generate_series(1, 5000) AS g`,
      [NOW],
    );
    await t.db.query("ANALYZE messages");
    await t.db.query("ANALYZE idempotency_records");
    await t.db.query("ANALYZE projects");

    const lock = await rowsRead(t.db, LOCK_UNCLAIMED_SQL, [CUTOFF, 4, ""]);
    // Four rows taken, the unclaimed project's index read up to them: never the 5 000 claimed ones.
    expect(lock.get("messages")).toBeLessThanOrEqual(10);
    expect(lock.get("projects")).toBeLessThanOrEqual(2);
    // Two of the day's records, found by their expiry: deleted, and no other read.
    const expiring = (seconds: number) => new Date(NOW.getTime() + seconds * 1_000).toISOString();
    const records = await rowsRead(t.db, DELETE_FOR_MESSAGES_SQL, [
      ["msg_day_1", "msg_day_2"],
      [expiring(1), expiring(2)],
    ]);
    expect(records.get("idempotency_records")).toBeLessThanOrEqual(2);
    const [left] = await t.db.query<{ count: number }>(
      "SELECT count(*)::int AS count FROM idempotency_records WHERE message_id IN ('msg_day_1', 'msg_day_2')",
    );
    expect(left?.count).toBe(0);
  });
});
