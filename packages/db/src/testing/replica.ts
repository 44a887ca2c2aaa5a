// A real streaming replica for the read-replica tests: a PostgreSQL primary of
// the tests' own (initdb in a temporary directory) and a hot standby made from
// it with `pg_basebackup -R`, each on a free port, both removed by stop().
//
// Why a primary of its own rather than the machine's PostgreSQL: a stock
// Debian cluster (as CI has it) trusts 127.0.0.1 for `all` databases, which
// does not include replication connections, so pg_basebackup from it is
// refused; changing its pg_hba.conf is not a test's business. initdb's own
// pg_hba.conf trusts replication from 127.0.0.1. The binaries are Debian's
// (/usr/lib/postgresql/<version>/bin). PostgreSQL refuses to run as root: as
// root, the clusters belong to and run as the `postgres` user.
//
// Where the binaries are absent the tests are skipped with a warning; under
// CI that is an error instead.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { appendFile, chown, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import pg from "pg";

const TOOLS = ["initdb", "pg_ctl", "pg_basebackup", "postgres"] as const;

/** The newest PostgreSQL's bin directory that has every tool the harness runs, or null. */
export function findBinaries(): string | null {
  const candidates: string[] = [];
  if (process.env.PG_BINDIR) candidates.push(process.env.PG_BINDIR);
  const debian = "/usr/lib/postgresql";
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((version) => join(debian, version, "bin")));
  }
  try {
    candidates.push(execFileSync("pg_config", ["--bindir"], { encoding: "utf8" }).trim());
  } catch {
    // no pg_config on PATH
  }
  return candidates.find((dir) => TOOLS.every((tool) => existsSync(join(dir, tool)))) ?? null;
}

/**
 * Whether the replica tests can run here: PostgreSQL's server binaries are
 * installed. Under CI their absence is an error, not a skip.
 */
export function replicaHarnessAvailable(env: Record<string, string | undefined> = process.env): boolean {
  if (findBinaries() !== null) return true;
  const message = `PostgreSQL's server binaries (${TOOLS.join(", ")}) are not installed`;
  if (env.CI) throw new Error(`${message}; CI is set, so the read-replica tests may not be skipped`);
  console.warn(`skipping the read-replica tests: ${message} (apt-get install postgresql)`);
  return false;
}

export type ReplicatedPostgres = {
  /** The primary's `postgres` database (migrate it; the standby follows). */
  primaryUrl: string;
  /** The same database on the hot standby (read-only). */
  replicaUrl: string;
  /** Waits until the standby has replayed everything the primary wrote so far. */
  caughtUp(): Promise<void>;
  /** Stops the standby's replay (pg_wal_replay_pause) and waits until it has stopped: what it shows is frozen. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** Runs `work` while the standby replays nothing (caught up first); afterwards it catches up again. */
  whileLagging(work: () => Promise<void>): Promise<void>;
  /** Stops the standby (pg_ctl stop -m fast): connections to it are refused until startReplica(). */
  stopReplica(): Promise<void>;
  startReplica(): Promise<void>;
  /** Stops both servers and removes their directories. Safe to call twice. */
  stop(): Promise<void>;
};

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The uid and gid to run PostgreSQL as: ours, or the `postgres` user's when we are root. */
export function serverUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  try {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    return { uid, gid };
  } catch {
    throw new Error("running as root, and there is no `postgres` user to run the test PostgreSQL as");
  }
}

export async function chownTree(path: string, owner: { uid: number; gid: number }): Promise<void> {
  await chown(path, owner.uid, owner.gid);
  for (const entry of await readdir(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) await chownTree(child, owner);
    else await chown(child, owner.uid, owner.gid);
  }
}

/** Runs one of the server tools to completion (as the server's user), failing with its output. */
export function run(bin: string, tool: string, args: string[], owner: { uid: number; gid: number } | null) {
  return new Promise<void>((resolve, reject) => {
    const child: ChildProcess = spawn(join(bin, tool), args, {
      stdio: ["ignore", "pipe", "pipe"],
      ...(owner ? { uid: owner.uid, gid: owner.gid } : {}),
      // Not the caller's PG* variables (PGPORT, PGDATABASE…): every address is given explicitly.
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LANG: "C", LC_ALL: "C" },
    });
    const output: string[] = [];
    child.stdout?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
    child.once("error", reject);
    child.once("exit", (code) => {
      if (code === 0) resolve();
      else reject(new Error(`${tool} ${args.join(" ")} exited with ${code}:\n${output.join("")}`));
    });
  });
}

