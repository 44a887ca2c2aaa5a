// openReadReplica against a real streaming standby (testing/replica.ts): which
// server answered is told by pg_is_in_recovery(), true on the standby only.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDatabase, type Database } from "./database.ts";
import { openReadReplica, type ReadFallbackReason, type ReadReplica } from "./read-replica.ts";
import { replicationLagSeconds, serverTimeline } from "./server-status.ts";
import {
  createDatabaseProxy,
  type DatabaseProxy,
  type ReplicatedPostgres,
  replicaHarnessAvailable,
  startReplicatedPostgres,
} from "./testing/index.ts";

const quiet = { info() {}, warn() {}, error() {} };
const WHO = "SELECT pg_is_in_recovery() AS standby";

async function servedBy(sql: { query: Database["query"] }): Promise<"replica" | "primary"> {
  const [row] = await sql.query<{ standby: boolean }>(WHO);
  return row?.standby ? "replica" : "primary";
}

describe.runIf(replicaHarnessAvailable())("a read replica", () => {
  let cluster: ReplicatedPostgres;
  let primary: Database;
  let proxy: DatabaseProxy;
  let replica: ReadReplica;
  const fallbacks: ReadFallbackReason[] = [];
  // The breaker's clock, moved by hand.
  let clockMs = 0;

  beforeAll(async () => {
    cluster = await startReplicatedPostgres();
    primary = await createDatabase({ databaseUrl: cluster.primaryUrl, logger: quiet });
    await primary.query("CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL)");
    await primary.query("INSERT INTO notes VALUES (1, 'first')");
    await cluster.caughtUp();
    // Through a proxy, so a test can also cut the replica off without stopping it.
    proxy = await createDatabaseProxy(cluster.replicaUrl);
    replica = await openReadReplica({
      replicaUrl: proxy.urlFor(cluster.replicaUrl),
      primary,
      retryAfterMs: 5_000,
      monotonicMs: () => clockMs,
      connectionTimeoutMs: 1_000,
      queryTimeoutMs: 1_000,
      logger: quiet,
      onFallback: (reason) => fallbacks.push(reason),
    });
  }, 120_000);

  afterAll(async () => {
    await replica?.close();
    await primary?.close();
    await proxy?.close();
    await cluster?.stop();
  });

  it("serves reads from the standby, which lags while its replay is paused", async () => {
    expect(await servedBy(replica)).toBe("replica");
    await cluster.pauseReplay();
    try {
      await primary.query("UPDATE notes SET body = 'second' WHERE id = 1");
      expect(await replica.query("SELECT body FROM notes WHERE id = 1")).toEqual([{ body: "first" }]);
      expect(await primary.query("SELECT body FROM notes WHERE id = 1")).toEqual([{ body: "second" }]);
    } finally {
      await cluster.resumeReplay();
    }
    await cluster.caughtUp();
    expect(await replica.query("SELECT body FROM notes WHERE id = 1")).toEqual([{ body: "second" }]);
    expect(fallbacks).toEqual([]);
  });

  it("runs a statement the standby fails on the primary, without skipping the standby after", async () => {
    await cluster.pauseReplay();
    try {
      await primary.query("CREATE TABLE later (id int)");
      await primary.query("INSERT INTO later VALUES (7)");
      // The standby has not replayed the table yet: its error becomes the primary's answer.
      expect(await replica.query("SELECT id FROM later")).toEqual([{ id: 7 }]);
      expect(fallbacks).toEqual(["replica_error"]);
      expect(replica.bypassed()).toBe(false);
      expect(await servedBy(replica)).toBe("replica");
    } finally {
      await cluster.resumeReplay();
      fallbacks.length = 0;
    }
  });

  it("sends reads to the primary while the standby is down, trying it again after retryAfterMs", async () => {
    await cluster.stopReplica();
    try {
      expect(await servedBy(replica)).toBe("primary");
      expect(replica.bypassed()).toBe(true);
      expect(fallbacks).toEqual(["replica_error"]);
      // While the breaker is open, the replica is not even tried: no new connection reaches it.
      const accepted = proxy.accepted;
      expect(await servedBy(replica)).toBe("primary");
      expect(await servedBy(replica)).toBe("primary");
      expect(proxy.accepted).toBe(accepted);
      expect(fallbacks).toEqual(["replica_error", "replica_error", "replica_error"]);
    } finally {
      await cluster.startReplica();
    }
    // Still within retryAfterMs: the primary, though the standby is back.
    expect(await servedBy(replica)).toBe("primary");
    clockMs += 5_000;
    await cluster.caughtUp();
    expect(await servedBy(replica)).toBe("replica");
    expect(replica.bypassed()).toBe(false);
    fallbacks.length = 0;
  });

  it("does not wait on a silent standby once per read: one read finds out, the rest skip it", async () => {
    proxy.freeze();
    try {
      // Nothing answers: the first read waits for its deadline, then runs on the primary.
      expect(await servedBy(replica)).toBe("primary");
      expect(replica.bypassed()).toBe(true);
      const accepted = proxy.accepted;
      const answers = await Promise.all(Array.from({ length: 5 }, () => servedBy(replica)));
      expect(answers).toEqual(Array(5).fill("primary"));
      expect(proxy.accepted).toBe(accepted);
      expect(fallbacks).toHaveLength(6);
      expect(new Set(fallbacks)).toEqual(new Set(["replica_error"]));
    } finally {
      proxy.thaw();
      fallbacks.length = 0;
    }
  });

  it("skips a standby that lacks writes older than maxLagMs, but not one whose paused replay lacks nothing", async () => {
    // issue 53 G4: past the read-your-writes window a row the standby lacks would be "not found".
    const WINDOW_MS = 1_000;
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const reasons: ReadFallbackReason[] = [];
    const lines: string[] = [];
    const lagging = await openReadReplica({
      replicaUrl: cluster.replicaUrl,
      primary,
      maxLagMs: WINDOW_MS,
      logger: { ...quiet, info: (_obj, msg) => lines.push(msg), warn: (_obj, msg) => lines.push(msg) },
      onFallback: (reason) => reasons.push(reason),
    });
    const standby = await createDatabase({ databaseUrl: cluster.replicaUrl, logger: quiet, poolSize: 1 });
    try {
      await primary.query("UPDATE notes SET body = 'replayed' WHERE id = 1");
      await cluster.caughtUp();
      // The last transaction the standby replays is older than the window when its replay is paused …
      await sleep(WINDOW_MS + 200);
      await cluster.caughtUp();
      await cluster.pauseReplay();
      try {
        const [age] = await standby.query<{ ms: number }>(
          "SELECT (extract(epoch FROM now() - pg_last_xact_replay_timestamp()) * 1000)::float8 AS ms",
        );
        expect(Number(age?.ms)).toBeGreaterThan(WINDOW_MS);
        // … yet it lacks nothing: it serves the reads, however long it stays paused.
        expect(await servedBy(lagging)).toBe("replica");
        expect(lagging.behind()).toBe(false);
        // A write it lacks, once older than the window: reads go to the primary, which has it.
        await primary.query("UPDATE notes SET body = 'unreplayed' WHERE id = 1");
        await sleep(WINDOW_MS + 200);
        expect(await lagging.query("SELECT body FROM notes WHERE id = 1")).toEqual([{ body: "unreplayed" }]);
        expect(await servedBy(lagging)).toBe("primary");
        expect(lagging.behind()).toBe(true);
        expect(reasons).toEqual(["replica_behind", "replica_behind"]);
      } finally {
        await cluster.resumeReplay();
      }
      await cluster.caughtUp();
      // Caught up: the next measurement (at most a quarter of the window later) sends reads to it again.
      await expect.poll(() => servedBy(lagging), { timeout: 10_000, interval: 50 }).toBe("replica");
      expect(lagging.behind()).toBe(false);
      // Said once each way, not per read.
      expect(lines.filter((line) => line.includes("further behind"))).toHaveLength(1);
      expect(lines.filter((line) => line.includes("has caught up"))).toHaveLength(1);
      expect(fallbacks).toEqual([]);
    } finally {
      await standby.close();
      await lagging.close();
    }
  });

  // The replica lag and failover alerts' metrics (sms_db_replica_lag_seconds, sms_db_timeline).
  it("reports the standby's replay lag, asked of the standby even when reads fall back", async () => {
    await cluster.caughtUp();
    expect(await replica.lagSeconds()).toBe(0);
    await cluster.pauseReplay();
    try {
      await primary.query("UPDATE notes SET body = 'lagging' WHERE id = 1");
      // Received, not replayed: the lag is the age of the last transaction it did replay.
      await expect.poll(() => replica.lagSeconds(), { timeout: 15_000, interval: 100 }).toBeGreaterThan(0);
      expect(await replicationLagSeconds(primary, primary)).toBeNull();
    } finally {
      await cluster.resumeReplay();
    }
    await cluster.caughtUp();
    expect(await replica.lagSeconds()).toBe(0);
  });

  it("reads the primary's timeline, which a promotion moves on; a standby has none (last: it promotes the standby)", async () => {
    const standby = await createDatabase({ databaseUrl: cluster.replicaUrl, logger: quiet });
    try {
      const before = await serverTimeline(primary);
      expect(before).toBeGreaterThanOrEqual(1);
      expect(await serverTimeline(standby)).toBeNull();
      await standby.query("SELECT pg_promote(true, 30)");
      expect(await serverTimeline(standby)).toBe((before ?? 0) + 1);
      expect(await replicationLagSeconds(standby, standby)).toBeNull();
    } finally {
      await standby.close();
    }
  });
});
