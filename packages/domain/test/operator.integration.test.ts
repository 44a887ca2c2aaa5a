// The operator's domain functions against PGlite and PostgreSQL: input checks,
// refusals as values, idempotency, the ledger arithmetic and the audit lines.
import { newId, sha256Hex } from "@sms/crypto";
import { availableBackends, createTestDatabase, type TestDatabase } from "@sms/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listCreditLedger, projectBalance } from "../src/credits/project-balance.ts";
import { BUCKETS } from "../src/model/limits.ts";
import { createLiveKey } from "../src/operator/create-live-key.ts";
import { describeProject } from "../src/operator/describe-project.ts";
import { grantPaidCredits } from "../src/operator/grant-paid-credits.ts";
import { revokeApiKey } from "../src/operator/revoke-api-key.ts";
import {
  clearProjectSender,
  type SenderBrandDirectory,
  setProjectSender,
} from "../src/operator/set-project-sender.ts";
import { reinstateProject, suspendProject } from "../src/operator/suspend-project.ts";
import type { Clock } from "../src/ports.ts";
import { createStore } from "../src/store/index.ts";
import { createTestKey } from "../src/test-keys/create-test-key.ts";

const backends = await availableBackends();
const T0 = new Date("2026-11-22T10:00:00Z");
// Every reading is one millisecond later, so audit lines sort in the order written.
let tick = 0;
const clock: Clock = { now: () => new Date(T0.getTime() + tick++) };
const LIMITS = { perMinute: 1000, perDay: 1000, perDayTotal: 1000 };

const directory = (brands: Array<{ id: number; name: string; approved: boolean }>): SenderBrandDirectory => ({
  listBrands: async () => ({ ok: true, brands }),
});
const BRANDS = directory([
  { id: 1, name: "SMSGE", approved: true },
  { id: 7, name: "Acme", approved: true },
  { id: 8, name: "Pending", approved: false },
]);

