// Reads from a replica (issue 26) over real HTTP through Deno: the service runs
// with DATABASE_URL on the harness's primary and DATABASE_READ_URL on its
// streaming standby (@sms/db/testing startReplicatedPostgres). GET
// /v1/messages/{id} is answered by the standby (its paused replay shows), a
// message sent while the standby lags is still found (read-your-writes), and a
// stopped standby leaves reads working, /readyz ready, and the fallbacks
// counted on the internal listener's /metrics.
import { createDatabase, type Database } from "@sms/db";
import { type ReplicatedPostgres, replicaHarnessAvailable, startReplicatedPostgres } from "@sms/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestKey, type ServerProcess, sendMessageRequest, startServer } from "./harness.ts";
import { body } from "./support/messages.ts";
import { type ReadFallbacks, readFallbacks } from "./support/read-fallbacks.ts";

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
});
