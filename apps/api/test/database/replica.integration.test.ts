// Reads from a replica (issue 26), in-process against a real streaming standby
// (@sms/db/testing startReplicatedPostgres): the dashboard's lists, charts and
// exports, one message's page, and GET of a message or a verification read the
// standby; read-your-writes within DATABASE_READ_FALLBACK_WINDOW_MS; sends,
// claims and grants stay on the primary; a stopped standby costs nothing but
// the fallback. The standby's replay is paused to make its lag visible: what a
// read shows then tells which server answered. The window is measured on the
// ids' own creation time (their first ten characters), never by waiting.
import { sha256Hex } from "@sms/crypto";
import { openReadReplica } from "@sms/db";
import { type ReplicatedPostgres, replicaHarnessAvailable, startReplicatedPostgres } from "@sms/db/testing";
import {
  claimProject,
  type DashboardViewer,
  developmentIdentity,
  getMessage as getMessageUseCase,
  withReplicaReads,
} from "@sms/domain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestKey, sendMessageRequest, startTestApp, type TestApp } from "../harness.ts";
import { body } from "../support/messages.ts";
import { type ReadFallbacks, readFallbacks } from "../support/read-fallbacks.ts";
import { verificationClient } from "../support/verifications.ts";

const TOKEN = "replica-test-internal-token-0123456789abcdef";
const WINDOW_MS = 30_000;

