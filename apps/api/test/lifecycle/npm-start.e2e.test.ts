// `npm start` as a developer runs it (issue 51, "Running it"): the service
// through scripts/bootstrap.mjs with no configuration but a free PORT and a
// temporary PGlite directory (the repository's .data/ stays untouched). It
// prints its human summary before any JSON line, opens the internal listener
// on PORT + 1 with a token generated beside the data directory (0600), which
// `node scripts/bootstrap.mjs operator …` reads; and one SIGINT to the whole
// process group (what a terminal's Ctrl-C does) stops it once, exit 0, with no
// "second signal" and no forced shutdown. Under NODE_ENV=production nothing is
// generated and there is no internal listener unless it is configured.
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync, statSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { createServer, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { availableBackends, createPostgresTestDatabase } from "@sms/db/testing";
import { afterEach, describe, expect, it } from "vitest";
import { API_DIR, createTestKey, freePort } from "../harness.ts";

const ROOT = join(API_DIR, "..", "..");
const BOOTSTRAP = join(ROOT, "scripts", "bootstrap.mjs");
const hasPostgres = (await availableBackends()).includes("postgres");

/** What a developer's shell has, and nothing of the service's settings (vitest sets NODE_ENV=test). */
function shellEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ["PATH", "HOME", "TMPDIR", "DENO_DIR", "CI", "TEST_POSTGRES_URL"]) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...extra };
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

/** A free PORT whose PORT + 1 (the development internal listener) is free too. */
async function freePortPair(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await freePort();
    if (port < 65535 && (await portIsFree(port + 1))) return port;
  }
  throw new Error("no free pair of ports");
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
    socket.connect(port, "127.0.0.1");
  });
}

async function readyz(port: number): Promise<number> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) })).status;
  } catch {
    return 0;
  }
}

type Started = {
  child: ChildProcess;
  /** The exit code, or the signal that ended the process. */
  exited: Promise<number | NodeJS.Signals | null>;
  output: () => string;
};
const started: Started[] = [];
const dirs: string[] = [];
const cleanups: (() => Promise<void>)[] = [];

/**
 * `node scripts/bootstrap.mjs <args>` in a process group of its own (as a
 * terminal runs a foreground job); standard output and error go to one file,
 * so their order is the order they were written in.
 */
function bootstrap(args: string[], env: Record<string, string>, logFile: string, viaNpm = false): Started {
  const fd = openSync(logFile, "w");
  // `npm start` is `node scripts/bootstrap.mjs start` under npm, which passes SIGINT on as well.
  const [command, commandArgs] = viaNpm ? ["npm", args] : [process.execPath, [BOOTSTRAP, ...args]];
  const child = spawn(command, commandArgs, {
    cwd: ROOT,
    env,
    stdio: ["ignore", fd, fd],
    detached: true,
  });
  closeSync(fd);
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? signal)),
  );
  const run = { child, exited, output: () => readFileSync(logFile, "utf8") };
  started.push(run);
  return run;
}

async function waitReady(run: Started, port: number): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if ((await readyz(port)) === 200) return;
    if (run.child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`not ready:\n${run.output().split("\n").slice(-15).join("\n")}`);
}

/** Runs bootstrap to its end (bounded); the code and everything it printed. */
async function runToEnd(args: string[], env: Record<string, string>, logFile: string) {
  const run = bootstrap(args, env, logFile);
  const timer = setTimeout(() => run.child.pid && process.kill(-run.child.pid, "SIGKILL"), 60_000);
  const code = await run.exited;
  clearTimeout(timer);
  return { code, output: run.output() };
}

afterEach(async () => {
  for (const run of started.splice(0)) {
    if (run.child.exitCode === null && run.child.signalCode === null && run.child.pid) {
      try {
        process.kill(-run.child.pid, "SIGKILL");
      } catch {
        // already gone
      }
      await run.exited;
    }
  }
  for (const cleanup of cleanups.splice(0)) await cleanup();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "sms-npm-start-"));
  dirs.push(dir);
  return dir;
}

