// The restore drill (issue 51, item 4), on PostgreSQL through the real Deno
// service: a cluster archiving every WAL segment with pgBackRest
// (@sms/db/testing startArchivedPostgres, configured from deploy/pgbackrest/),
// sends with Idempotency-Keys from a test key and from a claimed project's
// live key (credits spent through a fake uBill), a full backup taken while
// the sends go on, more sends, the target time, more sends (and a key) after
// it; then `pgbackrest restore --type=time --target-action=promote` into a new
// cluster and the service started on it with the same keyring. What the
// restored service must show: every message acknowledged before the target as
// it was, nothing acknowledged after it, keys that authenticate, replays that
// answer 200 with the original message, and a ledger that sums to every
// project's balance (the balance at the target).
import { generateKeySpec } from "@sms/crypto";
import { createDatabase } from "@sms/db";
import {
  type ArchivedPostgres,
  type BackupSet,
  backupHarnessAvailable,
  type PrismaDatabase,
  type RestoredPostgres,
  startArchivedPostgres,
  withPrisma,
} from "@sms/db/testing";
import { createStore, projectBalance, systemClock } from "@sms/domain";
import { type FakeUbill, startFakeUbill } from "@sms/provider-ubill/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestKey, type ServerProcess, sendMessageRequest, startServer } from "../harness.ts";
import { claimWithLiveKey } from "../support/live-projects.ts";
import { body } from "../support/messages.ts";

const UBILL_KEY = "ubill-restore-secret-7d3a90";
/** The keyring both services share: a database backup does not bring it back (docs/operations.md). */
const KEYRING = generateKeySpec("restore-e2e");
/** Sends while the backup runs, at most (it usually takes a few seconds). */
const MAX_SENDS_DURING_BACKUP = 20;

type Message = { id: string; status: string } & Record<string, unknown>;
type Sent = { key: string; idempotencyKey: string; to: string; message: Message };

