// The developer console's domain against PGlite and PostgreSQL: the daily
// credit cap enforced in the reservation statement (50 parallel live sends
// against a cap of 10: exactly 10 accepted), the spending controls and the
// low-balance estimate, and the request log (batched writes, filters, pages,
// one request, a message's requests, the search box, the retention purge).
import { generateKeySpec, newId, parseKeyring, sha256Hex } from "@sms/crypto";
import { availableBackends, createTestDatabase, type TestDatabase } from "@sms/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimProject } from "../src/claims/claim-project.ts";
import type { AccountViewer } from "../src/dashboard/access.ts";
import { actorOf } from "../src/dashboard/identity.ts";
import { createProjectLiveKey } from "../src/dashboard/keys.ts";
import {
  listProjectRequests,
  messageRequests,
  projectRequest,
  searchProject,
} from "../src/dashboard/requests.ts";
import { ownProjectSpending, setProjectSpending } from "../src/dashboard/spending.ts";
import { sendMessage } from "../src/messages/send/send-message.ts";
import { grantPaidCredits } from "../src/operator/grant-paid-credits.ts";
import { setDailyCreditCap } from "../src/operator/set-daily-credit-cap.ts";
import { type Clock, silentLogger } from "../src/ports.ts";
import { purgeRequestLog } from "../src/privacy/retention.ts";
import type { SmsProvider } from "../src/provider.ts";
import { createRequestRecorder } from "../src/request-log/record-requests.ts";
import { createStore, type RequestRecord } from "../src/store/index.ts";
import { createTestKey } from "../src/test-keys/create-test-key.ts";

const backends = await availableBackends();
const T0 = new Date("2026-11-22T10:00:00Z");
const DAY = 86_400_000;
const LIMITS = { perMinute: 1000, perDay: 1000, perDayTotal: 1000 };

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

const accepting = (name: "simulator" | "ubill"): SmsProvider => ({
  name,
  async submit(request) {
    return { kind: "accepted", providerRef: `ref-${request.messageId}` };
  },
  async checkStatus() {
    return { kind: "delivered" };
  },
});