export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on("error", () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Settings for a throwaway cluster: fast, small, no durability. */
export const CLUSTER_SETTINGS = [
  "listen_addresses = '127.0.0.1'",
  "fsync = off",
  "full_page_writes = off",
  "shared_buffers = 16MB",
  "max_connections = 60",
  "wal_level = replica",
  "max_wal_senders = 4",
  "wal_keep_size = 64MB",
  "hot_standby = on",
  // The standby's reads are not cancelled for rows the primary's vacuum removes.
  "hot_standby_feedback = on",
];

const DIR_PREFIX = "sms-replica-";
const STALE_AFTER_MS = 6 * 60 * 60 * 1000;
let staleSweep: Promise<void> | undefined;

/** Stops and removes the clusters of killed runs: directories of ours untouched for six hours. */
async function removeStaleClusters(bin: string, owner: { uid: number; gid: number } | null): Promise<void> {
  for (const name of await readdir(tmpdir()).catch(() => [] as string[])) {
    if (!name.startsWith(DIR_PREFIX)) continue;
    const dir = join(tmpdir(), name);
    const info = await stat(dir).catch(() => null);
    if (!info || Date.now() - info.mtimeMs < STALE_AFTER_MS) continue;
    for (const server of ["replica", "primary"]) {
      if (existsSync(join(dir, server, "postmaster.pid"))) {
        await run(bin, "pg_ctl", ["-D", join(dir, server), "-w", "stop", "-m", "immediate"], owner).catch(
          () => undefined,
        );
      }
    }
    await rm(dir, { recursive: true, force: true });
  }
}

/** Starts a primary and a streaming hot standby of it (see the top of this file). */
export async function startReplicatedPostgres(): Promise<ReplicatedPostgres> {
  const bin = findBinaries();
  if (!bin) throw new Error("PostgreSQL's server binaries are not installed (replicaHarnessAvailable)");
  const owner = serverUser();
  staleSweep ??= removeStaleClusters(bin, owner).catch(() => undefined);
  await staleSweep;
  const dir = await mkdtemp(join(tmpdir(), DIR_PREFIX));
  const primaryDir = join(dir, "primary");
  const replicaDir = join(dir, "replica");
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const url = (port: number) => `postgresql://postgres@127.0.0.1:${port}/postgres`;
  const primaryUrl = url(primaryPort);
  const replicaUrl = url(replicaPort);
  if (owner) await chownTree(dir, owner);

  const started = new Set<string>();
  const pgCtl = (dataDir: string, action: "start" | "stop", extra: string[] = []) =>
    run(
      bin,
      "pg_ctl",
      action === "start"
        ? [
            "-D",
            dataDir,
            "-l",
            join(dir, `${dataDir === primaryDir ? "primary" : "replica"}.log`),
            "-w",
            "start",
          ]
        : ["-D", dataDir, "-w", "stop", ...extra],
      owner,
    );
  const startServer = async (dataDir: string) => {
    await pgCtl(dataDir, "start");
    started.add(dataDir);
  };
  const stopServer = async (dataDir: string, mode: "fast" | "immediate") => {
    if (!started.has(dataDir)) return;
    await pgCtl(dataDir, "stop", ["-m", mode]);
    started.delete(dataDir);
  };

  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      await stopServer(replicaDir, "immediate").catch(() => undefined);
      await stopServer(primaryDir, "immediate").catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    })();
    return stopped;
  };

  try {
    await run(
      bin,
      "initdb",
      ["-D", primaryDir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"],
      owner,
    );
    await appendFile(
      join(primaryDir, "postgresql.conf"),
      [...CLUSTER_SETTINGS, `port = ${primaryPort}`, `unix_socket_directories = '${dir}'`, ""].join("\n"),
    );
    await startServer(primaryDir);
    // -R: standby.signal and primary_conninfo; -X stream: the WAL written meanwhile comes along.
    await run(
      bin,
      "pg_basebackup",
      [
        "-h",
        "127.0.0.1",
        "-p",
        String(primaryPort),
        "-U",
        "postgres",
        "-D",
        replicaDir,
        "-R",
        "-X",
        "stream",
      ],
      owner,
    );
    // The copied postgresql.conf names the primary's port; a later line wins.
    await appendFile(join(replicaDir, "postgresql.conf"), `port = ${replicaPort}\n`);
    await startServer(replicaDir);
  } catch (error) {
    await stop();
    throw error;
  }

  const caughtUp = async () => {
    const [{ lsn }] = (
      await withClient(primaryUrl, (client) =>
        client.query<{ lsn: string }>("SELECT pg_current_wal_insert_lsn() AS lsn"),
      )
    ).rows as [{ lsn: string }];
    await until("the standby has replayed the primary's WAL", () =>
      withClient(replicaUrl, async (client) => {
        const { rows } = await client.query<{ done: boolean }>(
          "SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done",
          [lsn],
        );
        return rows[0]?.done === true;
      }),
    );
  };

  const pauseReplay = async () => {
    await withClient(replicaUrl, async (client) => {
      await client.query("SELECT pg_wal_replay_pause()");
      await until("the standby's replay has paused", async () => {
        const { rows } = await client.query<{ state: string }>(
          "SELECT pg_get_wal_replay_pause_state() AS state",
        );
        return rows[0]?.state === "paused";
      });
    });
  };
  const resumeReplay = async () => {
    await withClient(replicaUrl, (client) => client.query("SELECT pg_wal_replay_resume()"));
  };

  return {
    primaryUrl,
    replicaUrl,
    caughtUp,
    pauseReplay,
    resumeReplay,
    async whileLagging(work) {
      await caughtUp();
      await pauseReplay();
      try {
        await work();
      } finally {
        await resumeReplay();
        await caughtUp();
      }
    },
    stopReplica: () => stopServer(replicaDir, "fast"),
    startReplica: () => startServer(replicaDir),
    stop,
  };
}
