// A real high-availability PostgreSQL for the failover drill: etcd (the DCS),
// two Patroni nodes (a primary and its synchronous standby, both made by
// Patroni: initdb, then a basebackup) and HAProxy routing to whichever node
// Patroni's REST API calls the primary, each on free loopback ports in a
// temporary directory. The configuration is the one that ships:
// deploy/patroni/patroni.yml, deploy/patroni/etcd.conf.yml and
// deploy/haproxy/postgres.cfg, rendered with this run's ports and paths.
//
// Debian's packages: patroni, etcd-server, haproxy, postgresql-15. PostgreSQL
// (and so Patroni) refuses to run as root: as root, the nodes run as the
// `postgres` user, as in replica.ts. Where a package is absent the tests are
// skipped with a warning; under CI that is an error instead.
//
// stop() kills every process it started (also frozen ones) and removes the
// directory (SMS_PATRONI_KEEP=1 keeps the directory, for a diagnosis);
// directories of killed runs are swept on the next start.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createWriteStream, existsSync, readFileSync } from "node:fs";
import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import pg from "pg";
// The replica harness's helpers: a free loopback port, the user PostgreSQL runs as, handing it a directory.
import { chownTree, freePort, serverUser } from "./replica.ts";

/** The repository's deploy/ directory, where the shipped templates live. */
export const DEPLOY_DIR = join(dirname(fileURLToPath(import.meta.url)), "../../../../deploy");
export const PATRONI_TEMPLATE = join(DEPLOY_DIR, "patroni/patroni.yml");
export const ETCD_TEMPLATE = join(DEPLOY_DIR, "patroni/etcd.conf.yml");
export const HAPROXY_TEMPLATE = join(DEPLOY_DIR, "haproxy/postgres.cfg");

const PG_BIN = "/usr/lib/postgresql/15/bin";
const PROGRAMS = {
  patroni: "/usr/bin/patroni",
  etcd: "/usr/bin/etcd",
  haproxy: "/usr/sbin/haproxy",
  postgres: join(PG_BIN, "postgres"),
  pg_rewind: join(PG_BIN, "pg_rewind"),
} as const;
const PACKAGES = "patroni etcd-server haproxy postgresql-15";

/**
 * Whether the failover tests can run here: Patroni, etcd, HAProxy and
 * PostgreSQL 15's server are installed. Under CI their absence is an error.
 */
export function patroniHarnessAvailable(env: Record<string, string | undefined> = process.env): boolean {
  const missing = Object.values(PROGRAMS).filter((path) => !existsSync(path));
  if (missing.length === 0) return true;
  const message = `${missing.join(", ")} not installed`;
  if (env.CI) throw new Error(`${message}; CI is set, so the failover tests may not be skipped`);
  console.warn(`skipping the failover tests: ${message} (apt-get install ${PACKAGES})`);
  return false;
}

/** `template` with every {{NAME}} replaced; a placeholder without a value is an error. */
export function renderTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{([A-Z0-9_]+)\}\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for the template's {{${name}}}`);
    return value;
  });
}

export type PatroniMember = {
  name: string;
  /** "leader", "sync_standby" or "replica". */
  role: string;
  /** "running", "streaming", "stopped", "starting"… */
  state: string;
  timeline?: number;
  lag?: number | string;
};

export type PatroniCluster = {
  /** The `postgres` database through HAProxy (always the primary): the service's DATABASE_URL. */
  url: string;
  /** The same database on one node directly (bypassing HAProxy). */
  nodeUrl(name: string): string;
  readonly nodes: readonly string[];
  /** The members as Patroni's REST API (GET /cluster, asked of any node that answers) lists them. */
  members(): Promise<PatroniMember[]>;
  /** Waits until one node leads and another is its synchronous standby, streaming; returns both names. */
  healthy(timeoutMs?: number): Promise<{ leader: string; standby: string }>;
  /** The pid of a node's postmaster (from its postmaster.pid), or null when it is not running. */
  postmasterPid(name: string): number | null;
  /** The node's machine dies: its Patroni, its postmaster and every PostgreSQL process killed with SIGKILL. */
  killNode(name: string): void;
  /** SIGSTOP to the node's postmaster and all its children: it neither answers nor dies. Returns the pids. */
  freezePostgres(name: string): number[];
  /** SIGCONT to what freezePostgres stopped. */
  thawPostgres(name: string): void;
  /** Starts the node's Patroni again (after killNode): it rejoins as a standby, rewound if need be. */
  startNode(name: string): void;
  /** The directory holding the configuration, data and logs (for a failure's diagnosis). */
  readonly dir: string;
  /** The tail of every log, for a failed test's message. */
  logs(): string;
  /** Kills everything and removes the directory. Safe to call twice. */
  stop(): Promise<void>;
};

