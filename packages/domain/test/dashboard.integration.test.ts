// The dashboard's domain functions against PGlite and PostgreSQL: sessions
// (sliding and absolute expiry, sign-out, purge), ownership (another
// account's project is "not found" to every function), the message log's
// keyset pages and filters, the timeline written by every status change (the
// send path, the status check, the recovery sweep), usage per day, keys
// (list with last use, live key, revoke, roll), credits, sender requests and
// the operator's decisions, the operator's search and the audit log.
import { generateKeySpec, newId, parseKeyring, sha256Hex } from "@sms/crypto";
import { availableBackends, createTestDatabase, type TestDatabase } from "@sms/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKeyAuthenticator } from "../src/auth/authenticate-api-key.ts";
import { claimProject } from "../src/claims/claim-project.ts";
import type { AccountViewer } from "../src/dashboard/access.ts";
import { projectCredits } from "../src/dashboard/credits.ts";
import { actorOf, developmentIdentity } from "../src/dashboard/identity.ts";
import {
  createProjectLiveKey,
  listProjectKeys,
  revokeProjectKey,
  rollTestKey,
} from "../src/dashboard/keys.ts";
import { listProjectMessages, projectMessage } from "../src/dashboard/messages.ts";
import { PROJECT_NAME_MAX_LENGTH, projectNameOf, setProjectName } from "../src/dashboard/project-name.ts";
import { listAccountProjects, projectOverview } from "../src/dashboard/projects.ts";
import { projectSender, requestSender } from "../src/dashboard/sender.ts";
import {
  endSession,
  purgeDashboardSessions,
  resumeSession,
  startSession,
} from "../src/dashboard/sessions.ts";
import { projectUsage } from "../src/dashboard/usage.ts";
import { checkMessageStatuses } from "../src/messages/check-statuses.ts";
import { recoverQueuedMessages } from "../src/messages/recover-queued.ts";
import { sendMessage } from "../src/messages/send/send-message.ts";
import { listAuditLog } from "../src/operator/audit-log.ts";
import { findProjects } from "../src/operator/find-projects.ts";
import { grantPaidCredits } from "../src/operator/grant-paid-credits.ts";
import {
  approveSenderRequest,
  listSenderRequests,
  refuseSenderRequest,
} from "../src/operator/sender-requests.ts";
import type { SenderBrandDirectory } from "../src/operator/set-project-sender.ts";
import { suspendProject } from "../src/operator/suspend-project.ts";
import { type Clock, silentLogger } from "../src/ports.ts";
import type { SmsProvider, StatusReport, SubmitOutcome } from "../src/provider.ts";
import { createStore } from "../src/store/index.ts";
import { createTestKey } from "../src/test-keys/create-test-key.ts";

const backends = await availableBackends();
const T0 = new Date("2026-11-22T10:00:00Z");
const HOUR = 3_600_000;
const DAY = 86_400_000;
const LIMITS = { perMinute: 1000, perDay: 1000, perDayTotal: 1000 };
const BRANDS: SenderBrandDirectory = {
  listBrands: async () => ({
    ok: true,
    brands: [
      { id: 7, name: "Acme", approved: true },
      { id: 8, name: "Pending", approved: false },
    ],
  }),
};

/** A clock the test sets; every reading is a millisecond after the previous one, so rows sort as written. */
class TestClock implements Clock {
  private current = T0.getTime();
  private tick = 0;
  now(): Date {
    return new Date(this.current + this.tick++);
  }
  set(date: Date): void {
    this.current = date.getTime();
    this.tick = 0;
  }
}

/** A provider whose answers the test scripts per recipient. */
function scriptedProvider(name: "simulator" | "ubill"): SmsProvider & {
  answers: Map<string, SubmitOutcome>;
  reports: Map<string, StatusReport>;
} {
  const answers = new Map<string, SubmitOutcome>();
  const reports = new Map<string, StatusReport>();
  return {
    name,
    answers,
    reports,
    async submit(request) {
      return answers.get(request.to) ?? { kind: "accepted", providerRef: `ref-${request.messageId}` };
    },
    async checkStatus(query) {
      return reports.get(query.to) ?? { kind: "delivered" };
    },
  };
}