describe.runIf(replicaHarnessAvailable())("reads from a replica (in-process)", () => {
  let cluster: ReplicatedPostgres;
  let t: TestApp;
  let apiKey: string;
  let projectId: string;
  let viewer: DashboardViewer;
  let sent = 0;

  beforeAll(async () => {
    cluster = await startReplicatedPostgres();
    t = await startTestApp({
      backend: "postgres",
      databaseUrl: cluster.primaryUrl,
      env: {
        DATABASE_URL: cluster.primaryUrl,
        DATABASE_READ_URL: cluster.replicaUrl,
        DATABASE_READ_FALLBACK_WINDOW_MS: String(WINDOW_MS),
        DATABASE_CONNECT_TIMEOUT_MS: "1000",
        INTERNAL_PORT: "0",
        INTERNAL_API_TOKEN: TOKEN,
        TEST_KEYS_PER_MINUTE: "1000",
        MESSAGES_PER_MINUTE: "1000",
      },
    });
    const key = await createTestKey((path, init) => t.request(path, init));
    apiKey = key.api_key;
    projectId = key.project_id;
    const token = key.claim_url.slice(key.claim_url.lastIndexOf("/") + 1);
    const identity = developmentIdentity("Rita Replica")!;
    const claimed = await claimProject(
      { store: t.app.store, config: { freeCredits: 50 } },
      {
        tokenHash: await sha256Hex(token),
        identity: { provider: "dev", subject: identity.subject, email: null, name: "Rita Replica" },
        now: t.clock.now(),
      },
    );
    expect(claimed.ok).toBe(true);
    const sessions = t.app.deps.services.dashboard.sessions;
    const started = await sessions.start({ identity });
    const resumed = await sessions.resume({ token: started.token });
    if (!resumed.ok) throw new Error("no session");
    viewer = resumed.viewer;
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    await cluster?.stop();
  });

  async function send(): Promise<string> {
    sent++;
    const response = await t.request(
      "/v1/messages",
      sendMessageRequest(
        apiKey,
        crypto.randomUUID(),
        body({ to: `+99555510${String(sent).padStart(4, "0")}` }),
      ),
    );
    expect(response.status).toBe(201);
    return ((await response.json()) as { id: string }).id;
  }

  const getMessage = (id: string) =>
    t.request(`/v1/messages/${id}`, { headers: { Authorization: `Bearer ${apiKey}` } });

  const dashboard = () => t.app.deps.services.dashboard;
  const listed = async () => {
    const page = await dashboard().messages.list({ viewer, projectId, filter: {}, after: null, limit: 100 });
    if (!page.ok) throw new Error(page.code);
    return page.items.map((m) => m.id);
  };
  const ledgerIds = async () => {
    const credits = await dashboard().credits({ viewer, projectId, after: null, limit: 100 });
    if (!credits.ok) throw new Error(credits.code);
    return credits.ledger.items.map((entry) => entry.id);
  };
  const usageTotal = async () => {
    const usage = await dashboard().projects.usage({ viewer, projectId });
    if (!usage.ok) throw new Error(usage.code);
    return usage.totals.messages;
  };

  async function fallbacks(): Promise<ReadFallbacks> {
    return readFallbacks(
      await (await t.internal("/metrics", { headers: { Authorization: `Bearer ${TOKEN}` } })).text(),
    );
  }

  /** sms_db_replica_lag_seconds as the internal listener serves it (NaN when absent). */
  async function replicaLag(): Promise<number> {
    const text = await (
      await t.internal("/metrics", { headers: { Authorization: `Bearer ${TOKEN}` } })
    ).text();
    const line = text.split("\n").find((l) => l.startsWith('sms_db_replica_lag_seconds{server="replica"} '));
    return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : Number.NaN;
  }

  it("serves the dashboard's lists, charts and exports' pages from the standby: they lag while it does", async () => {
    const before = await send();
    await cluster.whileLagging(async () => {
      const during = await send();
      const grant = await t.app.deps.services.operator.grantPaidCredits({
        actor: "operator:test",
        projectId,
        amount: 100,
      });
      expect(grant.ok).toBe(true);
      const entryId = grant.ok ? grant.entryId : "";
      // The send and the grant are on the primary …
      expect(await t.app.db.query("SELECT id FROM messages WHERE id = $1", [during])).toHaveLength(1);
      // … and not (yet) in what the dashboard shows: those reads were the standby's.
      const ids = await listed();
      expect(ids).toContain(before);
      expect(ids).not.toContain(during);
      expect(await ledgerIds()).not.toContain(entryId);
      const total = await usageTotal();
      // The replica lag alert's metric sees it too (deploy/prometheus/alerts.yml, SmsReadReplicaLagging).
      await expect.poll(replicaLag, { timeout: 15_000, interval: 200 }).toBeGreaterThan(0);
      // Once the standby has caught up, all of it shows.
      await cluster.resumeReplay();
      await cluster.caughtUp();
      expect(await listed()).toContain(during);
      expect(await ledgerIds()).toContain(entryId);
      expect(await usageTotal()).toBe(total + 1);
      expect(await replicaLag()).toBe(0);
    });
  });

  it("reads your writes: a message or verification the standby lacks is read on the primary while its id is recent", async () => {
    const start = await fallbacks();
    await cluster.whileLagging(async () => {
      const id = await send();
      const found = await getMessage(id);
      expect(found.status).toBe(200);
      expect(((await found.json()) as { id: string }).id).toBe(id);
      // The dashboard's page of that message, its timeline included.
      const page = await dashboard().messages.get({ viewer, projectId, messageId: id });
      expect(page.ok && page.message.id).toBe(id);
      expect(page.ok && page.timeline.length).toBeGreaterThan(0);

      const verifications = verificationClient((path, init) => t.request(path, init));
      const startedVerification = await verifications.start(apiKey, crypto.randomUUID(), {
        to: "+995555109999",
      });
      expect(startedVerification.status).toBe(201);
      const verificationId = ((await startedVerification.json()) as { id: string }).id;
      expect((await verifications.get(apiKey, verificationId)).status).toBe(200);

      const counted = await fallbacks();
      // GET message 1; the page's detail and timeline 2 (its ledger, empty for a test message, 1 more); GET verification 1.
      expect(counted.not_found_recent - start.not_found_recent).toBeGreaterThanOrEqual(4);
      expect(counted.replica_error).toBe(start.replica_error);

      // Past the window (ids carry their wall time: the store is given a later "now"), the standby's answer stands.
      const replica = await openReadReplica({ replicaUrl: cluster.replicaUrl, primary: t.app.db });
      try {
        const late: string[] = [];
        const store = withReplicaReads(t.app.store, {
          replica,
          recentWindowMs: WINDOW_MS,
          now: () => Date.now() + WINDOW_MS,
          onFallback: (reason) => late.push(reason),
        });
        expect(await getMessageUseCase({ store }, { projectId, messageId: id })).toEqual({
          ok: false,
          code: "message_not_found",
        });
        expect(late).toEqual([]);
        // The same store, for an id still within the window, finds it on the primary.
        const recent = withReplicaReads(t.app.store, {
          replica,
          recentWindowMs: WINDOW_MS,
          now: () => Date.now(),
          onFallback: (reason) => late.push(reason),
        });
        expect(await getMessageUseCase({ store: recent }, { projectId, messageId: id })).toMatchObject({
          ok: true,
        });
        expect(late).toEqual(["not_found_recent"]);
      } finally {
        await replica.close();
      }
    });
  });

  it("keeps serving reads from the primary while the standby is down", async () => {
    const id = await send();
    await cluster.caughtUp();
    const start = await fallbacks();
    await cluster.stopReplica();
    try {
      expect((await getMessage(id)).status).toBe(200);
      expect(await listed()).toContain(id);
      expect((await t.request("/readyz")).status).toBe(200);
      expect((await fallbacks()).replica_error).toBeGreaterThanOrEqual(start.replica_error + 2);
    } finally {
      await cluster.startReplica();
    }
  });
});
