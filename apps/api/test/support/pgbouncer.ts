// Debian's PgBouncer (1.18: no prepared-statement support) in transaction
// mode, in front of the test PostgreSQL, for the tests that prove the service
// works behind a pooler. .ci/run installs it; elsewhere a test without it is
// skipped with a warning (and fails under CI).
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { probePostgres, testPostgresAdminUrl } from "@sms/db/testing";
import { freePort } from "../harness.ts";
import { debianToolAvailable } from "./debian-tool.ts";

export const PGBOUNCER = "/usr/sbin/pgbouncer";

/** Whether PgBouncer tests can run here; under CI its absence is an error. */
export function pgbouncerAvailable(): boolean {
  return debianToolAvailable(PGBOUNCER, "the PgBouncer tests", "pgbouncer");
}

/**
 * The settings docs/operations.md ("Behind PgBouncer") recommends, as the CI
 * pooler runs with them. server_login_retry: after a failed server login
 * (PostgreSQL restarting) PgBouncer waits this long before trying again; its
 * default of 15 s kept a 4 s restart unavailable for 10.9 s (issue 27).
 */
export const RECOMMENDED_PGBOUNCER_SETTINGS = { server_login_retry: "1" } as const;

export type PgBouncer = {
  /** `databaseUrl` with host and port replaced by the pooler's. */
  through(databaseUrl: string): string;
  /** A setting as the running PgBouncer reports it (SHOW CONFIG on its admin console). */
  setting(name: string): string | null;
  stop(): Promise<void>;
};

/** Starts PgBouncer (transaction pooling, `poolSize` server connections per database) on a free port. */
export async function startPgBouncer(options: { poolSize?: number } = {}): Promise<PgBouncer> {
  const upstream = new URL(testPostgresAdminUrl());
  const user = decodeURIComponent(upstream.username || "postgres");
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), "sms-pgbouncer-"));
  await chmod(dir, 0o777); // PgBouncer refuses to run as root: it drops to the postgres user.
  await writeFile(join(dir, "userlist.txt"), `"${user}" "${decodeURIComponent(upstream.password)}"\n`);
  await writeFile(
    join(dir, "pgbouncer.ini"),
    [
      "[databases]",
      `* = host=${upstream.hostname} port=${upstream.port || 5432}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${join(dir, "userlist.txt")}`,
      "pool_mode = transaction",
      `default_pool_size = ${options.poolSize ?? 4}`,
      "max_client_conn = 500",
      ...Object.entries(RECOMMENDED_PGBOUNCER_SETTINGS).map(([name, value]) => `${name} = ${value}`),
      `admin_users = ${user}`,
      // pg sends these as startup parameters; PgBouncer refuses unknown ones.
      // Behind a pooler, set them on the role instead (docs/operations.md).
      "ignore_startup_parameters = extra_float_digits, statement_timeout, idle_in_transaction_session_timeout",
      `logfile = ${join(dir, "pgbouncer.log")}`,
      `pidfile = ${join(dir, "pgbouncer.pid")}`,
      "",
    ].join("\n"),
  );
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn(
    PGBOUNCER,
    [...(asRoot ? ["-u", "postgres"] : []), join(dir, "pgbouncer.ini")],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const output: string[] = [];
  child.stdout?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  // Ready when it answers a query.
  const probeUrl = `postgresql://${encodeURIComponent(user)}@127.0.0.1:${port}/postgres`;
  const deadline = Date.now() + 15_000;
  while ((await probePostgres(probeUrl, 1_000)) !== null) {
    if (child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`PgBouncer did not start:\n${output.join("")}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  return {
    through(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = "127.0.0.1";
      url.port = String(port);
      return url.toString();
    },
    setting(name) {
      const out = execFileSync(
        "psql",
        [
          "-h",
          "127.0.0.1",
          "-p",
          String(port),
          "-U",
          user,
          "-At",
          "-F",
          "\t",
          "-c",
          "SHOW CONFIG",
          "pgbouncer",
        ],
        { encoding: "utf8" },
      );
      const row = out.split("\n").find((line) => line.split("\t")[0] === name);
      return row?.split("\t")[1] ?? null;
    },
    async stop() {
      if (child.exitCode === null) child.kill("SIGINT");
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