describe.runIf(backupHarnessAvailable())(
  "restore drill: pgBackRest, a point in time, the service on it",
  () => {
    let archived: ArchivedPostgres;
    let restored: RestoredPostgres;
    let fake: FakeUbill;
    let original: ServerProcess;
    let service: ServerProcess;
    let db: PrismaDatabase;
    let fullBackup: BackupSet;
    let target = "";
    let testKey = "";
    let liveKey = "";
    let liveProjectId = "";
    let keyAfterTarget = "";
    let balanceAtTarget = 0;
    let balanceAtEnd = 0;
    let ubillSendsBeforeRestore = 0;
    const beforeTarget: Sent[] = [];
    const afterTarget: Sent[] = [];
    let duringBackup = 0;
    /** Sends acknowledged while pgbackrest backup had not finished yet. */
    let ackedWhileBackingUp = 0;
    let numbers = 0;

    const env = {
      MESSAGE_ENCRYPTION_KEYS: KEYRING,
      // Nothing changes a message behind the test's back: what was read before the target is what a restore shows.
      JOBS_ENABLED: "false",
      MESSAGES_PER_MINUTE: "10000",
      TEST_KEYS_PER_MINUTE: "1000",
      TEST_KEYS_PER_DAY: "1000",
      RECIPIENT_MESSAGES_PER_MINUTE: "10000",
      RECIPIENT_MESSAGES_PER_DAY: "10000",
      UBILL_API_KEY: UBILL_KEY,
      UBILL_DEFAULT_BRAND_ID: "1",
    };

    async function send(server: ServerProcess, key: string, idempotencyKey = crypto.randomUUID()) {
      numbers++;
      const to = `+99555577${String(numbers).padStart(4, "0")}`;
      const response = await fetch(
        `${server.baseUrl}/v1/messages`,
        sendMessageRequest(key, idempotencyKey, body({ to })),
      );
      return { status: response.status, json: (await response.json()) as Message, idempotencyKey, to };
    }
    /** A send that must be acknowledged (201): what the drill then expects back, or not. */
    async function acknowledged(key: string): Promise<Sent> {
      const sent = await send(original, key);
      if (sent.status !== 201) throw new Error(`send: ${sent.status} ${JSON.stringify(sent.json)}`);
      return { key, idempotencyKey: sent.idempotencyKey, to: sent.to, message: sent.json };
    }
    /** GET /v1/messages/{id} on `server`: its status and body. */
    async function read(server: ServerProcess, key: string, id: string) {
      const response = await fetch(`${server.baseUrl}/v1/messages/${id}`, {
        headers: { Authorization: `Bearer ${key}` },
      });
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    }
    async function balance(database: PrismaDatabase, projectId: string): Promise<number> {
      const result = await projectBalance({ store: createStore(database) }, { projectId });
      if (!result.ok) throw new Error(`no project ${projectId}`);
      return result.balance;
    }

    beforeAll(async () => {
      archived = await startArchivedPostgres();
      fake = await startFakeUbill({ apiKey: UBILL_KEY });
      original = await startServer({
        backend: "postgres",
        databaseUrl: archived.url,
        env: { ...env, UBILL_BASE_URL: fake.baseUrl },
      });
      db = withPrisma(await createDatabase({ databaseUrl: archived.url, poolSize: 2 }));
      const call = (path: string, init?: RequestInit) => fetch(`${original.baseUrl}${path}`, init);
      testKey = (await createTestKey(call)).api_key;
      const live = await claimWithLiveKey(
        { store: createStore(db), clock: systemClock, prisma: db.prisma },
        (await createTestKey(call)).project_id,
        // Enough for every live send the drill can make (3 + MAX_SENDS_DURING_BACKUP / 2 + 500): on a loaded
        // machine the sends after the backup go on longer, and 100 credits ran out (402).
        { paid: 1_000 },
      );
      liveKey = live.apiKey;
      liveProjectId = live.projectId;

      // Before the backup.
      for (let i = 0; i < 3; i++) beforeTarget.push(await acknowledged(testKey), await acknowledged(liveKey));
      // Back up, keep sending: the sends go on while pgBackRest copies the cluster.
      let backingUp = true;
      const backup = archived.backup("full").finally(() => {
        backingUp = false;
      });
      while (backingUp && duringBackup < MAX_SENDS_DURING_BACKUP) {
        beforeTarget.push(await acknowledged(duringBackup % 2 === 0 ? testKey : liveKey));
        duringBackup++;
        if (backingUp) ackedWhileBackingUp++;
      }
      fullBackup = await backup;
      // After the backup, before the target. pgBackRest records the backup's stop time in whole
      // seconds, and a point-in-time restore needs a backup that stopped before the target: the
      // sends go on until the clock (this machine's, the server's too) has passed it.
      for (let i = 0; i < 2 || (Date.now() < fullBackup.stoppedAt.getTime() + 1_500 && i < 500); i++) {
        beforeTarget.push(await acknowledged(testKey), await acknowledged(liveKey));
      }
      // What each message looks like at the target (nothing changes them: no jobs run).
      for (const sent of beforeTarget) {
        const now = await read(original, sent.key, sent.message.id);
        expect(now.status).toBe(200);
        sent.message = now.json as Message;
      }
      balanceAtTarget = await balance(db, liveProjectId);

      // The target: the server's clock after every acknowledgement above, before every send below.
      target = await archived.serverTime();

      for (let i = 0; i < 3; i++) afterTarget.push(await acknowledged(testKey), await acknowledged(liveKey));
      keyAfterTarget = (await createTestKey(call)).api_key;
      afterTarget.push(await acknowledged(keyAfterTarget));
      balanceAtEnd = await balance(db, liveProjectId);
      ubillSendsBeforeRestore = fake.sends().length;
      // Everything written so far is in the repository, the commits after the target included
      // (recovery stops at the first one after it).
      await archived.archiveCurrentWal();

      restored = await archived.restoreToTime(target);
      service = await startServer({
        backend: "postgres",
        databaseUrl: restored.url,
        env: { ...env, UBILL_BASE_URL: fake.baseUrl },
      });
    }, 300_000);

    afterAll(async () => {
      await service?.cleanup();
      await original?.cleanup();
      await db?.close();
      await restored?.stop();
      await archived?.stop();
      await fake?.close();
    });

    it("took a full backup while sends were acknowledged, and pgbackrest check passes on the repository", async () => {
      expect(ackedWhileBackingUp).toBeGreaterThan(0);
      expect((await archived.backups()).map((set) => [set.label, set.type])).toEqual([
        [fullBackup.label, "full"],
      ]);
      await archived.check();
    });

    it("serves from the restored cluster: /readyz is ready on its own database", async () => {
      expect(service.databaseUrl).toBe(restored.url);
      expect(restored.url).not.toBe(archived.url);
      const ready = await fetch(`${service.baseUrl}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: "ready", database: "ok" });
    });

    it("reads every message acknowledged before the target as it was then, status included", async () => {
      expect(beforeTarget.length).toBeGreaterThanOrEqual(10 + duringBackup);
      for (const sent of beforeTarget) {
        const found = await read(service, sent.key, sent.message.id);
        expect(found.status).toBe(200);
        expect(found.json).toEqual(sent.message);
      }
      expect(new Set(beforeTarget.map((sent) => sent.message.status))).toEqual(new Set(["submitted"]));
    });

    it("has none of the messages acknowledged after the target (404), nor the key created after it (401)", async () => {
      for (const sent of afterTarget.filter((sent) => sent.key !== keyAfterTarget)) {
        const missing = await read(service, sent.key, sent.message.id);
        expect(missing.status).toBe(404);
        expect(missing.json).toMatchObject({ error: { code: "message_not_found" } });
        // The original still has it: the restore went back in time, nothing was lost by accident.
        expect((await read(original, sent.key, sent.message.id)).status).toBe(200);
      }
      const unknown = await send(service, keyAfterTarget);
      expect(unknown.status).toBe(401);
      expect(unknown.json).toMatchObject({ error: { code: "invalid_api_key" } });
    });

    it("answers an idempotent replay of a pre-target send with 200 and the original message, uBill not asked again", async () => {
      for (const sent of [beforeTarget[0], beforeTarget[1], beforeTarget.at(-1)]) {
        if (!sent) throw new Error("no send before the target");
        const replay = await fetch(
          `${service.baseUrl}/v1/messages`,
          sendMessageRequest(sent.key, sent.idempotencyKey, body({ to: sent.to })),
        );
        expect(replay.status).toBe(200);
        expect(((await replay.json()) as Message).id).toBe(sent.message.id);
      }
      expect(fake.sends()).toHaveLength(ubillSendsBeforeRestore);
    });

    it("authenticates the test key and the live key: both send on the restored service", async () => {
      for (const key of [testKey, liveKey]) {
        const sent = await send(service, key);
        expect(sent.status).toBe(201);
        expect((await read(service, key, sent.json.id)).status).toBe(200);
      }
      expect(fake.sends()).toHaveLength(ubillSendsBeforeRestore + 1);
    });

    it("keeps the ledger and the balances in step: each project's entries sum to its balance, the target's", async () => {
      const database = await createDatabase({ databaseUrl: restored.url, poolSize: 1 });
      try {
        const rows = await database.query<{ id: string; balance: number; ledger: number }>(
          `SELECT p.id, p.credit_balance AS balance, COALESCE(SUM(l.amount), 0)::int AS ledger
           FROM projects p LEFT JOIN credit_ledger l ON l.project_id = p.id
          GROUP BY p.id, p.credit_balance ORDER BY p.id`,
        );
        // The test key's project, the live one (the key made after the target has none here).
        expect(rows).toHaveLength(2);
        for (const row of rows) expect(row.ledger).toBe(row.balance);
        const live = rows.find((row) => row.id === liveProjectId);
        // The live key's sends after the target were charged on the original only; the one
        // sent on the restored service (the test above) on the restored one only.
        expect(balanceAtEnd).toBe(balanceAtTarget - 3);
        expect(live?.balance).toBe(balanceAtTarget - 1);
      } finally {
        await database.close();
      }
    });

    it("needs the keyring too: the same cluster under another MESSAGE_ENCRYPTION_KEYS refuses the replays (409)", async () => {
      const sent = beforeTarget[0];
      if (!sent) throw new Error("no send before the target");
      const stranger = await startServer({
        backend: "postgres",
        databaseUrl: restored.url,
        env: {
          ...env,
          UBILL_BASE_URL: fake.baseUrl,
          MESSAGE_ENCRYPTION_KEYS: generateKeySpec("not-the-one"),
        },
      });
      try {
        // Reads need no key (the number is stored masked beside its ciphertext)...
        const found = await read(stranger, sent.key, sent.message.id);
        expect(found.status).toBe(200);
        expect(found.json).toEqual(sent.message);
        // ...but the idempotency fingerprints (HMAC under the keyring) no longer match: a retry of an
        // acknowledged send is refused instead of answered with its message.
        const replay = await fetch(
          `${stranger.baseUrl}/v1/messages`,
          sendMessageRequest(sent.key, sent.idempotencyKey, body({ to: sent.to })),
        );
        expect(replay.status).toBe(409);
        expect(await replay.json()).toMatchObject({ error: { code: "idempotency_key_reused" } });
      } finally {
        await stranger.cleanup();
      }
    });
  },
);
