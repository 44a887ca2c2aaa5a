// Continuous archiving with pgBackRest for the restore drill: a PostgreSQL
// cluster of the tests' own (initdb in a temporary directory, on a free port)
// whose archive_command pushes every WAL segment into a pgBackRest repository
// beside it, a stanza, backups, and restores to a point in time
// (`pgbackrest restore --type=time --target-action=promote`) into a NEW data
// directory, started as a new cluster on another free port.
//
// The configuration is the shipped one: deploy/pgbackrest/pgbackrest.conf and
// deploy/pgbackrest/postgresql.conf rendered with this run's paths and ports
// (renderPgBackRestTemplate), so the drill tests what docs/operations.md tells
// an operator to install. As in replica.ts, whose helpers this reuses: as root,
// the clusters and pgBackRest run as the `postgres` user; where PostgreSQL's
// binaries or pgbackrest are absent the tests are skipped with a warning, and
// under CI that is an error instead.
import { existsSync } from "node:fs";
import {
  appendFile,
  chmod,
  chown,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import {
  CLUSTER_SETTINGS,
  chownTree,
  findBinaries,
  freePort,
  run,
  serverUser,
  until,
  withClient,
} from "./replica.ts";

/** deploy/pgbackrest in this repository. */
export const PGBACKREST_TEMPLATE_DIR = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "..",
  "..",
  "deploy",
  "pgbackrest",
);

const STANZA = "sms";

function findPgBackRest(): string | null {
  const candidates = [process.env.PGBACKREST_BIN, "/usr/bin/pgbackrest", "/usr/local/bin/pgbackrest"];
  return candidates.find((path): path is string => !!path && existsSync(path)) ?? null;
}

/**
 * Whether the backup tests can run here: PostgreSQL's server binaries and
 * pgbackrest are installed. Under CI their absence is an error, not a skip.
 */
export function backupHarnessAvailable(env: Record<string, string | undefined> = process.env): boolean {
  const missing = [
    ...(findBinaries() === null ? ["PostgreSQL's server binaries (apt-get install postgresql)"] : []),
    ...(findPgBackRest() === null ? ["pgbackrest (apt-get install pgbackrest)"] : []),
  ];
  if (missing.length === 0) return true;
  const message = `${missing.join(" and ")} not installed`;
  if (env.CI) throw new Error(`${message}; CI is set, so the backup tests may not be skipped`);
  console.warn(`skipping the backup tests: ${message}`);
  return false;
}

/**
 * Replaces every `{{name}}` of a template with `values[name]`; a placeholder
 * without a value, or a value no placeholder uses, is an error (the template
 * and its callers stay in step).
 */
export function renderPgBackRestTemplate(template: string, values: Record<string, string>): string {
  const used = new Set<string>();
  const rendered = template.replace(/\{\{(\w+)\}\}/g, (_match, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for the template's {{${name}}}`);
    used.add(name);
    return value;
  });
  const unused = Object.keys(values).filter((name) => !used.has(name));
  if (unused.length > 0) throw new Error(`the template has no {{${unused.join("}}, {{")}}}`);
  return rendered;
}

/** One backup in the repository, as `pgbackrest info --output=json` lists it. */
export type BackupSet = {
  label: string;
  type: "full" | "diff" | "incr";
  startedAt: Date;
  stoppedAt: Date;
  /** The database's size as this backup saw it (bytes, before compression). */
  sizeBytes: number;
  /** What this backup copied (bytes, before compression): all of it for a full one, the changes for diff/incr. */
  deltaBytes: number;
};

export type RestoredPostgres = {
  /** The restored cluster's `postgres` database (promoted: it takes writes). */
  url: string;
  port: number;
  /** Milliseconds of `pgbackrest restore` (the files), and of the cluster's start until it had promoted (the WAL replayed). */
  timings: { restoreMs: number; recoveryMs: number };
  /** Stops it (immediate) and removes its data directory. Safe to call twice. */
  stop(): Promise<void>;
};