describe.each(backends)("the developer console's domain on %s", (kind) => {
  let t: TestDatabase;
  const clock = new TestClock();
  const keyring = parseKeyring(generateKeySpec("k1"));
  const store = () => createStore(t.db);
  const deps = () => ({ store: store(), clock });

  beforeAll(async () => {
    t = await createTestDatabase(kind, { poolSize: 8 });
  }, 120_000);
  afterAll(() => t?.drop());

  async function claimedProject() {
    const subject = `user-${Math.random().toString(36).slice(2, 10)}`;
    const created = await createTestKey(
      { store: store(), config: { publicBaseUrl: "http://api.test", limits: LIMITS } },
      { now: clock.now(), callerSubject: `198.51.100.${Math.floor(Math.random() * 250)}` },
    );
    if (!created.ok) throw new Error("test key refused");
    const token = created.claimUrl.slice(created.claimUrl.lastIndexOf("/") + 1);
    const claimed = await claimProject(
      { store: store(), config: { freeCredits: 10 } },
      {
        tokenHash: await sha256Hex(token),
        identity: { provider: "dev", subject, email: null, name: subject },
        now: clock.now(),
      },
    );
    if (!claimed.ok) throw new Error(`claim refused: ${claimed.code}`);
    const viewer: AccountViewer = {
      accountId: claimed.accountId,
      actor: actorOf({ provider: "dev", subject }),
    };
    return { projectId: created.projectId, viewer };
  }

  const send = (projectId: string, keyId: string, to = "+995555123456", live = accepting("ubill")) =>
    sendMessage(
      {
        store: store(),
        keyring,
        clock,
        providers: { test: accepting("simulator"), live },
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
        mode: "live",
        keyId,
        idempotencyKey: crypto.randomUUID(),
        request: { to, template: "verification_code", variables: { code: "4821" }, locale: "en" },
        logger: silentLogger,
      },
    );

  it("the daily credit cap: 50 parallel live sends against a cap of 10 → exactly 10 accepted, the rest refused with the cap; a new UTC day starts again", async () => {
    clock.set(T0);
    const { projectId, viewer } = await claimedProject();
    await grantPaidCredits(deps(), { actor: "ops", projectId, amount: 100, reference: "INV-CAP" });
    const live = await createProjectLiveKey(deps(), { viewer, projectId });
    if (!live.ok || !("keyId" in live)) throw new Error("no live key");
    const set = await setProjectSpending(deps(), {
      viewer,
      projectId,
      dailyCreditCap: 10,
      lowBalanceThreshold: null,
    });
    expect(set).toMatchObject({ ok: true, spending: { dailyCreditCap: 10, usedToday: 0 } });
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        send(projectId, live.keyId, `+9955551${String(i).padStart(5, "0")}`),
      ),
    );
    const accepted = results.filter((result) => result.ok);
    const refused = results.filter((result) => !result.ok);
    expect(accepted).toHaveLength(10);
    expect(refused).toHaveLength(40);
    for (const result of refused) {
      expect(result).toMatchObject({
        ok: false,
        code: "daily_limit_reached",
        subject: "credit_cap",
        limit: { limit: 10 },
      });
      if (!result.ok && result.code === "daily_limit_reached")
        expect(result.limit.resetAt.toISOString()).toBe("2026-11-23T00:00:00.000Z");
    }
    // Nothing of the refused sends was kept: 10 messages, 10 reservations, the balance down by 10.
    expect(await t.db.prisma.message.count({ where: { projectId } })).toBe(10);
    expect(await t.db.prisma.creditLedgerEntry.count({ where: { projectId, kind: "reservation" } })).toBe(10);
    const project = await t.db.prisma.project.findUniqueOrThrow({ where: { id: projectId } });
    expect(project.creditBalance).toBe(100);
    expect(project.dailyCreditsUsed).toBe(10);
    expect(await ownProjectSpending(deps(), { viewer, projectId })).toMatchObject({
      ok: true,
      spending: { dailyCreditCap: 10, usedToday: 10 },
    });
    // The next UTC day: the cap counts from zero again.
    clock.set(new Date(T0.getTime() + DAY));
    expect(await send(projectId, live.keyId)).toMatchObject({ ok: true });
    expect((await t.db.prisma.project.findUniqueOrThrow({ where: { id: projectId } })).dailyCreditsUsed).toBe(
      1,
    );
    // The operator clears the cap (audited): the owner's day goes on without one.
    expect(await setDailyCreditCap(deps(), { actor: "ops", projectId, cap: null })).toEqual({
      ok: true,
      projectId,
      dailyCreditCap: null,
    });
    expect(await t.db.prisma.auditEntry.count({ where: { projectId, action: "project.spending_set" } })).toBe(
      2,
    );
  }, 120_000);

  it("the ledger's pages say when a refunded reservation's message was never kept (503: nothing to link to)", async () => {
    clock.set(T0);
    const { projectId, viewer } = await claimedProject();
    const live = await createProjectLiveKey(deps(), { viewer, projectId });
    if (!live.ok || !("keyId" in live)) throw new Error("no live key");
    const unreachable: SmsProvider = {
      name: "ubill",
      submit: async () => ({ kind: "unreachable", reason: "down" }),
      checkStatus: async () => ({ kind: "pending" }),
    };
    expect(await send(projectId, live.keyId, "+995555300001", unreachable)).toMatchObject({
      ok: false,
      code: "provider_unavailable",
    });
    const sent = await send(projectId, live.keyId, "+995555300002");
    if (!sent.ok) throw new Error(sent.code);
    const entries = await store().ledger.listPage(projectId, null, 10);
    const kept = (kind: string) =>
      entries
        .filter((entry) => entry.kind === kind)
        .map((entry) => [entry.messageId === sent.message.id, entry.messageKept]);
    // The refunded send left a reservation and a refund whose message is gone; the kept send's links.
    expect(kept("refund")).toEqual([[false, false]]);
    expect(kept("reservation").sort()).toEqual([
      [false, false],
      [true, true],
    ]);
    // The spending estimate counts only what was not refunded.
    expect(await ownProjectSpending(deps(), { viewer, projectId })).toMatchObject({
      ok: true,
      spending: { usedToday: 1 },
    });
  }, 60_000);

  it("spending: invalid limits are refused; under the threshold the warning shows days left at the last 7 days' rate", async () => {
    clock.set(T0);
    const { projectId, viewer } = await claimedProject();
    for (const dailyCreditCap of [0, -1, 1.5, 2_000_000]) {
      expect(
        await setProjectSpending(deps(), { viewer, projectId, dailyCreditCap, lowBalanceThreshold: null }),
      ).toEqual({
        ok: false,
        code: "invalid_input",
        field: "cap",
      });
    }
    expect(
      await setProjectSpending(deps(), { viewer, projectId, dailyCreditCap: null, lowBalanceThreshold: 0 }),
    ).toMatchObject({
      ok: false,
      field: "threshold",
    });
    const live = await createProjectLiveKey(deps(), { viewer, projectId });
    if (!live.ok || !("keyId" in live)) throw new Error("no live key");
    // 7 credits used in the last week from 10: 1 a day, 3 left, under a threshold of 5.
    for (let i = 0; i < 7; i++) {
      clock.set(new Date(T0.getTime() + i * 3_600_000));
      expect(await send(projectId, live.keyId, `+99555520000${i}`)).toMatchObject({ ok: true });
    }
    const set = await setProjectSpending(deps(), {
      viewer,
      projectId,
      dailyCreditCap: null,
      lowBalanceThreshold: 5,
    });
    expect(set).toMatchObject({
      ok: true,
      spending: { lowBalance: true, lowBalanceThreshold: 5, dailyRate: 1, daysLeft: 3 },
    });
    // Another account's project is not found.
    const other = await claimedProject();
    expect(await ownProjectSpending(deps(), { viewer: other.viewer, projectId })).toEqual({
      ok: false,
      code: "project_not_found",
    });
  }, 60_000);

  it("the request log: written in batches, filtered and paged, one request, a message's requests, the search box and the purge", async () => {
    clock.set(T0);
    const { projectId, viewer } = await claimedProject();
    const other = await claimedProject();
    const live = await createProjectLiveKey(deps(), { viewer, projectId });
    if (!live.ok || !("keyId" in live)) throw new Error("no live key");
    const sent = await send(projectId, live.keyId);
    if (!sent.ok) throw new Error(sent.code);
    const recorder = createRequestRecorder({ store: store(), logger: silentLogger, flushMs: 60_000 });
    const record = (overrides: Partial<RequestRecord>): RequestRecord => ({
      id: newId("req"),
      projectId,
      keyId: live.keyId,
      mode: "live",
      method: "POST",
      route: "/v1/messages",
      status: 201,
      errorCode: null,
      idempotencyKey: null,
      replayed: false,
      durationMs: 12,
      messageId: null,
      verificationId: null,
      createdAt: clock.now(),
      ...overrides,
    });
    const created = record({ idempotencyKey: "order-42", messageId: sent.message.id });
    const replay = record({
      idempotencyKey: "order-42",
      messageId: sent.message.id,
      replayed: true,
      status: 200,
    });
    const failed = record({ status: 400, errorCode: "invalid_variables", idempotencyKey: "order-43" });
    const read = record({
      method: "GET",
      route: "/v1/messages/{id}",
      status: 200,
      messageId: sent.message.id,
      mode: "live",
    });
    const elsewhere = record({ projectId: other.projectId, keyId: null, mode: "test" });
    const gone = record({ projectId: "prj_00000000000000000000000000" });
    const many = Array.from({ length: 60 }, () => record({ mode: "test", keyId: null, status: 201 }));
    for (const entry of [created, replay, failed, read, elsewhere, gone, ...many]) recorder.record(entry);
    expect(await t.db.prisma.requestLogEntry.count({ where: { projectId } })).toBe(0);
    await recorder.flush();
    // A record whose project does not exist is skipped, nothing else fails.
    expect(await t.db.prisma.requestLogEntry.count({ where: { projectId } })).toBe(64);
    expect(recorder.dropped()).toBe(0);

    const list = (filter: object, after = null as { createdAt: Date; id: string } | null, limit = 50) =>
      listProjectRequests(deps(), { viewer, projectId, filter, after, limit });
    const page1 = await list({});
    if (!page1.ok) throw new Error(page1.code);
    expect(page1.items).toHaveLength(50);
    expect(page1.items[0]?.id).toBe(many[59]?.id);
    const page2 = await list({}, page1.next);
    if (!page2.ok) throw new Error(page2.code);
    expect(new Set([...page1.items, ...page2.items].map((r) => r.id)).size).toBe(64);
    expect(page2.next).toBeNull();
    const ids = async (filter: object) => {
      const page = await list(filter);
      if (!page.ok) throw new Error(page.code);
      return page.items.map((r) => r.id);
    };
    expect(await ids({ statusClass: 4 })).toEqual([failed.id]);
    expect(await ids({ errorCode: "invalid_variables" })).toEqual([failed.id]);
    expect(await ids({ route: "/v1/messages/{id}" })).toEqual([read.id]);
    expect((await ids({ mode: "live" })).sort()).toEqual([created.id, replay.id, failed.id, read.id].sort());
    expect(await ids({ from: new Date(T0.getTime() + DAY) })).toEqual([]);
    expect(await list({ errorCode: "DROP TABLE" })).toEqual({
      ok: false,
      code: "invalid_input",
      field: "filter",
    });

    const one = await projectRequest(deps(), { viewer, projectId, requestId: failed.id });
    expect(one).toMatchObject({
      ok: true,
      request: {
        id: failed.id,
        status: 400,
        errorCode: "invalid_variables",
        keyPrefix: live.prefix,
        mode: "live",
      },
    });
    expect(await projectRequest(deps(), { viewer, projectId, requestId: elsewhere.id })).toEqual({
      ok: false,
      code: "request_not_found",
    });
    expect(await projectRequest(deps(), { viewer: other.viewer, projectId, requestId: failed.id })).toEqual({
      ok: false,
      code: "project_not_found",
    });
    const behind = await messageRequests(deps(), { viewer, projectId, messageId: sent.message.id });
    expect(behind.ok && behind.requests.map((r) => [r.id, r.replayed])).toEqual([
      [created.id, false],
      [replay.id, true],
      [read.id, false],
    ]);

    const search = (query: string, v = viewer) => searchProject(deps(), { viewer: v, projectId, query });
    expect(await search(` ${failed.id} `)).toEqual({ ok: true, kind: "request", id: failed.id });
    expect(await search(sent.message.id)).toEqual({ ok: true, kind: "message", id: sent.message.id });
    expect(await search(elsewhere.id)).toEqual({ ok: true, kind: "not_found" });
    const byKey = await search("order-42");
    expect(byKey.ok && byKey.kind === "idempotency_key" && byKey.requests.map((r) => r.id)).toEqual([
      replay.id,
      created.id,
    ]);
    // A vrf_ id: not found until verifications answer through the seam.
    const vrf = "vrf_01JD0000000000000000000000";
    expect(await search(vrf)).toEqual({ ok: true, kind: "not_found" });
    expect(
      await searchProject(
        { ...deps(), findVerification: async (p, id) => p === projectId && id === vrf },
        { viewer, projectId, query: vrf },
      ),
    ).toEqual({ ok: true, kind: "verification", id: vrf });
    expect(await search("")).toEqual({ ok: false, code: "invalid_input", field: "search" });
    expect(await search(failed.id, other.viewer)).toEqual({ ok: false, code: "project_not_found" });

    // Retention: 30 days after, every record goes; younger ones stay.
    const kept = record({ createdAt: new Date(T0.getTime() + 40 * DAY) });
    recorder.record(kept);
    await recorder.close();
    const purged = await purgeRequestLog(
      { store: store() },
      { now: new Date(T0.getTime() + 31 * DAY), retentionMs: 30 * DAY, batchSize: 7 },
    );
    expect(purged.purged).toBeGreaterThanOrEqual(65);
    expect(
      await t.db.prisma.requestLogEntry.findMany({ where: { projectId }, select: { id: true } }),
    ).toEqual([{ id: kept.id }]);
  }, 60_000);
});
