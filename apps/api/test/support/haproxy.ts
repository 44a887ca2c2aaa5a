// Debian's HAProxy running deploy/haproxy/sms-api.cfg (the shipped file, its
// environment variables set to loopback ports and a socket in a temporary
// directory), with its runtime API, for the tests that prove the service
// behind the load balancer. .ci/run installs it; elsewhere a test without it
// is skipped with a warning (and fails under CI).
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { API_DIR, freePort } from "../harness.ts";
import { debianToolAvailable } from "./debian-tool.ts";

export const HAPROXY = "/usr/sbin/haproxy";
export const HAPROXY_CONFIG = join(API_DIR, "../../deploy/haproxy/sms-api.cfg");

/** Whether HAProxy tests can run here; under CI its absence is an error. */
export function haproxyAvailable(): boolean {
  return debianToolAvailable(HAPROXY, "the HAProxy tests", "haproxy");
}

/** `haproxy -c` on the shipped configuration with `env`: its exit code and output. */
export function checkHaproxyConfig(env: Record<string, string>): { status: number; output: string } {
  try {
    const output = execFileSync(HAPROXY, ["-c", "-f", HAPROXY_CONFIG], {
      env: { PATH: process.env.PATH ?? "", ...env },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    return { status: 0, output };
  } catch (error) {
    const failed = error as { status?: number; stdout?: string; stderr?: string };
    return { status: failed.status ?? 1, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
  }
}

export type ServerSlot = "api1" | "api2" | "api3" | "api4";

export type HaproxyProcess = {
  baseUrl: string;
  port: number;
  /** Every line HAProxy logged (its request log included). */
  output: string[];
  /** One runtime API command on the stats socket; resolves its answer. */
  command(line: string): Promise<string>;
  /** A server as `show servers state` reports it: operational 2 is UP at full weight (1 while in its slowstart, 0 DOWN). */
  serverState(
    slot: ServerSlot,
  ): Promise<{ operational: number; admin: number; address: string; port: number }>;
  /** A server's current sessions (scur in `show stat`). */
  currentSessions(slot: ServerSlot): Promise<number>;
  stop(): Promise<void>;
};

/** Starts HAProxy on the shipped configuration; `servers` fills slots, the others start disabled. */
export async function startHaproxy(options: {
  servers: Partial<Record<ServerSlot, string>>;
  env?: Record<string, string>;
}): Promise<HaproxyProcess> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), "sms-haproxy-"));
  const socket = join(dir, "admin.sock");
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    SMS_HAPROXY_BIND: `127.0.0.1:${port}`,
    SMS_HAPROXY_STATS_SOCKET: socket,
    ...Object.fromEntries(
      Object.entries(options.servers).map(([slot, address]) => [
        `SMS_${slot.toUpperCase().replace("API", "API_")}`,
        address,
      ]),
    ),
    ...options.env,
  };
  const child: ChildProcess = spawn(HAPROXY, ["-db", "-f", HAPROXY_CONFIG], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  const onData = (chunk: Buffer) => output.push(...chunk.toString("utf8").split("\n").filter(Boolean));
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  function command(line: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const connection = createConnection(socket);
      let answer = "";
      connection.setEncoding("utf8");
      connection.on("connect", () => connection.end(`${line}\n`));
      connection.on("data", (data: string) => {
        answer += data;
      });
      connection.on("error", reject);
      connection.on("close", () => resolve(answer));
    });
  }

  async function serverState(slot: ServerSlot) {
    // `show servers state api`: "# <field names>" then one line per server.
    const lines = (await command("show servers state api")).split("\n");
    const header =
      lines
        .find((line) => line.startsWith("# be_id"))
        ?.slice(2)
        .split(" ") ?? [];
    const row = lines
      .map((line) => line.split(" "))
      .find((fields) => fields[header.indexOf("srv_name")] === slot);
    if (!row) throw new Error(`no server ${slot} in:\n${lines.join("\n")}`);
    const field = (name: string) => row[header.indexOf(name)] ?? "";
    return {
      operational: Number(field("srv_op_state")),
      admin: Number(field("srv_admin_state")),
      address: field("srv_addr"),
      port: Number(field("srv_port")),
    };
  }

  async function currentSessions(slot: ServerSlot) {
    const lines = (await command("show stat")).split("\n");
    const header = lines[0]?.replace(/^# /, "").split(",") ?? [];
    const row = lines
      .map((line) => line.split(","))
      .find((fields) => fields[0] === "api" && fields[1] === slot);
    if (!row) throw new Error(`no server ${slot} in show stat`);
    return Number(row[header.indexOf("scur")]);
  }

  const haproxy: HaproxyProcess = {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    output,
    command,
    serverState,
    currentSessions,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    for (let i = 0; ; i++) {
      if (child.exitCode !== null) throw new Error(`haproxy exited:\n${output.join("\n")}`);
      if (existsSync(socket) && (await command("show info").catch(() => "")).includes("Name: HAProxy")) break;
      if (i >= 100) throw new Error(`haproxy did not start:\n${output.join("\n")}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    await haproxy.stop();
    throw error;
  }
  return haproxy;
}

/** Polls `probe` every 100 ms until it returns true, for at most `timeoutMs`. */
export async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