describe.each(backends)("operator tools on %s", (kind) => {
  let t: TestDatabase;
  const ops = () => ({ store: createStore(t.db), clock });
  const ACTOR = "nino@ops";

  beforeAll(async () => {
    t = await createTestDatabase(kind, { poolSize: 10 });
  }, 120_000);
  afterAll(() => t?.drop());

  async function newProject(options: { claimed?: boolean } = {}) {
    const result = await createTestKey(
      { store: createStore(t.db), config: { publicBaseUrl: "http://api.test", limits: LIMITS } },
      { now: T0, callerSubject: `198.51.100.${Math.floor(Math.random() * 250)}` },
    );
    if (!result.ok) throw new Error("test key refused");
    if (options.claimed ?? true) {
      await t.db.prisma.project.update({ where: { id: result.projectId }, data: { claimedAt: T0 } });
    }
    return { projectId: result.projectId, testKey: result.apiKey };
  }

  const audit = (projectId: string) =>
    t.db.prisma.auditEntry.findMany({ where: { projectId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });

  describe("createLiveKey", () => {
    it("creates a live key for a claimed project, stores only its hash, and audits without key material", async () => {
      const { projectId } = await newProject();
      const result = await createLiveKey(ops(), { actor: ACTOR, projectId });
      if (!result.ok) throw new Error(JSON.stringify(result));
      expect(result.apiKey).toMatch(/^sk_live_[A-Za-z0-9_-]{43}$/);
      expect(result.prefix).toBe(result.apiKey.slice(0, 12));
      const stored = await t.db.prisma.apiKey.findUniqueOrThrow({ where: { id: result.keyId } });
      expect(stored).toMatchObject({ projectId, mode: "live", prefix: result.prefix, revokedAt: null });
      expect(stored.keyHash).toBe(await sha256Hex(result.apiKey));
      const [entry] = await audit(projectId);
      expect(entry).toMatchObject({
        actor: "nino@ops",
        action: "api_key.created",
        details: { key_id: result.keyId, mode: "live" },
      });
      expect(JSON.stringify(await t.db.prisma.auditEntry.findMany())).not.toContain(result.apiKey.slice(12));
    });

    it("refuses unclaimed, unknown and suspended projects, and bad input", async () => {
      const unclaimed = await newProject({ claimed: false });
      expect(await createLiveKey(ops(), { actor: ACTOR, projectId: unclaimed.projectId })).toMatchObject({
        ok: false,
        code: "project_not_claimed",
      });
      expect(await createLiveKey(ops(), { actor: ACTOR, projectId: newId("prj") })).toMatchObject({
        ok: false,
        code: "project_not_found",
      });
      expect(await createLiveKey(ops(), { actor: ACTOR, projectId: "prj_short" })).toMatchObject({
        ok: false,
        code: "invalid_input",
      });
      expect(await createLiveKey(ops(), { actor: "", projectId: unclaimed.projectId })).toMatchObject({
        ok: false,
        code: "invalid_input",
      });
      const suspended = await newProject();
      await suspendProject(ops(), { actor: ACTOR, projectId: suspended.projectId });
      expect(await createLiveKey(ops(), { actor: ACTOR, projectId: suspended.projectId })).toMatchObject({
        ok: false,
        code: "project_suspended",
      });
      expect(
        await t.db.prisma.apiKey.count({ where: { projectId: unclaimed.projectId, mode: "live" } }),
      ).toBe(0);
    });
  });

  describe("revokeApiKey", () => {
    it("revokes by id or prefix, idempotently", async () => {
      const { projectId } = await newProject();
      const created = await createLiveKey(ops(), { actor: ACTOR, projectId });
      if (!created.ok) throw new Error(JSON.stringify(created));
      const first = await revokeApiKey(ops(), { actor: ACTOR, prefix: created.prefix, projectId });
      expect(first).toMatchObject({ ok: true, keyId: created.keyId, alreadyRevoked: false, mode: "live" });
      const again = await revokeApiKey(ops(), { actor: ACTOR, keyId: created.keyId });
      expect(again).toMatchObject({ ok: true, alreadyRevoked: true });
      if (first.ok && again.ok) expect(again.revokedAt).toEqual(first.revokedAt);
      expect((await audit(projectId)).map((entry) => entry.action)).toEqual([
        "api_key.created",
        "api_key.revoked",
        "api_key.revoked",
      ]);
    });

    it("refuses a whole key, bad ids, unknown and ambiguous prefixes", async () => {
      const { projectId, testKey } = await newProject();
      // A whole key is refused with its own code, and never echoed.
      for (const named of [{ keyId: testKey }, { prefix: testKey }]) {
        const refused = await revokeApiKey(ops(), { actor: ACTOR, ...named });
        expect(refused).toEqual({ ok: false, code: "whole_key_given" });
      }
      expect(await revokeApiKey(ops(), { actor: ACTOR })).toMatchObject({ ok: false, code: "invalid_input" });
      expect(
        await revokeApiKey(ops(), { actor: ACTOR, keyId: "key_1", prefix: "sk_live_abcd" }),
      ).toMatchObject({
        ok: false,
        code: "invalid_input",
      });
      expect(await revokeApiKey(ops(), { actor: ACTOR, keyId: newId("key") })).toMatchObject({
        ok: false,
        code: "key_not_found",
      });
      // Two keys that share a prefix: only the id can name one.
      for (const id of [newId("key"), newId("key")]) {
        await t.db.prisma.apiKey.create({
          data: { id, projectId, mode: "live", keyHash: await sha256Hex(id), prefix: "sk_live_SAME" },
        });
      }
      expect(await revokeApiKey(ops(), { actor: ACTOR, prefix: "sk_live_SAME" })).toMatchObject({
        ok: false,
        code: "key_ambiguous",
      });
    });
  });

  describe("suspendProject / reinstateProject", () => {
    it("are idempotent and audited with the reason", async () => {
      const { projectId } = await newProject();
      expect(
        await suspendProject(ops(), { actor: ACTOR, projectId, reason: "abuse report #12" }),
      ).toMatchObject({
        ok: true,
        changed: true,
        suspendedAt: expect.any(Date),
      });
      expect(await suspendProject(ops(), { actor: ACTOR, projectId })).toMatchObject({
        ok: true,
        changed: false,
      });
      expect(await reinstateProject(ops(), { actor: ACTOR, projectId })).toMatchObject({
        ok: true,
        changed: true,
        suspendedAt: null,
      });
      expect(await reinstateProject(ops(), { actor: ACTOR, projectId })).toMatchObject({
        ok: true,
        changed: false,
      });
      expect(await suspendProject(ops(), { actor: ACTOR, projectId, reason: " " })).toMatchObject({
        ok: false,
        code: "invalid_input",
      });
      const entries = await audit(projectId);
      expect(entries.map((entry) => [entry.action, (entry.details as { changed: boolean }).changed])).toEqual(
        [
          ["project.suspended", true],
          ["project.suspended", false],
          ["project.reinstated", true],
          ["project.reinstated", false],
        ],
      );
      expect(entries[0]?.details).toMatchObject({ reason: "abuse report #12" });
    });
  });

  describe("grantPaidCredits", () => {
    it("writes the ledger, the balance and has_paid_credits in one go", async () => {
      const { projectId } = await newProject();
      const result = await grantPaidCredits(ops(), { actor: ACTOR, projectId, amount: 250 });
      expect(result).toMatchObject({
        ok: true,
        amount: 250,
        balance: 250,
        alreadyGranted: false,
        reference: null,
      });
      expect(await projectBalance({ store: createStore(t.db) }, { projectId })).toMatchObject({
        ok: true,
        balance: 250,
        ledgerSum: 250,
        consistent: true,
        hasPaidCredits: true,
      });
      const ledger = await listCreditLedger({ store: createStore(t.db) }, { projectId });
      expect(ledger).toEqual([expect.objectContaining({ kind: "grant_paid", amount: 250, messageId: null })]);
    });

    it("is idempotent per reference, even when two grants race", async () => {
      const { projectId } = await newProject();
      const racing = await Promise.all(
        Array.from({ length: 5 }, () =>
          grantPaidCredits(ops(), { actor: ACTOR, projectId, amount: 100, reference: "INV-2026-0042" }),
        ),
      );
      expect(racing.every((result) => result.ok)).toBe(true);
      expect(racing.filter((result) => result.ok && !result.alreadyGranted)).toHaveLength(1);
      expect(
        await grantPaidCredits(ops(), { actor: ACTOR, projectId, amount: 90, reference: "INV-2026-0042" }),
      ).toMatchObject({
        ok: false,
        code: "reference_conflict",
      });
      expect(
        await grantPaidCredits(ops(), { actor: ACTOR, projectId, amount: 5, reference: "INV-2026-0043" }),
      ).toMatchObject({
        ok: true,
        balance: 105,
      });
      const balance = await projectBalance({ store: createStore(t.db) }, { projectId });
      expect(balance).toMatchObject({ balance: 105, ledgerSum: 105, consistent: true });
      expect(await t.db.prisma.auditEntry.count({ where: { projectId, action: "credits.granted" } })).toBe(6);
    });

    it("refuses bad amounts and references, unknown and unclaimed projects", async () => {
      const { projectId } = await newProject();
      for (const amount of [0, -5, 1.5, Number.NaN, 1_000_001]) {
        expect(await grantPaidCredits(ops(), { actor: ACTOR, projectId, amount })).toMatchObject({
          ok: false,
          code: "invalid_input",
        });
      }
      for (const reference of ["", " INV", "x".repeat(201), "a\nb"]) {
        expect(
          await grantPaidCredits(ops(), { actor: ACTOR, projectId, amount: 1, reference }),
        ).toMatchObject({
          ok: false,
          code: "invalid_input",
        });
      }
      const unclaimed = await newProject({ claimed: false });
      expect(
        await grantPaidCredits(ops(), { actor: ACTOR, projectId: unclaimed.projectId, amount: 1 }),
      ).toMatchObject({
        ok: false,
        code: "project_not_claimed",
      });
      expect(
        await grantPaidCredits(ops(), { actor: ACTOR, projectId: newId("prj"), amount: 1 }),
      ).toMatchObject({
        ok: false,
        code: "project_not_found",
      });
      expect(await projectBalance({ store: createStore(t.db) }, { projectId })).toMatchObject({
        balance: 0,
        hasPaidCredits: false,
      });
    });
  });

  describe("setProjectSender / clearProjectSender", () => {
    it("checks the brand against the provider's list and stores its spelling and id", async () => {
      const { projectId } = await newProject();
      expect(
        await setProjectSender({ ...ops(), brands: BRANDS }, { actor: ACTOR, projectId, name: "ACME" }),
      ).toMatchObject({
        ok: true,
        sender: "Acme",
        brandId: 7,
        validated: true,
        changed: true,
      });
      expect(
        await setProjectSender(
          { ...ops(), brands: BRANDS },
          { actor: ACTOR, projectId, name: "Acme", brandId: 7 },
        ),
      ).toMatchObject({
        ok: true,
        changed: false,
      });
      expect(await t.db.prisma.project.findUniqueOrThrow({ where: { id: projectId } })).toMatchObject({
        sender: "Acme",
        senderBrandId: 7,
      });
      expect(
        await setProjectSender({ ...ops(), brands: BRANDS }, { actor: ACTOR, projectId, name: "Pending" }),
      ).toMatchObject({
        ok: false,
        code: "brand_not_approved",
      });
      expect(
        await setProjectSender({ ...ops(), brands: BRANDS }, { actor: ACTOR, projectId, name: "Nobody" }),
      ).toMatchObject({
        ok: false,
        code: "brand_not_found",
      });
      expect(
        await setProjectSender(
          { ...ops(), brands: BRANDS },
          { actor: ACTOR, projectId, name: "Acme", brandId: 1 },
        ),
      ).toMatchObject({
        ok: false,
        code: "brand_not_found",
      });
      const broken: SenderBrandDirectory = { listBrands: async () => ({ ok: false, reason: "timeout" }) };
      expect(
        await setProjectSender({ ...ops(), brands: broken }, { actor: ACTOR, projectId, name: "Acme" }),
      ).toMatchObject({
        ok: false,
        code: "brand_check_failed",
      });
      // Refusals changed nothing.
      expect(await t.db.prisma.project.findUniqueOrThrow({ where: { id: projectId } })).toMatchObject({
        senderBrandId: 7,
      });

      expect(await clearProjectSender(ops(), { actor: ACTOR, projectId })).toMatchObject({
        ok: true,
        changed: true,
      });
      expect(await clearProjectSender(ops(), { actor: ACTOR, projectId })).toMatchObject({
        ok: true,
        changed: false,
      });
      expect(await t.db.prisma.project.findUniqueOrThrow({ where: { id: projectId } })).toMatchObject({
        sender: null,
        senderBrandId: null,
      });
      expect((await audit(projectId)).map((entry) => entry.action)).toEqual([
        "sender.set",
        "sender.set",
        "sender.cleared",
        "sender.cleared",
      ]);
    });

    it("without provider credentials needs a brand id and says it was not checked", async () => {
      const { projectId } = await newProject();
      expect(
        await setProjectSender({ ...ops(), brands: null }, { actor: ACTOR, projectId, name: "Acme" }),
      ).toMatchObject({
        ok: false,
        code: "invalid_input",
      });
      expect(
        await setProjectSender(
          { ...ops(), brands: null },
          { actor: ACTOR, projectId, name: "Acme", brandId: 7 },
        ),
      ).toMatchObject({
        ok: true,
        validated: false,
        brandId: 7,
      });
      for (const name of ["", "123456", "TwelveChars1", "-dash", "bad!", "ends "]) {
        expect(
          await setProjectSender({ ...ops(), brands: null }, { actor: ACTOR, projectId, name, brandId: 7 }),
        ).toMatchObject({
          ok: false,
          code: "invalid_input",
        });
      }
      expect(
        await setProjectSender(
          { ...ops(), brands: null },
          { actor: ACTOR, projectId, name: "Acme", brandId: 0 },
        ),
      ).toMatchObject({
        ok: false,
        code: "invalid_input",
      });
    });
  });

  describe("describeProject", () => {
    it("reports state, credits, free tier, key prefixes and recent message counts, and writes no audit row (only actions do)", async () => {
      const { projectId, testKey } = await newProject();
      const live = await createLiveKey(ops(), { actor: ACTOR, projectId });
      if (!live.ok) throw new Error(JSON.stringify(live));
      await t.db.prisma.$executeRaw`
        INSERT INTO credit_ledger (id, project_id, kind, amount, note, created_at)
        VALUES (${newId("cre")}, ${projectId}, 'grant_free'::"CreditEntryKind", 50, 'claim', ${T0})`;
      await t.db.prisma.project.update({ where: { id: projectId }, data: { creditBalance: 50 } });
      await t.db.prisma.$executeRaw`
        INSERT INTO rate_limit_counters (bucket, window_start, count, expires_at)
        VALUES (${BUCKETS.freeTierSegments(projectId)}, ${new Date("2026-11-22T00:00:00Z")}, 3, ${new Date("2026-11-23T00:00:00Z")})`;
      const message = (status: "delivered" | "failed", mode: "test" | "live", createdAt: Date) =>
        t.db.prisma.message.create({
          data: {
            id: newId("msg"),
            projectId,
            mode,
            recipientMasked: "+9955••••••12",
            template: "verification_code",
            locale: "en",
            sender: "SMSGE",
            provider: mode === "test" ? "simulator" : "ubill",
            status,
            createdAt,
            updatedAt: createdAt,
          },
        });
      await message("delivered", "live", T0);
      await message("delivered", "live", new Date(T0.getTime() - 3 * 86_400_000));
      await message("failed", "test", T0);
      await message("failed", "test", new Date(T0.getTime() - 30 * 86_400_000));

      const auditedBefore = await audit(projectId);
      expect(auditedBefore.map((row) => row.action)).toEqual(["api_key.created"]);
      const description = await describeProject(
        { ...ops(), config: { freeTierDailySegments: 20 } },
        { actor: ACTOR, projectId },
      );
      if (!description.ok) throw new Error(JSON.stringify(description));
      expect(description.project).toMatchObject({
        id: projectId,
        claimedAt: T0,
        suspendedAt: null,
        sender: null,
      });
      expect(description.credits).toEqual({
        balance: 50,
        ledgerSum: 50,
        consistent: true,
        hasPaidCredits: false,
      });
      expect(description.freeTier).toEqual({
        applies: true,
        limit: 20,
        usedToday: 3,
        remainingToday: 17,
        resetAt: new Date("2026-11-23T00:00:00Z"),
      });
      expect(description.keys.map((key) => [key.mode, key.prefix])).toEqual([
        ["test", testKey.slice(0, 12)],
        ["live", live.prefix],
      ]);
      expect(JSON.stringify(description)).not.toContain(live.apiKey);
      expect(JSON.stringify(description)).not.toContain(testKey);
      expect(description.messages).toEqual([
        { mode: "live", status: "delivered", last24h: 1, last7d: 2 },
        { mode: "test", status: "failed", last24h: 1, last7d: 1 },
      ]);
      expect(await audit(projectId)).toEqual(auditedBefore);

      // A cached balance that disagrees with the ledger is reported, not hidden.
      await t.db.prisma.project.update({ where: { id: projectId }, data: { creditBalance: 49 } });
      expect(await projectBalance({ store: createStore(t.db) }, { projectId })).toMatchObject({
        balance: 49,
        ledgerSum: 50,
        consistent: false,
      });
      expect(
        await describeProject(
          { ...ops(), config: { freeTierDailySegments: 20 } },
          { actor: ACTOR, projectId: newId("prj") },
        ),
      ).toMatchObject({
        ok: false,
        code: "project_not_found",
      });
    });
  });
});