export type ArchivedPostgres = {
  /** The archived cluster's `postgres` database. */
  url: string;
  /** The rendered pgbackrest.conf (pass --config= to run pgbackrest by hand). */
  configPath: string;
  stanza: string;
  /** `pgbackrest backup --type=…` (default full); resolves the new backup set. */
  backup(type?: "full" | "diff" | "incr"): Promise<BackupSet>;
  /** `pgbackrest check`: the configuration holds and a WAL segment reaches the repository. */
  check(): Promise<void>;
  /** The backup sets in the repository, oldest first. */
  backups(): Promise<BackupSet[]>;
  /** The server's clock now (`clock_timestamp()`, with its offset): a restore target. */
  serverTime(): Promise<string>;
  /**
   * Closes the current WAL segment (pg_switch_wal) and waits until it is in
   * the repository: everything committed so far can be restored. Resolves
   * the segment's name.
   */
  archiveCurrentWal(): Promise<string>;
  /**
   * `pgbackrest restore --type=time --target=<targetTime> --target-action=promote`
   * into a new data directory, started on a new free port; resolves once it
   * has promoted. The restored cluster does not archive (--archive-mode=off:
   * a drill must not write into the live cluster's repository).
   */
  restoreToTime(targetTime: string): Promise<RestoredPostgres>;
  /** Stops every cluster and removes the directory (repository included). Safe to call twice. */
  stop(): Promise<void>;
};

const DIR_PREFIX = "sms-backup-";
const STALE_AFTER_MS = 6 * 60 * 60 * 1000;
let staleSweep: Promise<void> | undefined;

/** Stops and removes the clusters of killed runs: directories of ours untouched for six hours. */
async function removeStaleDirectories(
  bin: string,
  owner: { uid: number; gid: number } | null,
): Promise<void> {
  for (const name of await readdir(tmpdir()).catch(() => [] as string[])) {
    if (!name.startsWith(DIR_PREFIX)) continue;
    const dir = join(tmpdir(), name);
    const info = await stat(dir).catch(() => null);
    if (!info || Date.now() - info.mtimeMs < STALE_AFTER_MS) continue;
    for (const entry of await readdir(dir).catch(() => [] as string[])) {
      if (existsSync(join(dir, entry, "postmaster.pid"))) {
        await run(bin, "pg_ctl", ["-D", join(dir, entry), "-w", "stop", "-m", "immediate"], owner).catch(
          () => undefined,
        );
      }
    }
    await rm(dir, { recursive: true, force: true });
  }
}

type InfoJson = Array<{
  name: string;
  backup?: Array<{
    label: string;
    type: BackupSet["type"];
    timestamp: { start: number; stop: number };
    info: { size: number; delta: number };
  }>;
}>;