describe.each(backends)("the dashboard's domain on %s", (kind) => {
  let t: TestDatabase;
  const clock = new TestClock();
  const keyring = parseKeyring(generateKeySpec("k1"));
  const provider = scriptedProvider("simulator");
  const live = scriptedProvider("ubill");
  const store = () => createStore(t.db);
  const deps = () => ({ store: store(), clock });
  const sessionConfig = { idleMs: 12 * HOUR, maxMs: 7 * DAY, operatorIdentities: ["github:1", "dev:olga"] };

  beforeAll(async () => {
    t = await createTestDatabase(kind, { poolSize: 6 });
  }, 120_000);
  afterAll(() => t?.drop());

  /** A claimed project of a new account; its viewer, test key and free credits. */
  async function claimedProject(options: { subject?: string; email?: string; credits?: number } = {}) {
    const subject = options.subject ?? `user-${Math.random().toString(36).slice(2, 10)}`;
    const created = await createTestKey(
      { store: store(), config: { publicBaseUrl: "http://api.test", limits: LIMITS } },
      { now: clock.now(), callerSubject: `198.51.100.${Math.floor(Math.random() * 250)}` },
    );
    if (!created.ok) throw new Error("test key refused");
    const token = created.claimUrl.slice(created.claimUrl.lastIndexOf("/") + 1);
    const claimed = await claimProject(
      { store: store(), config: { freeCredits: options.credits ?? 10 } },
      {
        tokenHash: await sha256Hex(token),
        identity: { provider: "dev", subject, email: options.email ?? null, name: subject },
        now: clock.now(),
      },
    );
    if (!claimed.ok) throw new Error(`claim refused: ${claimed.code}`);
    const viewer: AccountViewer = {
      accountId: claimed.accountId,
      actor: actorOf({ provider: "dev", subject }),
    };
    return { projectId: created.projectId, testKey: created.apiKey, viewer };
  }

  const send = (projectId: string, mode: "test" | "live", keyId: string, to = "+995555123456") =>
    sendMessage(
      {
        store: store(),
        keyring,
        clock,
        providers: { test: provider, live },
        config: {
          messagesPerMinute: 1000,
          recipientLimits: { perMinute: 1000, perDay: 1000 },
          freeTierDailySegments: 100,
          defaultSender: "SMSGE",
          simulatorDelayMs: 0,
          inFlightWaitMs: 15_000,
          recordRetryMs: 30_000,
          unresolvedRetryAfterMs: 60_000,
        },
      },
      {
        project: { id: projectId, sender: null, senderBrandId: null, claimed: true },
        mode,
        keyId,
        idempotencyKey: crypto.randomUUID(),
        request: { to, template: "verification_code", variables: { code: "4821" }, locale: "en" },
        logger: silentLogger,
      },
    );

  const keyIdOf = async (projectId: string, mode: "test" | "live") =>
    (await t.db.prisma.apiKey.findFirstOrThrow({ where: { projectId, mode, revokedAt: null } })).id;

  describe("sessions", () => {
    it("start, resume (sliding idle expiry, never past the absolute one), sign out", async () => {
      clock.set(T0);
      const identity = developmentIdentity("  Olga   Ops ")!;
      expect(identity).toEqual({ provider: "dev", subject: "olga-ops", name: "Olga Ops" });
      const started = await startSession({ ...deps(), config: sessionConfig }, { identity });
      expect(started.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const rows = await t.db.prisma.dashboardSession.findMany({ where: { id: started.sessionId } });
      expect(rows).toHaveLength(1);
      // Only the hash is stored.
      expect(rows[0]?.tokenHash).toBe(await sha256Hex(started.token));
      expect(JSON.stringify(rows)).not.toContain(started.token);

      const resume = () => resumeSession({ ...deps(), config: sessionConfig }, { token: started.token });
      // Used every 11 hours for a week: the idle expiry keeps sliding.
      for (let hours = 11; hours < 7 * 24; hours += 11) {
        clock.set(new Date(T0.getTime() + hours * HOUR));
        const resumed = await resume();
        expect(resumed.ok, `after ${hours} h`).toBe(true);
      }
      // …but never past the absolute expiry.
      clock.set(new Date(T0.getTime() + 7 * DAY));
      expect(await resume()).toEqual({ ok: false, code: "no_session" });

      // Idle for longer than the idle limit: gone.
      clock.set(T0);
      const idle = await startSession({ ...deps(), config: sessionConfig }, { identity });
      clock.set(new Date(T0.getTime() + 12 * HOUR - 1000));
      expect((await resumeSession({ ...deps(), config: sessionConfig }, { token: idle.token })).ok).toBe(
        true,
      );
      clock.set(new Date(T0.getTime() + 24 * HOUR));
      expect((await resumeSession({ ...deps(), config: sessionConfig }, { token: idle.token })).ok).toBe(
        false,
      );

      // Sign-out ends it at once; malformed tokens are simply unknown.
      clock.set(T0);
      const other = await startSession({ ...deps(), config: sessionConfig }, { identity });
      expect(await endSession(deps(), { token: other.token })).toEqual({ ok: true, ended: true });
      expect((await resumeSession({ ...deps(), config: sessionConfig }, { token: other.token })).ok).toBe(
        false,
      );
      expect(await endSession(deps(), { token: "not a token" })).toEqual({ ok: true, ended: false });
      expect((await resumeSession({ ...deps(), config: sessionConfig }, { token: "x" })).ok).toBe(false);

      // The purge deletes the expired ones only.
      clock.set(new Date(T0.getTime() + 30 * DAY));
      const fresh = await startSession({ ...deps(), config: sessionConfig }, { identity });
      const purged = await purgeDashboardSessions(deps(), { now: clock.now(), batchSize: 1 });
      expect(purged.purged).toBeGreaterThanOrEqual(2);
      expect(await t.db.prisma.dashboardSession.count({ where: { id: fresh.sessionId } })).toBe(1);
      expect(
        await t.db.prisma.dashboardSession.count({ where: { idleExpiresAt: { lte: clock.now() } } }),
      ).toBe(0);
    });

    it("finds the identity's account once it has claimed, and names operators from configuration", async () => {
      clock.set(T0);
      const identity = developmentIdentity("Olga")!;
      const started = await startSession({ ...deps(), config: sessionConfig }, { identity });
      const before = await resumeSession({ ...deps(), config: sessionConfig }, { token: started.token });
      expect(before).toMatchObject({
        ok: true,
        viewer: { accountId: null, operator: true, actor: "dev:olga" },
      });
      const { viewer } = await claimedProject({ subject: "olga" });
      const after = await resumeSession({ ...deps(), config: sessionConfig }, { token: started.token });
      expect(after).toMatchObject({ ok: true, viewer: { accountId: viewer.accountId, operator: true } });
      const nobody = await startSession(
        { ...deps(), config: sessionConfig },
        { identity: developmentIdentity("Nobody")! },
      );
      expect(
        await resumeSession({ ...deps(), config: sessionConfig }, { token: nobody.token }),
      ).toMatchObject({
        ok: true,
        viewer: { operator: false, accountId: null },
      });
      expect(developmentIdentity("")).toBeNull();
      expect(developmentIdentity("<script>")).toBeNull();
      expect(developmentIdentity("Ნინო")).toBeNull(); // no Latin slug
      expect(developmentIdentity("Zoë Ünal")).toMatchObject({ subject: "zoe-unal" });
    });
  });

  it("another account's project is not found to every account holder's function", async () => {
    clock.set(T0);
    const mine = await claimedProject();
    const theirs = await claimedProject();
    const key = await keyIdOf(theirs.projectId, "test");
    const ops = deps();
    const cfg = { config: { freeTierDailySegments: 20 } };
    const notFound = { ok: false, code: "project_not_found" };
    const asMe = { viewer: mine.viewer, projectId: theirs.projectId };
    expect(await projectOverview({ ...ops, ...cfg }, asMe)).toEqual(notFound);
    expect(await listProjectKeys(ops, { ...asMe, after: null, limit: 10 })).toEqual(notFound);
    expect(await createProjectLiveKey(ops, asMe)).toEqual(notFound);
    expect(await revokeProjectKey(ops, { ...asMe, keyId: key })).toEqual(notFound);
    expect(await rollTestKey(ops, asMe)).toEqual(notFound);
    expect(await projectCredits({ ...ops, ...cfg }, { ...asMe, after: null, limit: 10 })).toEqual(notFound);
    expect(await listProjectMessages(ops, { ...asMe, filter: {}, after: null, limit: 10 })).toEqual(notFound);
    expect(await projectMessage(ops, { ...asMe, messageId: newId("msg") })).toEqual(notFound);
    expect(await projectUsage(ops, asMe)).toEqual(notFound);
    expect(await setProjectName(ops, { ...asMe, name: "Mine now" })).toEqual(notFound);
    expect(await projectSender(ops, { ...asMe, limit: 5 })).toEqual(notFound);
    expect(await requestSender(ops, { ...asMe, name: "Acme", purpose: "sign-in codes" })).toEqual(notFound);
    // A viewer without an account sees nothing, and a key of another project cannot be revoked through mine.
    const noAccount = { accountId: null, actor: "dev:nobody" };
    expect(
      await projectOverview({ ...ops, ...cfg }, { viewer: noAccount, projectId: mine.projectId }),
    ).toEqual(notFound);
    expect(await listAccountProjects(ops, { viewer: noAccount, after: null, limit: 10 })).toMatchObject({
      items: [],
    });
    expect(
      await revokeProjectKey(ops, { viewer: mine.viewer, projectId: mine.projectId, keyId: key }),
    ).toEqual({
      ok: false,
      code: "key_not_found",
    });
    expect(await t.db.prisma.apiKey.findUniqueOrThrow({ where: { id: key } })).toMatchObject({
      revokedAt: null,
    });
    expect(await t.db.prisma.auditEntry.count({ where: { projectId: theirs.projectId } })).toBe(0);
  });

  it("lists an account's projects, newest claim first, paged, with today's messages and a pending sender", async () => {
    clock.set(T0);
    const first = await claimedProject({ subject: "lister" });
    const second = await claimedProject({ subject: "lister" });
    const third = await claimedProject({ subject: "lister" });
    await send(second.projectId, "test", await keyIdOf(second.projectId, "test"));
    await send(second.projectId, "test", await keyIdOf(second.projectId, "test"));
    await requestSender(deps(), {
      viewer: third.viewer,
      projectId: third.projectId,
      name: "Acme",
      purpose: "codes",
    });
    const page1 = await listAccountProjects(deps(), { viewer: first.viewer, after: null, limit: 2 });
    expect(page1.items.map((p) => p.id)).toEqual([third.projectId, second.projectId]);
    expect(page1.items.map((p) => [p.messagesToday, p.pendingSender])).toEqual([
      [0, "Acme"],
      [2, null],
    ]);
    expect(page1.next).not.toBeNull();
    const page2 = await listAccountProjects(deps(), { viewer: first.viewer, after: page1.next, limit: 2 });
    expect(page2.items.map((p) => p.id)).toEqual([first.projectId]);
    expect(page2.next).toBeNull();
    // Tomorrow, "today" starts again.
    clock.set(new Date(T0.getTime() + DAY));
    const tomorrow = await listAccountProjects(deps(), { viewer: first.viewer, after: null, limit: 10 });
    expect(tomorrow.items.find((p) => p.id === second.projectId)?.messagesToday).toBe(0);
  });

  it("writes the timeline with every status change: send, status check, rejection, recovery", async () => {
    clock.set(T0);
    const { projectId, viewer } = await claimedProject();
    const keyId = await keyIdOf(projectId, "test");
    const delivered = await send(projectId, "test", keyId, "+995555000001");
    provider.answers.set("+995555000002", { kind: "rejected", code: "provider_rejected", reason: "no" });
    const rejected = await send(projectId, "test", keyId, "+995555000002");
    provider.answers.set("+995555000003", { kind: "indeterminate", reason: "timeout" });
    const unknown = await send(projectId, "test", keyId, "+995555000003");
    provider.answers.set("+995555000004", { kind: "unreachable", reason: "down" });
    const unreachable = await send(projectId, "test", keyId, "+995555000004");
    expect(unreachable).toMatchObject({ ok: false, code: "provider_unavailable" });
    clock.set(new Date(T0.getTime() + 10_000));
    await checkMessageStatuses({
      store: store(),
      keyring,
      clock,
      logger: silentLogger,
      providers: { test: provider, live },
      config: {
        intervalMs: 20_000,
        batchSize: 100,
        concurrency: 8,
        deadlineMs: 72 * HOUR,
        callTimeoutMs: 1_000,
      },
    });
    // A message left queued by a crash becomes unknown in the sweep, with its event.
    const stranded = newId("msg", T0.getTime());
    await t.db.prisma.message.create({
      data: {
        id: stranded,
        projectId,
        apiKeyId: keyId,
        mode: "test",
        recipientMasked: "+9955••••••99",
        template: "verification_code",
        locale: "en",
        sender: "SMSGE",
        segments: 1,
        status: "queued",
        provider: "simulator",
        createdAt: T0,
        updatedAt: T0,
      },
    });
    await t.db.prisma.messageEvent.create({
      data: { messageId: stranded, status: "queued", createdAt: T0, messageCreatedAt: T0 },
    });
    clock.set(new Date(T0.getTime() + 5 * 60_000));
    expect(
      await recoverQueuedMessages({ store: store(), clock, config: { olderThanMs: 60_000, batchSize: 10 } }),
    ).toEqual({ recovered: 1 });

    const timeline = async (id: string) => {
      const detail = await projectMessage(deps(), { viewer, projectId, messageId: id });
      if (!detail.ok) throw new Error(detail.code);
      return detail.timeline.map((event) => [event.status, event.errorCode]);
    };
    if (!delivered.ok || !rejected.ok || !unknown.ok) throw new Error("send failed");
    expect(await timeline(delivered.message.id)).toEqual([
      ["queued", null],
      ["submitted", null],
      ["delivered", null],
    ]);
    expect(await timeline(rejected.message.id)).toEqual([
      ["queued", null],
      ["failed", "provider_rejected"],
    ]);
    expect(await timeline(unknown.message.id)).toEqual([
      ["queued", null],
      ["unknown", "provider_unavailable"],
    ]);
    expect(await timeline(stranded)).toEqual([
      ["queued", null],
      ["unknown", "provider_unavailable"],
    ]);
    // The released send left nothing behind, events included.
    expect(await t.db.prisma.message.count({ where: { projectId } })).toBe(4);
    const ids = (await t.db.prisma.message.findMany({ where: { projectId }, select: { id: true } })).map(
      (message) => message.id,
    );
    expect(await t.db.prisma.messageEvent.count({ where: { messageId: { in: ids } } })).toBe(9);
    // The detail carries no ciphertext and no provider reference.
    const detail = await projectMessage(deps(), { viewer, projectId, messageId: delivered.message.id });
    expect(JSON.stringify(detail)).not.toMatch(/ref-|Ciphertext|555000001"/);
    expect(detail).toMatchObject({
      ok: true,
      message: { recipientMasked: "+9955••••••01", template: "verification_code" },
    });
    expect(await projectMessage(deps(), { viewer, projectId, messageId: "msg_nope" })).toEqual({
      ok: false,
      code: "message_not_found",
    });
  });

  it("pages the log newest first without repeats or gaps, and filters by status, mode, template and date", async () => {
    clock.set(T0);
    const { projectId, viewer } = await claimedProject();
    const keyId = await keyIdOf(projectId, "test");
    provider.answers.set("+995555000002", { kind: "rejected", code: "provider_rejected", reason: "no" });
    const sent: string[] = [];
    for (let i = 0; i < 23; i++) {
      // Several messages share a created_at: the id breaks the tie.
      clock.set(new Date(T0.getTime() + Math.floor(i / 3) * HOUR));
      const result = await send(projectId, "test", keyId, i % 5 === 0 ? "+995555000002" : "+995555123456");
      if (!result.ok) throw new Error("send failed");
      sent.push(result.message.id);
    }
    const all: string[] = [];
    let after = null;
    for (let pages = 0; pages < 10; pages++) {
      const page = await listProjectMessages(deps(), { viewer, projectId, filter: {}, after, limit: 5 });
      if (!page.ok) throw new Error(page.code);
      all.push(...page.items.map((item) => item.id));
      if (!page.next) break;
      after = page.next;
    }
    expect(all).toHaveLength(23);
    expect(new Set(all).size).toBe(23);
    const rows = await t.db.prisma.message.findMany({
      where: { projectId },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    });
    expect(all).toEqual(rows.map((row) => row.id));

    const filtered = async (filter: Parameters<typeof listProjectMessages>[1]["filter"]) => {
      const page = await listProjectMessages(deps(), { viewer, projectId, filter, after: null, limit: 100 });
      if (!page.ok) throw new Error(page.code);
      return page.items;
    };
    expect((await filtered({ status: "failed" })).map((m) => m.errorCode)).toEqual(
      Array(5).fill("provider_rejected"),
    );
    expect(await filtered({ mode: "live" })).toEqual([]);
    expect(await filtered({ template: "login_code" })).toEqual([]);
    expect(await filtered({ template: "verification_code" })).toHaveLength(23);
    const window = await filtered({
      from: new Date(T0.getTime() + HOUR),
      to: new Date(T0.getTime() + 3 * HOUR),
    });
    expect(window).toHaveLength(6);
    expect(
      await listProjectMessages(deps(), {
        viewer,
        projectId,
        filter: { template: "DROP TABLE" },
        after: null,
        limit: 5,
      }),
    ).toEqual({
      ok: false,
      code: "invalid_input",
      field: "filter",
    });
    // What a row holds: the masked number, never the full one.
    expect(JSON.stringify(all.length ? await filtered({}) : [])).not.toContain("995555123456");
  });

  it("counts usage per day by status and segments, with every day present, and the delivery rate", async () => {
    clock.set(new Date(T0.getTime() - 3 * DAY));
    const { projectId, viewer } = await claimedProject();
    const keyId = await keyIdOf(projectId, "test");
    await send(projectId, "test", keyId);
    provider.answers.set("+995555000002", { kind: "rejected", code: "provider_rejected", reason: "no" });
    await send(projectId, "test", keyId, "+995555000002");
    clock.set(T0);
    await send(projectId, "test", keyId);
    await checkMessageStatuses({
      store: store(),
      keyring,
      clock,
      logger: silentLogger,
      providers: { test: provider, live },
      config: {
        intervalMs: 20_000,
        batchSize: 100,
        concurrency: 8,
        deadlineMs: 72 * HOUR,
        callTimeoutMs: 1_000,
      },
    });
    const usage = await projectUsage(deps(), { viewer, projectId });
    if (!usage.ok) throw new Error(usage.code);
    expect(usage.days).toHaveLength(30);
    expect(usage.days[29]?.day.toISOString()).toBe("2026-11-22T00:00:00.000Z");
    expect(usage.days[26]).toMatchObject({ messages: 2, segments: 2, byStatus: { delivered: 1, failed: 1 } });
    expect(usage.days[29]).toMatchObject({ messages: 1, byStatus: { delivered: 1 } });
    expect(usage.totals).toMatchObject({ messages: 3, segments: 3 });
    expect(usage.deliveryRate).toBeCloseTo(2 / 3);
    expect(await projectUsage(deps(), { viewer, projectId, mode: "live" })).toMatchObject({
      totals: { messages: 0 },
      deliveryRate: null,
    });
  });

  it("the delivery rate per mode: the simulator's failures lower only the test rate, whatever the mode filter", async () => {
    clock.set(T0);
    const { projectId, viewer } = await claimedProject({ credits: 50 });
    const testKeyId = await keyIdOf(projectId, "test");
    expect((await createProjectLiveKey(deps(), { viewer, projectId })).ok).toBe(true);
    const liveKeyId = await keyIdOf(projectId, "live");
    provider.answers.set("+995555000009", { kind: "rejected", code: "provider_rejected", reason: "no" });
    for (const to of ["+995555123456", "+995555000009"])
      expect((await send(projectId, "test", testKeyId, to)).ok).toBe(true);
    // Live: two delivered, one the provider rejected.
    live.answers.set("+995555123458", { kind: "rejected", code: "provider_rejected", reason: "no" });
    for (const to of ["+995555123456", "+995555123457", "+995555123458"])
      expect((await send(projectId, "live", liveKeyId, to)).ok).toBe(true);
    await checkMessageStatuses({
      store: store(),
      keyring,
      clock,
      logger: silentLogger,
      providers: { test: provider, live },
      config: {
        intervalMs: 20_000,
        batchSize: 100,
        concurrency: 8,
        deadlineMs: 72 * HOUR,
        callTimeoutMs: 1_000,
      },
    });
    const both = await projectUsage(deps(), { viewer, projectId });
    if (!both.ok) throw new Error(both.code);
    expect(both.totals.byStatus).toMatchObject({ delivered: 3, failed: 2 });
    expect(both.deliveryRate).toBeCloseTo(3 / 5);
    expect(both.deliveryRateByMode.live).toBeCloseTo(2 / 3);
    expect(both.deliveryRateByMode.test).toBeCloseTo(1 / 2);
    for (const mode of ["live", "test"] as const) {
      const one = await projectUsage(deps(), { viewer, projectId, mode });
      if (!one.ok) throw new Error(one.code);
      expect(one.deliveryRate, mode).toBeCloseTo(mode === "live" ? 2 / 3 : 1 / 2);
      expect(one.deliveryRateByMode).toEqual(both.deliveryRateByMode);
    }
    // A project with nothing final has no rate in either mode.
    const empty = await claimedProject();
    expect(await projectUsage(deps(), empty)).toMatchObject({
      deliveryRateByMode: { live: null, test: null },
    });
  });

  it("the owner names a project (trimmed, 1–64 characters, empty removes it, audited); another account cannot", async () => {
    clock.set(T0);
    const { projectId, viewer } = await claimedProject({ subject: "namer" });
    const other = await claimedProject({ subject: "other-owner" });
    const named = await setProjectName(deps(), { viewer, projectId, name: "  Shop   <b>sign-in</b> & co  " });
    expect(named).toMatchObject({ ok: true, project: { id: projectId, name: "Shop <b>sign-in</b> & co" } });
    expect(await t.db.prisma.project.findUniqueOrThrow({ where: { id: projectId } })).toMatchObject({
      name: "Shop <b>sign-in</b> & co",
    });
    // The name shows in the owner's list; the other account neither sees nor changes it.
    const listed = await listAccountProjects(deps(), { viewer, after: null, limit: 10 });
    expect(listed.items.map((item) => [item.id, item.name])).toEqual([
      [projectId, "Shop <b>sign-in</b> & co"],
    ]);
    expect(await setProjectName(deps(), { viewer: other.viewer, projectId, name: "Taken" })).toEqual({
      ok: false,
      code: "project_not_found",
    });
    // Too long, or a control character: refused, nothing changes.
    const longest = "ნ".repeat(PROJECT_NAME_MAX_LENGTH);
    for (const name of [`${longest}x`, "tab\u0007bell", "zero\u200bwidth"])
      expect(await setProjectName(deps(), { viewer, projectId, name }), name).toEqual({
        ok: false,
        code: "invalid_input",
        field: "project_name",
      });
    expect((await t.db.prisma.project.findUniqueOrThrow({ where: { id: projectId } })).name).toBe(
      "Shop <b>sign-in</b> & co",
    );
    // 64 Georgian letters (astral-free, but not ASCII) fit; an empty name removes it.
    expect(await setProjectName(deps(), { viewer, projectId, name: longest })).toMatchObject({
      ok: true,
      project: { name: longest },
    });
    expect(await setProjectName(deps(), { viewer, projectId, name: "   " })).toMatchObject({
      ok: true,
      project: { name: null },
    });
    const audit = await t.db.prisma.auditEntry.findMany({
      where: { projectId, action: "project.named" },
      orderBy: { createdAt: "asc" },
    });
    expect(audit.map((row) => [row.actor, row.details])).toEqual([
      ["dev:namer", { name: "Shop <b>sign-in</b> & co" }],
      ["dev:namer", { name: longest }],
      ["dev:namer", { name: null }],
    ]);
    expect((await t.db.prisma.project.findUniqueOrThrow({ where: { id: other.projectId } })).name).toBeNull();
    expect(projectNameOf("😀".repeat(PROJECT_NAME_MAX_LENGTH))).toBe("😀".repeat(PROJECT_NAME_MAX_LENGTH));
  });

  it("keys: list with last use (once a minute), live key, revoke, roll the test key; each audited", async () => {
    clock.set(T0);
    const { projectId, viewer, testKey } = await claimedProject();
    const testKeyId = await keyIdOf(projectId, "test");
    const auth = createApiKeyAuthenticator({ store: store(), clock, cacheTtlMs: 0 });
    expect((await auth.authenticate(`Bearer ${testKey}`)).ok).toBe(true);
    const lastUsed = async () =>
      (await t.db.prisma.apiKey.findUniqueOrThrow({ where: { id: testKeyId } })).lastUsedAt?.getTime();
    const first = await lastUsed();
    expect(first).toBeGreaterThanOrEqual(T0.getTime());
    clock.set(new Date(T0.getTime() + 30_000));
    await auth.authenticate(`Bearer ${testKey}`);
    expect(await lastUsed()).toBe(first);
    clock.set(new Date(T0.getTime() + 61_000));
    await auth.authenticate(`Bearer ${testKey}`);
    expect(await lastUsed()).toBeGreaterThanOrEqual(T0.getTime() + 61_000);

    const created = await createProjectLiveKey(deps(), { viewer, projectId });
    if (!created.ok || !("apiKey" in created)) throw new Error("no live key");
    expect(created.apiKey).toMatch(/^sk_live_/);
    const listed = await listProjectKeys(deps(), { viewer, projectId, after: null, limit: 1 });
    if (!listed.ok) throw new Error(listed.code);
    expect(listed.items.map((key) => [key.mode, key.prefix])).toEqual([["live", created.prefix]]);
    expect(listed.next).not.toBeNull();
    const rest = await listProjectKeys(deps(), { viewer, projectId, after: listed.next, limit: 10 });
    expect(rest).toMatchObject({ ok: true, next: null, items: [{ id: testKeyId, mode: "test" }] });
    expect(JSON.stringify([listed, rest])).not.toContain(created.apiKey);

    expect(await revokeProjectKey(deps(), { viewer, projectId, keyId: created.keyId })).toMatchObject({
      ok: true,
      alreadyRevoked: false,
    });
    expect((await auth.authenticate(`Bearer ${created.apiKey}`)).ok).toBe(false);

    const rolled = await rollTestKey(deps(), { viewer, projectId });
    if (!rolled.ok || !("apiKey" in rolled)) throw new Error("roll refused");
    expect(rolled.revoked).toEqual([{ keyId: testKeyId, prefix: testKey.slice(0, 12) }]);
    expect((await auth.authenticate(`Bearer ${testKey}`)).ok).toBe(false);
    expect((await auth.authenticate(`Bearer ${rolled.apiKey}`)).ok).toBe(true);
    const audit = await t.db.prisma.auditEntry.findMany({
      where: { projectId },
      orderBy: { createdAt: "asc" },
    });
    expect(audit.map((row) => [row.actor, row.action])).toEqual([
      [viewer.actor, "api_key.created"],
      [viewer.actor, "api_key.revoked"],
      [viewer.actor, "test_key.rolled"],
    ]);
    expect(JSON.stringify(audit)).not.toContain(rolled.apiKey);

    await suspendProject(deps(), { actor: "ops", projectId });
    expect(await createProjectLiveKey(deps(), { viewer, projectId })).toEqual({
      ok: false,
      code: "project_suspended",
      projectId,
    });
  });

  it("credits: the balance against the ledger, the free tier, and the ledger paged with each entry's message", async () => {
    clock.set(T0);
    const { projectId, viewer } = await claimedProject({ credits: 5 });
    const live = await createProjectLiveKey(deps(), { viewer, projectId });
    if (!live.ok || !("keyId" in live)) throw new Error("no live key");
    const sent = await send(projectId, "live", live.keyId);
    if (!sent.ok) throw new Error(sent.code);
    await grantPaidCredits(deps(), { actor: "ops", projectId, amount: 100, reference: "INV-1" });
    const cfg = { config: { freeTierDailySegments: 20 } };
    const page1 = await projectCredits({ ...deps(), ...cfg }, { viewer, projectId, after: null, limit: 2 });
    if (!page1.ok) throw new Error(page1.code);
    expect(page1.credits).toEqual({ balance: 104, ledgerSum: 104, consistent: true, hasPaidCredits: true });
    expect(page1.freeTier).toMatchObject({ applies: false, usedToday: 1, limit: 20 });
    expect(page1.ledger.items.map((entry) => [entry.kind, entry.amount, entry.messageId])).toEqual([
      ["grant_paid", 100, null],
      ["reservation", -1, sent.message.id],
    ]);
    const page2 = await projectCredits(
      { ...deps(), ...cfg },
      { viewer, projectId, after: page1.ledger.next, limit: 2 },
    );
    expect(page2).toMatchObject({
      ok: true,
      ledger: { next: null, items: [{ kind: "grant_free", amount: 5 }] },
    });
    const detail = await projectMessage(deps(), { viewer, projectId, messageId: sent.message.id });
    expect(detail).toMatchObject({ ok: true, ledger: [{ kind: "reservation", amount: -1 }] });
    const overview = await projectOverview({ ...deps(), ...cfg }, { viewer, projectId });
    expect(overview).toMatchObject({
      ok: true,
      messagesToday: 1,
      credits: { balance: 104, consistent: true },
    });
  });

  it("sender requests: one pending at a time, approved through the brand check, or refused with a reason", async () => {
    clock.set(T0);
    const { projectId, viewer } = await claimedProject();
    const operator = { ...deps(), brands: BRANDS };
    expect(await requestSender(deps(), { viewer, projectId, name: "no good!", purpose: "codes" })).toEqual({
      ok: false,
      code: "invalid_input",
      field: "sender_name",
    });
    expect(await requestSender(deps(), { viewer, projectId, name: "Acme", purpose: "" })).toMatchObject({
      field: "purpose",
    });
    const [a, b] = await Promise.all([
      requestSender(deps(), { viewer, projectId, name: "Pending", purpose: "sign-in codes" }),
      requestSender(deps(), { viewer, projectId, name: "Acme", purpose: "sign-in codes" }),
    ]);
    expect([a.ok, b.ok].sort()).toEqual([false, true]);
    const first = (a.ok ? a : b) as Extract<typeof a, { ok: true }>;
    expect(a.ok ? b : a).toMatchObject({ ok: false, code: "sender_request_pending" });
    const pending = await listSenderRequests(deps(), { status: "pending", after: null, limit: 100 });
    expect(pending.items.map((r) => r.id)).toContain(first.request.id);

    if (first.request.name === "Pending") {
      // The brand is not approved at the provider: nothing changes, the request stays pending.
      expect(
        await approveSenderRequest(operator, { actor: "ops", requestId: first.request.id }),
      ).toMatchObject({
        ok: false,
        code: "brand_not_approved",
      });
    }
    expect(
      await refuseSenderRequest(deps(), { actor: "ops", requestId: first.request.id, reason: " " }),
    ).toMatchObject({
      code: "invalid_input",
    });
    expect(
      await refuseSenderRequest(deps(), {
        actor: "ops",
        requestId: first.request.id,
        reason: "Not your brand",
      }),
    ).toMatchObject({ ok: true });
    expect(
      await refuseSenderRequest(deps(), { actor: "ops", requestId: first.request.id, reason: "again" }),
    ).toEqual({
      ok: false,
      code: "sender_request_decided",
      status: "refused",
    });

    const second = await requestSender(deps(), { viewer, projectId, name: "acme", purpose: "sign-in codes" });
    if (!second.ok) throw new Error(second.code);
    const approved = await approveSenderRequest(operator, { actor: "ops", requestId: second.request.id });
    expect(approved).toMatchObject({ ok: true, sender: "Acme", brandId: 7, validated: true });
    expect(await t.db.prisma.project.findUniqueOrThrow({ where: { id: projectId } })).toMatchObject({
      sender: "Acme",
      senderBrandId: 7,
    });
    expect(
      await approveSenderRequest(operator, { actor: "ops", requestId: second.request.id }),
    ).toMatchObject({
      code: "sender_request_decided",
    });
    expect(await approveSenderRequest(operator, { actor: "ops", requestId: newId("srq") })).toEqual({
      ok: false,
      code: "sender_request_not_found",
    });
    expect(await requestSender(deps(), { viewer, projectId, name: "ACME", purpose: "again" })).toEqual({
      ok: false,
      code: "sender_already_set",
      sender: "Acme",
    });
    const view = await projectSender(deps(), { viewer, projectId, limit: 10 });
    expect(view).toMatchObject({ ok: true, project: { sender: "Acme" } });
    if (!view.ok) throw new Error(view.code);
    expect(view.requests.map((r) => [r.status, r.refusalReason])).toEqual([
      ["approved", null],
      ["refused", "Not your brand"],
    ]);
    const actions = await t.db.prisma.auditEntry.findMany({
      where: { projectId },
      orderBy: { createdAt: "asc" },
    });
    expect(actions.map((row) => row.action)).toEqual([
      "sender.requested",
      "sender.request_refused",
      "sender.requested",
      "sender.set",
      "sender.request_approved",
    ]);
  });

  it("operator: finds projects by id, key prefix and address; never looks up a whole key; pages the audit log", async () => {
    clock.set(T0);
    const email = `finder-${Math.random().toString(36).slice(2, 8)}@example.com`;
    const one = await claimedProject({ subject: `finder-${email}`, email });
    const two = await claimedProject({ subject: `finder-${email}`, email });
    const find = (query: string) => findProjects(deps(), { actor: "ops", query });
    expect(await find(one.projectId)).toMatchObject({
      ok: true,
      by: "project_id",
      projects: [{ id: one.projectId }],
    });
    expect(await find(one.testKey.slice(0, 12))).toMatchObject({
      ok: true,
      by: "key_prefix",
      projects: [{ id: one.projectId }],
    });
    const byEmail = await find(email);
    expect(byEmail).toMatchObject({ ok: true, by: "email" });
    if (!byEmail.ok) throw new Error("refused");
    expect(byEmail.projects.map((p) => p.id).sort()).toEqual([one.projectId, two.projectId].sort());
    expect(await find(one.testKey)).toEqual({ ok: false, code: "whole_key_given" });
    expect(await find("hello")).toEqual({ ok: false, code: "invalid_input", field: "query" });
    expect(await find(newId("prj"))).toMatchObject({ ok: true, projects: [] });

    for (const reason of ["one", "two", "three"]) {
      await suspendProject(deps(), { actor: "ops", projectId: one.projectId, reason });
    }
    const page1 = await listAuditLog(deps(), { projectId: one.projectId, after: null, limit: 2 });
    if (!page1.ok) throw new Error("refused");
    expect(page1.items.map((row) => row.details.reason)).toEqual(["three", "two"]);
    const page2 = await listAuditLog(deps(), { projectId: one.projectId, after: page1.next, limit: 2 });
    expect(page2).toMatchObject({ ok: true, next: null, items: [{ details: { reason: "one" } }] });
    const everything = await listAuditLog(deps(), { after: null, limit: 1 });
    expect(everything).toMatchObject({ ok: true, items: [{ action: "project.suspended" }] });
    expect(await listAuditLog(deps(), { projectId: "nope", after: null, limit: 1 })).toMatchObject({
      code: "invalid_input",
    });
  });
});