function randomSecret(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(12)), (byte) =>
    byte.toString(16).padStart(2, "0"),
  ).join("");
}

/** Every process's parent, from /proc. */
function parents(): Map<number, number> {
  const result = new Map<number, number>();
  let entries: string[];
  try {
    entries = execFileSync("ls", ["/proc"], { encoding: "utf8" }).split("\n");
  } catch {
    return result;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const text = readFileSync(`/proc/${entry}/stat`, "utf8");
      // pid (comm) state ppid …; comm may hold spaces and parentheses.
      const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
      result.set(Number(entry), Number(fields[1]));
    } catch {
      // gone meanwhile
    }
  }
  return result;
}

/** `pid` and all its descendants, parents first. */
function processTree(pid: number): number[] {
  const byParent = new Map<number, number[]>();
  for (const [child, parent] of parents()) {
    const list = byParent.get(parent) ?? [];
    list.push(child);
    byParent.set(parent, list);
  }
  const tree: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.shift() as number;
    tree.push(next);
    queue.push(...(byParent.get(next) ?? []));
  }
  return tree;
}

function signal(pids: number[], name: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, name);
    } catch {
      // already gone
    }
  }
}

/** Kills a process, everything below it, and (when its command line names `dir`) nothing of anyone else's. */
function killTree(pid: number): void {
  const tree = processTree(pid);
  signal(tree, "SIGKILL");
  // A stopped process dies of SIGKILL too; SIGCONT for good measure.
  signal(tree, "SIGCONT");
}

