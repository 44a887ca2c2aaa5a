// Reads from a replica (issue 26) over real HTTP through Deno: the service runs
// with DATABASE_URL on the harness's primary and DATABASE_READ_URL on its
// streaming standby (@sms/db/testing startReplicatedPostgres). GET
// /v1/messages/{id} is answered by the standby (its paused replay shows), a
// message sent while the standby lags is still found (read-your-writes), and a
// stopped standby leaves reads working, /readyz ready, and the fallbacks
// counted on the internal listener's /metrics. A standby further behind than
// DATABASE_READ_FALLBACK_WINDOW_MS (its replay paused longer than a short
// window) is skipped: messages created meanwhile are found (200, not 404) once
// their ids are older than the window, counted as replica_behind, logged once.
import { idTimestamp } from "@sms/crypto";
import { createDatabase, type Database } from "@sms/db";
import { type ReplicatedPostgres, replicaHarnessAvailable, startReplicatedPostgres } from "@sms/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestKey, type ServerProcess, sendMessageRequest, startServer } from "../harness.ts";
import { body } from "../support/messages.ts";
import { type ReadFallbacks, readFallbacks } from "../support/read-fallbacks.ts";

const TOKEN = "replica-e2e-internal-token-0123456789abcdef";

describe.runIf(replicaHarnessAvailable())("reads from a replica over HTTP", () => {
  let cluster: ReplicatedPostgres;
  let server: ServerProcess;
  let primary: Database;
  let apiKey: string;
  let sent = 0;

  beforeAll(async () => {
    cluster = await startReplicatedPostgres();
    server = await startServer({
      backend: "postgres",
      databaseUrl: cluster.primaryUrl,
      internalToken: TOKEN,
      env: {
        DATABASE_READ_URL: cluster.replicaUrl,
        DATABASE_CONNECT_TIMEOUT_MS: "1000",
        // Nothing changes a message behind the test's back.
        JOBS_ENABLED: "false",
        MESSAGES_PER_MINUTE: "1000",
      },
    });
    primary = await createDatabase({ databaseUrl: cluster.primaryUrl, poolSize: 1 });
    apiKey = (await createTestKey((path, init) => fetch(`${server.baseUrl}${path}`, init))).api_key;
  }, 180_000);

  afterAll(async () => {
    await primary?.close();
    await server?.cleanup();
    await cluster?.stop();
  });

  async function send(): Promise<string> {
    sent++;
    const response = await fetch(
      `${server.baseUrl}/v1/messages`,
      sendMessageRequest(
        apiKey,
        crypto.randomUUID(),
        body({ to: `+99555520${String(sent).padStart(4, "0")}` }),
      ),
    );
    expect(response.status).toBe(201);
    return ((await response.json()) as { id: string }).id;
  }

  async function getMessage(id: string): Promise<{ status: number; json: Record<string, unknown> }> {
    const response = await fetch(`${server.baseUrl}/v1/messages/${id}`, {
      headers: { Authorization: `Bearer ${apiKey}` },
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  }

  async function fallbacks(): Promise<ReadFallbacks> {
    const response = await fetch(`${server.internalUrl}/metrics`, {
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    expect(response.status).toBe(200);
    return readFallbacks(await response.text());
  }

  /** A connection of the test's own to the standby. */
  async function withStandby<T>(work: (standby: Database) => Promise<T>): Promise<T> {
    const standby = await createDatabase({ databaseUrl: cluster.replicaUrl, poolSize: 1 });
    try {
      return await work(standby);
    } finally {
      await standby.close();
    }
  }

  it("answers GET /v1/messages/{id} from the standby: a change it has not replayed is not seen yet", async () => {
    const id = await send();
    // Replayed before the first read, so no read of this test needs the primary.
    await cluster.caughtUp();
    const start = await fallbacks();
    const before = await getMessage(id);
    expect(before.status).toBe(200);
    await cluster.whileLagging(async () => {
      // A change on the primary only (as a status update would be).
      await primary.query("UPDATE messages SET updated_at = updated_at + interval '1 hour' WHERE id = $1", [
        id,
      ]);
      const stale = await getMessage(id);
      expect(stale.status).toBe(200);
      expect(stale.json.updated_at).toBe(before.json.updated_at);
    });
    const caughtUp = await getMessage(id);
    expect(caughtUp.json.updated_at).not.toBe(before.json.updated_at);
    expect(await fallbacks()).toEqual(start);
  });

  it("finds a message sent while the standby lags (read-your-writes), counting the fallback", async () => {
    const start = await fallbacks();
    await cluster.whileLagging(async () => {
      const id = await send();
      const found = await getMessage(id);
      expect(found.status).toBe(200);
      expect(found.json.id).toBe(id);
      expect(await fallbacks()).toEqual({ ...start, not_found_recent: start.not_found_recent + 1 });
    });
  });

  it("keeps reads working and /readyz ready while the standby is down, counting replica_error", async () => {
    const id = await send();
    await cluster.caughtUp();
    const start = await fallbacks();
    await cluster.stopReplica();
    try {
      const found = await getMessage(id);
      expect(found.status).toBe(200);
      expect(found.json.id).toBe(id);
      const ready = await fetch(`${server.baseUrl}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: "ready", database: "ok" });
      expect((await getMessage(id)).status).toBe(200);
      const counted = await fallbacks();
      expect(counted.replica_error).toBe(start.replica_error + 2);
      expect(counted.not_found_recent).toBe(start.not_found_recent);
    } finally {
      await cluster.startReplica();
    }
  });

  describe("a standby further behind than the read-your-writes window", () => {
    // Short, so that the test waits out the window instead of a client's 30 s of polling.
    const WINDOW_MS = 2_000;
    const BEHIND_TOKEN = "replica-e2e-behind-internal-token-0123456789";
    const BEHIND_LOG = "the read replica is further behind than the read-your-writes window";
    let behindServer: ServerProcess;

    beforeAll(async () => {
      behindServer = await startServer({
        backend: "postgres",
        databaseUrl: cluster.primaryUrl,
        internalToken: BEHIND_TOKEN,
        env: {
          DATABASE_READ_URL: cluster.replicaUrl,
          DATABASE_READ_FALLBACK_WINDOW_MS: String(WINDOW_MS),
          DATABASE_CONNECT_TIMEOUT_MS: "1000",
          JOBS_ENABLED: "false",
          MESSAGES_PER_MINUTE: "1000",
        },
      });
    }, 120_000);
    afterAll(async () => {
      await behindServer?.cleanup();
    });

    const read = async (id: string) => {
      const response = await fetch(`${behindServer.baseUrl}/v1/messages/${id}`, {
        headers: { Authorization: `Bearer ${apiKey}` },
      });
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    };
    const metricsText = async () =>
      (
        await fetch(`${behindServer.internalUrl}/metrics`, {
          headers: { Authorization: `Bearer ${BEHIND_TOKEN}` },
        })
      ).text();
    const behindGauge = async () =>
      Number(/^sms_db_read_replica_behind (\S+)$/m.exec(await metricsText())?.[1] ?? Number.NaN);
    const logged = (text: string) => behindServer.output.filter((line) => line.includes(text)).length;

    it("reads on the primary past the window: messages created while replay was paused are 200, not 404, counted and logged once", async () => {
      const before = await send();
      await cluster.caughtUp();
      expect((await read(before)).status).toBe(200);
      const start = readFallbacks(await metricsText());
      await cluster.pauseReplay();
      try {
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) ids.push(await send());
        for (const id of ids) {
          expect((await primary.query("SELECT 1 FROM messages WHERE id = $1", [id])).length).toBe(1);
        }
        // Wait until every id is older than the window: read-your-writes no longer covers them.
        const newest = Math.max(...ids.map((id) => idTimestamp(id) ?? Number.POSITIVE_INFINITY));
        await new Promise((resolve) =>
          setTimeout(resolve, Math.max(0, newest + WINDOW_MS + 250 - Date.now())),
        );
        // The standby still lacks them (its replay is paused) …
        await withStandby(async (standby) => {
          for (const id of ids) {
            expect(await standby.query("SELECT 1 FROM messages WHERE id = $1", [id]), id).toEqual([]);
          }
        });
        // … and every read finds them all the same: the primary answers.
        for (const id of ids) {
          const found = await read(id);
          expect(found.status, id).toBe(200);
          expect(found.json.id).toBe(id);
        }
        // So does a message the standby has (it was replayed before the pause): every read goes to the primary.
        expect((await read(before)).status).toBe(200);
        const during = readFallbacks(await metricsText());
        expect(during.replica_behind - start.replica_behind).toBeGreaterThanOrEqual(ids.length + 1);
        expect(during.not_found_recent).toBe(start.not_found_recent);
        expect(during.replica_error).toBe(start.replica_error);
        expect(await behindGauge()).toBe(1);
        // One log line for the episode, not one per read.
        expect(logged(BEHIND_LOG)).toBe(1);
      } finally {
        await cluster.resumeReplay();
      }
      await cluster.caughtUp();
      // Caught up: within a measurement's interval the standby serves the reads again.
      await expect
        .poll(
          async () => {
            await read(before);
            return behindGauge();
          },
          { timeout: 15_000, interval: 100 },
        )
        .toBe(0);
      const after = readFallbacks(await metricsText());
      expect((await read(before)).status).toBe(200);
      expect(readFallbacks(await metricsText()).replica_behind).toBe(after.replica_behind);
      expect(logged("the read replica has caught up: reads go to it")).toBe(1);
      expect(logged(BEHIND_LOG)).toBe(1);
    });
  });
});