/** Starts an archived cluster, creates its stanza and checks it (see the top of this file). */
export async function startArchivedPostgres(): Promise<ArchivedPostgres> {
  const bin = findBinaries();
  const pgbackrest = findPgBackRest();
  if (!bin || !pgbackrest)
    throw new Error("PostgreSQL or pgbackrest is not installed (backupHarnessAvailable)");
  const owner = serverUser();
  staleSweep ??= removeStaleDirectories(bin, owner).catch(() => undefined);
  await staleSweep;

  const dir = await mkdtemp(join(tmpdir(), DIR_PREFIX));
  const dataDir = join(dir, "primary");
  const configPath = join(dir, "pgbackrest.conf");
  const port = await freePort();
  const url = (at: number) => `postgresql://postgres@127.0.0.1:${at}/postgres`;

  const templates = async (name: string, values: Record<string, string>) =>
    renderPgBackRestTemplate(await readFile(join(PGBACKREST_TEMPLATE_DIR, name), "utf8"), values);
  const pgCtl = (args: string[]) => run(bin, "pg_ctl", args, owner);
  const backRest = (args: string[]) =>
    run(dirname(pgbackrest), "pgbackrest", [`--config=${configPath}`, `--stanza=${STANZA}`, ...args], owner);
  /** pgbackrest's standard output (info --output=json). */
  const backRestOutput = async (args: string[]) => {
    const file = join(dir, `out-${Date.now()}-${Math.random().toString(36).slice(2)}.json`);
    // run() keeps the output only for its error; the JSON is written through a shell redirect instead.
    await run(
      "/bin",
      "sh",
      [
        "-c",
        `exec "$0" "$@" > "${file}"`,
        pgbackrest,
        `--config=${configPath}`,
        `--stanza=${STANZA}`,
        ...args,
      ],
      owner,
    );
    try {
      return await readFile(file, "utf8");
    } finally {
      await rm(file, { force: true });
    }
  };
  const running = new Set<string>();
  const startCluster = async (data: string) => {
    await pgCtl(["-D", data, "-l", `${data}.log`, "-w", "-t", "120", "start"]);
    running.add(data);
  };
  const stopCluster = async (data: string) => {
    if (!running.has(data)) return;
    await pgCtl(["-D", data, "-w", "stop", "-m", "immediate"]);
    running.delete(data);
  };

  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      for (const data of [...running].reverse()) await stopCluster(data).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    })();
    return stopped;
  };

  try {
    for (const sub of ["repo", "log", "lock", "spool"]) await mkdir(join(dir, sub));
    await writeFile(
      configPath,
      await templates("pgbackrest.conf", {
        repo_path: join(dir, "repo"),
        log_path: join(dir, "log"),
        lock_path: join(dir, "lock"),
        spool_path: join(dir, "spool"),
        stanza: STANZA,
        pg_path: dataDir,
        pg_port: String(port),
        pg_socket_path: dir,
      }),
    );
    const archiving = await templates("postgresql.conf", { config_path: configPath, stanza: STANZA });
    if (owner) await chownTree(dir, owner);
    await run(
      bin,
      "initdb",
      ["-D", dataDir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"],
      owner,
    );
    await appendFile(
      join(dataDir, "postgresql.conf"),
      [...CLUSTER_SETTINGS, `port = ${port}`, `unix_socket_directories = '${dir}'`, archiving, ""].join("\n"),
    );
    await startCluster(dataDir);
    await backRest(["stanza-create"]);
    await backRest(["check"]);
  } catch (error) {
    await stop();
    throw error;
  }

  const backups = async (): Promise<BackupSet[]> => {
    const info = JSON.parse(await backRestOutput(["--output=json", "info"])) as InfoJson;
    return (info.find((stanza) => stanza.name === STANZA)?.backup ?? []).map((set) => ({
      label: set.label,
      type: set.type,
      startedAt: new Date(set.timestamp.start * 1000),
      stoppedAt: new Date(set.timestamp.stop * 1000),
      sizeBytes: set.info.size,
      deltaBytes: set.info.delta,
    }));
  };

  let restores = 0;
  return {
    url: url(port),
    configPath,
    stanza: STANZA,
    async backup(type = "full") {
      const before = new Set((await backups()).map((set) => set.label));
      await backRest([`--type=${type}`, "backup"]);
      const made = (await backups()).filter((set) => !before.has(set.label));
      if (made.length !== 1 || made[0]?.type !== type) {
        throw new Error(`expected one new ${type} backup, found ${JSON.stringify(made)}`);
      }
      return made[0];
    },
    check: () => backRest(["check"]),
    backups,
    serverTime: () =>
      withClient(url(port), async (client) => {
        const { rows } = await client.query<{ now: string }>("SELECT clock_timestamp()::text AS now");
        return rows[0]?.now ?? "";
      }),
    archiveCurrentWal: () =>
      withClient(url(port), async (client) => {
        const { rows } = await client.query<{ segment: string }>(
          "SELECT pg_walfile_name(pg_switch_wal()) AS segment",
        );
        const segment = rows[0]?.segment ?? "";
        await until(
          `WAL segment ${segment} is archived`,
          async () => {
            const archived = await client.query<{ last: string | null }>(
              "SELECT last_archived_wal AS last FROM pg_stat_archiver",
            );
            // Segment names of one timeline sort as their positions.
            return (archived.rows[0]?.last ?? "") >= segment;
          },
          60_000,
        );
        return segment;
      }),
    async restoreToTime(targetTime) {
      const target = join(dir, `restored-${++restores}`);
      const restoredPort = await freePort();
      await mkdir(target, { mode: 0o700 });
      if (owner) await chown(target, owner.uid, owner.gid);
      await chmod(target, 0o700);
      const started = performance.now();
      await backRest([
        `--pg1-path=${target}`,
        "--type=time",
        `--target=${targetTime}`,
        "--target-action=promote",
        "--archive-mode=off",
        "restore",
      ]);
      const restored = performance.now();
      // The restored postgresql.conf is the primary's (its port): a later line wins.
      await appendFile(join(target, "postgresql.conf"), `port = ${restoredPort}\n`);
      await startCluster(target);
      const restoredUrl = url(restoredPort);
      await until(
        "the restored cluster has reached its target and promoted",
        () =>
          withClient(restoredUrl, async (client) => {
            const { rows } = await client.query<{ recovering: boolean }>(
              "SELECT pg_is_in_recovery() AS recovering",
            );
            return rows[0]?.recovering === false;
          }).catch(() => false),
        120_000,
      );
      const timings = { restoreMs: restored - started, recoveryMs: performance.now() - restored };
      let removed: Promise<void> | undefined;
      return {
        url: restoredUrl,
        port: restoredPort,
        timings,
        stop() {
          removed ??= (async () => {
            await stopCluster(target);
            await rm(target, { recursive: true, force: true });
          })();
          return removed;
        },
      };
    },
    stop,
  };
}