async function until<T>(
  what: string,
  check: () => Promise<T | null | undefined>,
  timeoutMs: number,
  describe: () => string = () => "",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => null);
    if (value !== null && value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}\n${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function fetchJson(url: string, timeoutMs = 2_000): Promise<unknown> {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  return response.json();
}

const DIR_PREFIX = "sms-patroni-";
const PIDS_FILE = "pids";
const STALE_AFTER_MS = 6 * 60 * 60 * 1000;
let staleSweep: Promise<void> | undefined;

/** Kills the processes of killed runs (listed in their directory, and naming it) and removes their directories. */
async function removeStaleClusters(): Promise<void> {
  for (const name of await readdir(tmpdir()).catch(() => [] as string[])) {
    if (!name.startsWith(DIR_PREFIX)) continue;
    const dir = join(tmpdir(), name);
    const info = await stat(dir).catch(() => null);
    if (!info || Date.now() - info.mtimeMs < STALE_AFTER_MS) continue;
    const pids = (await readFile(join(dir, PIDS_FILE), "utf8").catch(() => ""))
      .split("\n")
      .filter(Boolean)
      .map(Number);
    for (const pid of pids) {
      const command = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
      if (command.includes(dir)) killTree(pid);
    }
    await rm(dir, { recursive: true, force: true });
  }
}

type Node = {
  name: string;
  pgPort: number;
  restPort: number;
  dir: string;
  dataDir: string;
  config: string;
  process?: ChildProcess;
};

/** Starts etcd, two Patroni nodes and HAProxy (see the top of this file) and waits until they are healthy. */
export async function startPatroniCluster(
  options: { startTimeoutMs?: number } = {},
): Promise<PatroniCluster> {
  for (const path of Object.values(PROGRAMS)) {
    if (!existsSync(path)) throw new Error(`${path} is not installed (patroniHarnessAvailable)`);
  }
  const startTimeoutMs = options.startTimeoutMs ?? 120_000;
  const owner = serverUser();
  staleSweep ??= removeStaleClusters().catch(() => undefined);
  await staleSweep;
  const dir = await mkdtemp(join(tmpdir(), DIR_PREFIX));
  const superuserPassword = randomSecret();
  const replicationPassword = randomSecret();
  const rewindPassword = randomSecret();
  const ports = {
    etcdClient: await freePort(),
    etcdPeer: await freePort(),
    haproxy: await freePort(),
  };
  const nodes: Node[] = [];
  for (const name of ["pg1", "pg2"]) {
    const nodeDir = join(dir, name);
    nodes.push({
      name,
      pgPort: await freePort(),
      restPort: await freePort(),
      dir: nodeDir,
      dataDir: join(nodeDir, "data"),
      config: join(nodeDir, "patroni.yml"),
    });
  }
  const children = new Set<ChildProcess>();
  const logFiles: string[] = [];

  const launch = (label: string, command: string, args: string[], asServerUser: boolean): ChildProcess => {
    const logFile = join(dir, `${label}.out`);
    if (!logFiles.includes(logFile)) logFiles.push(logFile);
    const out = createWriteStream(logFile, { flags: "a" });
    const child = spawn(command, args, {
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
      ...(asServerUser && owner ? { uid: owner.uid, gid: owner.gid } : {}),
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        LANG: "C.UTF-8",
        LC_ALL: "C.UTF-8",
        HOME: dir,
        // Patroni's own variables (PATRONI_*) from the caller would override the file.
      },
    });
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
    child.once("error", (error) => out.write(`spawn failed: ${error.message}\n`));
    children.add(child);
    child.once("exit", () => children.delete(child));
    if (child.pid) void appendFile(join(dir, PIDS_FILE), `${child.pid}\n`).catch(() => undefined);
    return child;
  };

  const tail = (file: string, lines = 40) => {
    try {
      return readFileSync(file, "utf8").split("\n").slice(-lines).join("\n");
    } catch {
      return "";
    }
  };
  const logs = () =>
    [...logFiles, ...nodes.flatMap((node) => [join(node.dir, "log", "patroni.log")])]
      .map((file) => `--- ${file}\n${tail(file)}`)
      .join("\n");

  const postmasterPid = (name: string): number | null => {
    const node = nodes.find((candidate) => candidate.name === name);
    if (!node) throw new Error(`no node ${name}`);
    try {
      const pid = Number(readFileSync(join(node.dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
      if (!Number.isInteger(pid) || pid <= 0) return null;
      process.kill(pid, 0);
      return pid;
    } catch {
      return null;
    }
  };

  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      for (const node of nodes) {
        const pid = postmasterPid(node.name);
        if (pid) killTree(pid);
      }
      for (const child of [...children]) if (child.pid) killTree(child.pid);
      // Whatever a killed Patroni had started (its postmaster in a session of its own) is gone with the tree above.
      await Promise.all(
        [...children].map(
          (child) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) resolve();
              else child.once("exit", () => resolve());
              setTimeout(resolve, 5_000);
            }),
        ),
      );
      if (!process.env.SMS_PATRONI_KEEP) await rm(dir, { recursive: true, force: true });
    })();
    return stopped;
  };

  const startPatroni = (node: Node) => {
    node.process = launch(node.name, PROGRAMS.patroni, [node.config], true);
  };

  try {
    const etcdUrl = `http://127.0.0.1:${ports.etcdClient}`;
    const peerUrl = `http://127.0.0.1:${ports.etcdPeer}`;
    await mkdir(join(dir, "etcd"));
    await writeFile(
      join(dir, "etcd.conf.yml"),
      renderTemplate(await readFile(ETCD_TEMPLATE, "utf8"), {
        MEMBER_NAME: "etcd1",
        DATA_DIR: join(dir, "etcd", "data"),
        CLIENT_URL: etcdUrl,
        PEER_URL: peerUrl,
        INITIAL_CLUSTER: `etcd1=${peerUrl}`,
        CLUSTER_TOKEN: `sms-${randomSecret()}`,
      }),
    );
    await writeFile(
      join(dir, "postgres.cfg"),
      renderTemplate(await readFile(HAPROXY_TEMPLATE, "utf8"), {
        MAXCONN: "500",
        BIND: `127.0.0.1:${ports.haproxy}`,
        ...Object.fromEntries(
          nodes.flatMap((node, index) => [
            [`NODE${index + 1}_NAME`, node.name],
            [`NODE${index + 1}_PG`, `127.0.0.1:${node.pgPort}`],
            [`NODE${index + 1}_RESTAPI_PORT`, String(node.restPort)],
          ]),
        ),
      }),
    );
    const patroniTemplate = await readFile(PATRONI_TEMPLATE, "utf8");
    for (const node of nodes) {
      await mkdir(join(node.dir, "log"), { recursive: true });
      await writeFile(
        node.config,
        renderTemplate(patroniTemplate, {
          SCOPE: "sms-drill",
          NODE_NAME: node.name,
          RESTAPI_LISTEN: `127.0.0.1:${node.restPort}`,
          RESTAPI_CONNECT: `127.0.0.1:${node.restPort}`,
          ETCD_HOSTS: `127.0.0.1:${ports.etcdClient}`,
          LOG_DIR: join(node.dir, "log"),
          PG_LISTEN: `127.0.0.1:${node.pgPort}`,
          PG_CONNECT: `127.0.0.1:${node.pgPort}`,
          DATA_DIR: node.dataDir,
          PGPASS: join(node.dir, "pgpass"),
          SOCKET_DIR: node.dir,
          SUPERUSER_PASSWORD: superuserPassword,
          REPLICATION_PASSWORD: replicationPassword,
          REWIND_PASSWORD: rewindPassword,
          CLUSTER_NETWORK: "127.0.0.1/32",
        }),
      );
    }
    if (owner) await chownTree(dir, owner);

    launch("etcd", PROGRAMS.etcd, ["--config-file", join(dir, "etcd.conf.yml")], false);
    await until(
      "etcd is healthy",
      async () => {
        const health = (await fetchJson(`${etcdUrl}/health`)) as { health?: string };
        return health.health === "true" ? true : null;
      },
      startTimeoutMs,
      logs,
    );
    // The first node bootstraps the cluster (initdb); the second then clones it.
    startPatroni(nodes[0] as Node);
    await until(
      "the first node leads",
      async () => {
        const response = await fetch(`http://127.0.0.1:${(nodes[0] as Node).restPort}/primary`, {
          signal: AbortSignal.timeout(2_000),
        });
        await response.body?.cancel();
        return response.status === 200 ? true : null;
      },
      startTimeoutMs,
      logs,
    );
    startPatroni(nodes[1] as Node);
    launch("haproxy", PROGRAMS.haproxy, ["-db", "-f", join(dir, "postgres.cfg")], false);
  } catch (error) {
    await stop();
    throw error;
  }

  const restUrl = (node: Node) => `http://127.0.0.1:${node.restPort}`;
  const members = async (): Promise<PatroniMember[]> => {
    for (const node of nodes) {
      try {
        const body = (await fetchJson(`${restUrl(node)}/cluster`)) as { members?: PatroniMember[] };
        if (body.members) return body.members;
      } catch {
        // this node does not answer: ask the other
      }
    }
    throw new Error("no Patroni node answers GET /cluster");
  };
  const url = `postgresql://postgres:${superuserPassword}@127.0.0.1:${ports.haproxy}/postgres`;

  const healthy = (timeoutMs = startTimeoutMs) =>
    until(
      "a leader and a streaming synchronous standby, reachable through HAProxy",
      async () => {
        const list = await members();
        const leader = list.find((member) => member.role === "leader" && member.state === "running");
        const standby = list.find(
          (member) =>
            member.role === "sync_standby" && (member.state === "streaming" || member.state === "running"),
        );
        if (!leader || !standby) return null;
        const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
        client.on("error", () => undefined);
        try {
          await client.connect();
          const { rows } = await client.query<{ recovery: boolean }>(
            "SELECT pg_is_in_recovery() AS recovery",
          );
          if (rows[0]?.recovery !== false) return null;
        } finally {
          await client.end().catch(() => undefined);
        }
        return { leader: leader.name, standby: standby.name };
      },
      timeoutMs,
      logs,
    );

  try {
    await healthy();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    await stop();
    throw new Error(message);
  }

  const nodeNamed = (name: string): Node => {
    const node = nodes.find((candidate) => candidate.name === name);
    if (!node) throw new Error(`no node ${name}`);
    return node;
  };
  const frozen = new Map<string, number[]>();

  return {
    url,
    nodeUrl(name) {
      const node = nodeNamed(name);
      return `postgresql://postgres:${superuserPassword}@127.0.0.1:${node.pgPort}/postgres`;
    },
    nodes: nodes.map((node) => node.name),
    members,
    healthy,
    postmasterPid,
    killNode(name) {
      const node = nodeNamed(name);
      const postmaster = postmasterPid(name);
      // Both at once, as a machine that loses power: neither Patroni nor PostgreSQL says goodbye.
      const pids = [
        ...(node.process?.pid ? processTree(node.process.pid) : []),
        ...(postmaster ? processTree(postmaster) : []),
      ];
      signal(pids, "SIGKILL");
    },
    freezePostgres(name) {
      const postmaster = postmasterPid(name);
      if (!postmaster) throw new Error(`${name} has no running postmaster`);
      // The postmaster first, so it starts nothing new meanwhile.
      signal([postmaster], "SIGSTOP");
      const pids = processTree(postmaster);
      signal(pids, "SIGSTOP");
      frozen.set(name, pids);
      return pids;
    },
    thawPostgres(name) {
      signal(frozen.get(name) ?? [], "SIGCONT");
      frozen.delete(name);
    },
    startNode(name) {
      startPatroni(nodeNamed(name));
    },
    dir,
    logs,
    stop,
  };
}