describe("npm start in development", () => {
  it("npm start prints the summary first, lets the operator tool in with the generated token, and one Ctrl-C to the group stops it once", async () => {
    const dir = await tempDir();
    const port = await freePortPair();
    const env = shellEnv({ PORT: String(port), PGLITE_DATA_DIR: join(dir, "pglite") });
    const server = bootstrap(
      ["start"],
      { ...env, npm_config_update_notifier: "false" },
      join(dir, "start.log"),
      true,
    );
    await waitReady(server, port);

    // The token: generated beside the data directory, owner-only.
    const tokenFile = join(dir, "internal-token");
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(tokenFile, "utf8").trim().length).toBeGreaterThanOrEqual(32);
    expect(await accepts(port + 1)).toBe(true);

    // The operator tool, with the same (empty) configuration: a read-only command answers.
    const key = await createTestKey((path, init) => fetch(`http://127.0.0.1:${port}${path}`, init));
    const operator = await runToEnd(
      ["operator", "show", "--project", key.project_id, "--json"],
      env,
      join(dir, "operator.log"),
    );
    expect(operator.code, operator.output).toBe(0);
    const shown = JSON.parse(operator.output.slice(operator.output.indexOf("{"))) as {
      project: { id: string };
      keys: { mode: string }[];
    };
    expect(shown.project.id).toBe(key.project_id);
    expect(shown.keys.map((k) => k.mode)).toEqual(["test"]);

    // A wrong token is refused: the tool really authenticates with the file's.
    const wrong = await runToEnd(
      ["operator", "show", "--project", key.project_id],
      { ...env, INTERNAL_API_TOKEN: "x".repeat(40) },
      join(dir, "operator-wrong.log"),
    );
    expect(wrong.code, wrong.output).toBe(1);
    expect(wrong.output).toContain("The service refused INTERNAL_API_TOKEN");

    // Ctrl-C: SIGINT to every process of the group (npm, bootstrap and, before the fix, Deno). npm
    // passes it on to bootstrap too, waits for it, then ends itself by the same signal (npm's way);
    // the service's own exit 0 is the "stopped" line without "forced" (main.ts), and bootstrap's exit
    // code is checked without npm below.
    process.kill(-(server.child.pid as number), "SIGINT");
    expect(await server.exited).toBe("SIGINT");
    // npm's own header ("> sms-ge start", "> node scripts/bootstrap.mjs start") comes before the service's lines.
    const lines = server
      .output()
      .split("\n")
      .filter((line) => line !== "" && !line.startsWith("> "));
    const firstJson = lines.findIndex((line) => line.startsWith("{"));
    const summary = lines.slice(0, firstJson);
    expect(summary[0]).toBe(`SMS API (development) on http://localhost:${port}`);
    for (const path of ["/docs", "/dashboard", "/mcp", "/llms.txt"]) {
      expect(
        summary.some((line) => line.endsWith(`http://localhost:${port}${path}`)),
        path,
      ).toBe(true);
    }
    expect(summary.join("\n")).toContain(`PGlite (embedded PostgreSQL) in ${join(dir, "pglite")}`);
    expect(summary.join("\n")).toContain("fake provider");
    expect(summary.join("\n")).toContain("Sign in as a local developer");
    expect(summary.join("\n")).toContain(`http://127.0.0.1:${port + 1}`);
    expect(summary.join("\n")).toContain(`token in ${tokenFile}`);
    const json = lines.slice(firstJson).map((line) => JSON.parse(line) as { msg: string; signal?: string });
    expect(json.filter((entry) => entry.msg === "shutting down").map((entry) => entry.signal)).toEqual([
      "SIGINT",
    ]);
    expect(json.some((entry) => entry.msg === "shutdown deadline reached: closing what remains")).toBe(false);
    expect(server.output()).not.toMatch(/second SIG|"forced":true/);
    expect(json.filter((entry) => entry.msg === "stopped")).toHaveLength(1);
    expect(json.at(-1)?.msg).toBe("stopped");
  }, 180_000);

  it("the operator tool without a running service's token file says how to get one", async () => {
    const dir = await tempDir();
    const port = await freePortPair();
    const env = shellEnv({ PORT: String(port), PGLITE_DATA_DIR: join(dir, "pglite") });
    const run = await runToEnd(["operator", "show", "--project", "prj_x"], env, join(dir, "op.log"));
    expect(run.code, run.output).toBe(2);
    expect(run.output).toContain(`${join(dir, "internal-token")} does not exist yet`);
    expect(run.output).toContain("npm start");
    expect(await readdir(dir)).toEqual(["op.log"]);
  }, 120_000);
});

describe.skipIf(!hasPostgres)("NODE_ENV=production keeps the explicit settings", () => {
  const production = async (dir: string, port: number) => {
    const database = await createPostgresTestDatabase();
    cleanups.push(database.drop);
    return shellEnv({
      NODE_ENV: "production",
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: database.databaseUrl,
      PGLITE_DATA_DIR: join(dir, "pglite"),
      MESSAGE_ENCRYPTION_KEYS: "k1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
      CLAIM_COOKIE_SECRET: "production-cookie-secret-0123456789abcdef",
    });
  };

  it("no summary, no token file, no internal listener; INTERNAL_PORT alone is refused, not completed", async () => {
    const dir = await tempDir();
    const port = await freePortPair();
    const env = await production(dir, port);
    const server = bootstrap(["start"], env, join(dir, "start.log"));
    await waitReady(server, port);
    expect(await accepts(port + 1)).toBe(false);
    expect(await readdir(dir)).toEqual(["start.log"]);
    process.kill(-(server.child.pid as number), "SIGINT");
    expect(await server.exited).toBe(0);
    expect(server.output().split("\n")[0]?.startsWith("{")).toBe(true);
    expect(server.output()).not.toContain("SMS API (development)");

    // The operator tool reads no file in production either.
    const operator = await runToEnd(["operator", "show", "--project", "prj_x"], env, join(dir, "op.log"));
    expect(operator.code, operator.output).toBe(2);
    expect(operator.output).toContain("set INTERNAL_PORT and INTERNAL_API_TOKEN");

    const refused = await runToEnd(
      ["start"],
      { ...env, INTERNAL_PORT: String(port + 1) },
      join(dir, "refused.log"),
    );
    expect(refused.code).toBe(1);
    expect(refused.output).toContain("INTERNAL_API_TOKEN is required when INTERNAL_PORT is set");
    expect((await readdir(dir)).sort()).toEqual(["op.log", "refused.log", "start.log"]);
  }, 180_000);
});
