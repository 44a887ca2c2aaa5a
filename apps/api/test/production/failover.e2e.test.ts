// The database survives losing its primary (issue 51, item 3): the real Deno
// service, its DATABASE_URL on HAProxy in front of a Patroni cluster (etcd,
// a primary and its synchronous standby; @sms/db/testing startPatroniCluster
// renders the shipped deploy/patroni and deploy/haproxy templates), under
// steady sends from several clients (test keys with fresh Idempotency-Keys
// and replays, and one live key against a fake uBill). Two drills, one after
// the other on one cluster:
//   A. the primary's machine dies: its Patroni and its postmaster, kill -9;
//   B. the (new) primary's postmaster and all its children are frozen
//      (SIGSTOP): it neither answers nor dies; thawed afterwards.
// Each time Patroni promotes the standby, the service writes again within
// 30 s without a restart, every answer meanwhile is a success or the
// documented outage (500 internal_error with Retry-After), none hangs,
// /readyz says not_ready for a while, and the old primary rejoins as the
// synchronous standby. Afterwards: every acknowledged send readable, no key
// with two messages, uBill asked at most once per key, ledger = balance.
import { createDatabase, type Database } from "@sms/db";
import {
  type PatroniCluster,
  type PrismaDatabase,
  patroniHarnessAvailable,
  startPatroniCluster,
  withPrisma,
} from "@sms/db/testing";
import { createStore, systemClock } from "@sms/domain";
import { type FakeUbill, startFakeUbill } from "@sms/provider-ubill/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestKey, type ServerProcess, sendMessageRequest, startServer } from "../harness.ts";
import { claimWithLiveKey } from "../support/live-projects.ts";
import { body } from "../support/messages.ts";

const UBILL_KEY = "ubill-failover-secret-3f7a";
/** No client request may take longer than this; none does (a hang would). */
const REQUEST_BOUND_MS = 20_000;
/** The requirement: the service writes again within 30 s of losing its primary. */
const WRITES_AGAIN_WITHIN_MS = 30_000;
const TEST_CLIENTS = 3;
/** Each client's pause between two requests: a modest, bounded rate. */
const PAUSE_MS = 150;

type Outcome = {
  key: string;
  project: string;
  to: string;
  apiKey: string;
  replay: boolean;
  startedAt: number;
  status: number | "no answer";
  id?: string;
  code?: string;
  retryAfter?: string | null;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.runIf(patroniHarnessAvailable())(
  "the database survives losing its primary (Patroni + HAProxy)",
  () => {
    let cluster: PatroniCluster;
    let fake: FakeUbill;
    let server: ServerProcess;
    let database: Database;
    let db: PrismaDatabase;
    const senders: Array<{ projectId: string; apiKey: string; live: boolean }> = [];
    const outcomes: Outcome[] = [];
    let liveNumber = 0;
    /** When each fault was injected (for a failure's message). */
    const faults: number[] = [];

    beforeAll(async () => {
      cluster = await startPatroniCluster();
      try {
        fake = await startFakeUbill({ apiKey: UBILL_KEY });
        server = await startServer({
          backend: "postgres",
          databaseUrl: cluster.url,
          env: {
            DATABASE_CONNECT_TIMEOUT_MS: "2000",
            DATABASE_STATEMENT_TIMEOUT_MS: "5000",
            UBILL_BASE_URL: fake.baseUrl,
            UBILL_API_KEY: UBILL_KEY,
            UBILL_DEFAULT_BRAND_ID: "1",
            UBILL_SUBMIT_TIMEOUT_MS: "3000",
            QUEUED_RECOVERY_SECONDS: "10",
            STATUS_CHECK_INTERVAL_SECONDS: "1",
            MESSAGES_PER_MINUTE: "100000",
            TEST_KEYS_PER_MINUTE: "1000",
            TEST_KEYS_PER_DAY: "1000",
            RECIPIENT_MESSAGES_PER_MINUTE: "10000",
            RECIPIENT_MESSAGES_PER_DAY: "10000",
          },
        });
        database = await createDatabase({ databaseUrl: cluster.url, poolSize: 2 });
        db = withPrisma(database);
        const call = (path: string, init?: RequestInit) => fetch(`${server.baseUrl}${path}`, init);
        for (let index = 0; index < TEST_CLIENTS; index++) {
          const key = await createTestKey(call);
          senders.push({ projectId: key.project_id, apiKey: key.api_key, live: false });
        }
        const { project_id: projectId } = await createTestKey(call);
        const live = await claimWithLiveKey(
          { store: createStore(db), clock: systemClock, prisma: db.prisma },
          projectId,
          { paid: 10_000 },
        );
        senders.push({ projectId, apiKey: live.apiKey, live: true });
      } catch (error) {
        throw new Error(`${error instanceof Error ? error.message : String(error)}\n${cluster.logs()}`);
      }
    }, 240_000);

    afterAll(async () => {
      await db?.close().catch(() => undefined);
      await server?.cleanup().catch(() => undefined);
      await fake?.close().catch(() => undefined);
      await cluster?.stop();
    }, 60_000);

    async function request(
      what: Pick<Outcome, "key" | "project" | "to" | "apiKey" | "replay">,
    ): Promise<Outcome> {
      const outcome = {
        key: what.key,
        project: what.project,
        to: what.to,
        apiKey: what.apiKey,
        replay: what.replay,
      };
      const startedAt = Date.now();
      const recipient = body({ to: outcome.to });
      try {
        const response = await fetch(`${server.baseUrl}/v1/messages`, {
          ...sendMessageRequest(outcome.apiKey, outcome.key, recipient),
          signal: AbortSignal.timeout(REQUEST_BOUND_MS),
        });
        const json = (await response.json()) as { id?: string; error?: { code?: string } };
        return {
          ...outcome,
          startedAt,
          status: response.status,
          ...(json.id ? { id: json.id } : {}),
          ...(json.error?.code ? { code: json.error.code } : {}),
          retryAfter: response.headers.get("retry-after"),
        };
      } catch {
        return { ...outcome, startedAt, status: "no answer" };
      }
    }

    /** Each sender's loop: fresh keys, and (test keys) a replay of an acknowledged key of its own every fifth request. */
    function startLoad(): { stop(): Promise<Outcome[]> } {
      let running = true;
      const mine: Outcome[] = [];
      const loops = senders.map(async (sender, index) => {
        for (let turn = 0; running && turn < 100_000; turn++) {
          const acknowledged = mine.filter(
            (outcome) =>
              outcome.apiKey === sender.apiKey && typeof outcome.status === "number" && outcome.status < 300,
          );
          const replayOf = !sender.live && turn % 5 === 4 ? acknowledged[acknowledged.length - 1] : undefined;
          const to = sender.live
            ? `+9955${String(10_000_000 + ++liveNumber).slice(-8)}`
            : `+99555512${String(index).padStart(2, "0")}${String(turn % 100).padStart(2, "0")}`;
          const outcome = await request(
            replayOf
              ? { ...replayOf, replay: true }
              : {
                  key: crypto.randomUUID(),
                  project: sender.projectId,
                  to,
                  apiKey: sender.apiKey,
                  replay: false,
                },
          );
          mine.push(outcome);
          outcomes.push(outcome);
          await sleep(PAUSE_MS);
        }
      });
      return {
        async stop() {
          running = false;
          await Promise.all(loops);
          return mine;
        },
      };
    }

    /** Polls /readyz every 200 ms until stopped; the statuses it saw. */
    function watchReadiness(): { stop(): Promise<string[]> } {
      let running = true;
      const seen: string[] = [];
      const loop = (async () => {
        for (let turn = 0; running && turn < 10_000; turn++) {
          try {
            const response = await fetch(`${server.baseUrl}/readyz`, {
              signal: AbortSignal.timeout(REQUEST_BOUND_MS),
            });
            seen.push(((await response.json()) as { status: string }).status);
          } catch {
            seen.push("no answer");
          }
          await sleep(200);
        }
      })();
      return {
        async stop() {
          running = false;
          await loop;
          return seen;
        },
      };
    }

    async function drill(fault: "kill" | "freeze") {
      const before = await cluster.healthy();
      // The shipped template's switch (deploy/patroni/patroni.yml): the service's relaxed commits commit like
      // any other, so each acknowledged send is on the synchronous standby. Without it the drill lost
      // acknowledged sends (a relaxed commit on the old primary, "made durable" by a flush on the new one).
      const [setting] = await database.query<{ value: string | null }>(
        "SELECT current_setting('sms.synchronous_commit', true) AS value",
      );
      expect(setting?.value).toBe("on");
      const load = startLoad();
      const readiness = watchReadiness();
      let mine: Outcome[] = [];
      let recoveredMs: number | undefined;
      let faultAt = 0;
      try {
        // Steady sends first, so the fault lands among them.
        for (
          let turn = 0;
          turn < 300 && outcomes.filter((outcome) => outcome.status === 201).length < 20;
          turn++
        ) {
          await sleep(100);
        }
        faultAt = Date.now();
        faults.push(faultAt);
        if (fault === "kill") cluster.killNode(before.leader);
        else cluster.freezePostgres(before.leader);
        // The first fresh send started after the fault that succeeded: the service writes again.
        for (let turn = 0; turn < 600 && recoveredMs === undefined; turn++) {
          const first = outcomes.find(
            (outcome) => !outcome.replay && outcome.startedAt > faultAt && outcome.status === 201,
          );
          if (first) recoveredMs = first.startedAt - faultAt;
          else await sleep(100);
        }
        // A little more load on the new primary.
        const afterRecovery = outcomes.length;
        for (let turn = 0; turn < 200 && outcomes.length < afterRecovery + 20; turn++) await sleep(100);
      } finally {
        mine = await load.stop();
        const seen = await readiness.stop();
        if (fault === "freeze") cluster.thawPostgres(before.leader);
        else cluster.startNode(before.leader);
        console.info(`failover drill (${fault}): the service wrote again ${recoveredMs} ms after the fault`);
        expect(seen).toContain("not_ready");
      }
      expect(recoveredMs, `no write within ${WRITES_AGAIN_WITHIN_MS} ms\n${cluster.logs()}`).toBeDefined();
      expect(recoveredMs).toBeLessThan(WRITES_AGAIN_WITHIN_MS);

      // Patroni promoted the standby; the old primary rejoins as its synchronous standby.
      const after = await cluster.healthy(120_000);
      expect(after).toEqual({ leader: before.standby, standby: before.leader });
      const members = await cluster.members();
      const leader = members.find((member) => member.name === after.leader);
      const standby = members.find((member) => member.name === after.standby);
      expect(standby?.timeline).toBe(leader?.timeline);
      const replication = await database.query<{ application_name: string; sync_state: string }>(
        "SELECT application_name, sync_state FROM pg_stat_replication",
      );
      expect(replication).toEqual([{ application_name: before.leader, sync_state: "sync" }]);

      // Every answer: a success or the documented outage; none hung.
      const unexpected = mine.filter(
        (outcome) =>
          !(outcome.status === 201 || outcome.status === 200) &&
          !(outcome.status === 500 && outcome.code === "internal_error" && outcome.retryAfter),
      );
      expect(unexpected).toEqual([]);
      expect(mine.some((outcome) => outcome.status === 500)).toBe(true);
      return mine;
    }

    async function settle(mine: Outcome[]) {
      // The keys that got the outage, asked again: each now has its one answer (at most one message).
      for (const outcome of mine.filter((candidate) => candidate.status === 500)) {
        let retried = await request({ ...outcome, replay: true });
        for (let turn = 0; turn < 40 && retried.status === 500; turn++) {
          await sleep(1_000);
          retried = await request({ ...outcome, replay: true });
        }
        expect([200, 201]).toContain(retried.status);
        outcomes.push(retried);
      }
    }

    async function invariants() {
      const call = (path: string, apiKey: string) =>
        fetch(`${server.baseUrl}${path}`, { headers: { Authorization: `Bearer ${apiKey}` } });
      // One message id per key, whatever the answer that carried it.
      const idsByKey = new Map<string, Set<string>>();
      for (const outcome of outcomes) {
        if (!outcome.id) continue;
        const ids = idsByKey.get(outcome.key) ?? new Set<string>();
        ids.add(outcome.id);
        idsByKey.set(outcome.key, ids);
      }
      expect([...idsByKey.values()].filter((ids) => ids.size > 1)).toEqual([]);
      // 0 acknowledged sends lost: each is readable with its status.
      const acknowledged = new Map<string, Outcome>();
      for (const outcome of outcomes) {
        if (outcome.id && (outcome.status === 201 || outcome.status === 200))
          acknowledged.set(outcome.id, outcome);
      }
      expect(acknowledged.size).toBeGreaterThan(40);
      for (const [id, outcome] of acknowledged) {
        const response = await call(`/v1/messages/${id}`, outcome.apiKey);
        expect(
          response.status,
          `${id}: ${JSON.stringify({ ...outcome, apiKey: undefined, live: senders.find((sender) => sender.apiKey === outcome.apiKey)?.live, faults })}`,
        ).toBe(200);
        const message = (await response.json()) as { id: string; status: string };
        expect(message.id).toBe(id);
        expect(["queued", "submitted", "delivered", "undeliverable", "failed", "unknown"]).toContain(
          message.status,
        );
      }
      // No key with two messages: every message has its idempotency record, every record one message.
      const counts = await database.query<{
        project_id: string;
        messages: string;
        records: string;
        orphans: string;
      }>(
        `SELECT p.id AS project_id,
              (SELECT count(*) FROM messages m WHERE m.project_id = p.id) AS messages,
              (SELECT count(*) FROM idempotency_records r WHERE r.project_id = p.id) AS records,
              (SELECT count(*) FROM idempotency_records r
                 WHERE r.project_id = p.id
                   AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = r.message_id)) AS orphans
       FROM projects p WHERE p.id = ANY($1::text[])`,
        [senders.map((sender) => sender.projectId)],
      );
      expect(counts).toHaveLength(senders.length);
      for (const row of counts) {
        expect(row, row.project_id).toMatchObject({ messages: row.records, orphans: "0" });
      }
      const duplicates = await database.query(
        `SELECT project_id, mode, key FROM idempotency_records GROUP BY project_id, mode, key HAVING count(*) > 1`,
      );
      expect(duplicates).toEqual([]);
      // uBill was never asked twice for one key: each live key had its own number.
      const perNumber = new Map<string, number>();
      for (const send of fake.sends()) {
        for (const number of (send.json as { numbers?: number[] }).numbers ?? []) {
          perNumber.set(String(number), (perNumber.get(String(number)) ?? 0) + 1);
        }
      }
      expect(perNumber.size).toBeGreaterThan(0);
      expect([...perNumber].filter(([, count]) => count > 1)).toEqual([]);
      // Ledger = cached balance, per project.
      const ledger = await database.query<{ id: string; balance: number; sum: string }>(
        `SELECT p.id, p.credit_balance AS balance, COALESCE(sum(l.amount), 0) AS sum
       FROM projects p LEFT JOIN credit_ledger l ON l.project_id = p.id
       WHERE p.id = ANY($1::text[]) GROUP BY p.id, p.credit_balance`,
        [senders.map((sender) => sender.projectId)],
      );
      expect(ledger).toHaveLength(senders.length);
      for (const row of ledger) expect(Number(row.sum), row.id).toBe(row.balance);
    }

    it("A: the primary's machine dies (kill -9 of its Patroni and postmaster): the standby takes over, nothing acknowledged is lost", async () => {
      const mine = await drill("kill");
      await settle(mine);
      await invariants();
    }, 300_000);

    it("B: the primary's postmaster and children are frozen (SIGSTOP): the standby takes over, the thawed one rejoins", async () => {
      const mine = await drill("freeze");
      await settle(mine);
      await invariants();
    }, 300_000);
  },
);
