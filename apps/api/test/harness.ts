// The API's test harness.
//
//   startTestApp({ backend })   the whole application in-process (its handler
//                               called directly), on a fresh migrated database,
//                               with a manual clock and captured logs.
//   startServer({ backend })    the real thing: `deno run src/main.ts` in its
//                               own process, spoken to over HTTP on loopback.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { get as httpGet } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type BackendKind,
  createPostgresTestDatabase,
  createTestDatabase,
  openTestDatabase,
  type PrismaDatabase,
} from "@sms/db/testing";
import type { Clock, Timer } from "@sms/domain";
import { denoBinary, denoRunArgs } from "../../../scripts/deno.mjs";

export { denoRunArgs };

import { type App, createApp } from "../src/app.ts";
import { parseEnv } from "../src/config/index.ts";
import { createInternalClient } from "../src/internal-client.ts";
import { recordResponse, registerApiOrigin } from "./support/contract.ts";

export const API_DIR = join(dirname(fileURLToPath(import.meta.url)), "..");
/** The real Deno binary (not the .bin wrapper, which swallows signals). */
export const DENO: string = denoBinary();

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  private current: number;
  constructor(start: Date | string = "2026-11-22T10:00:00Z") {
    this.current = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.current);
  }
  set(date: Date | string): void {
    this.current = new Date(date).getTime();
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

/** Everything the application logged, one parsed JSON object per line. */
export class LogCapture {
  readonly lines: string[] = [];
  write(line: string): void {
    this.lines.push(line);
  }
  get entries(): Array<Record<string, unknown>> {
    return this.lines.flatMap((line) =>
      line
        .split("\n")
        .filter(Boolean)
        .map((text) => {
          try {
            return JSON.parse(text) as Record<string, unknown>;
          } catch {
            return { unparsed: text };
          }
        }),
    );
  }
  get text(): string {
    return this.lines.join("");
  }
}

export type TestApp = {
  /** The app, its database with the generated Prisma client for the tests' reads and seeds. */
  app: App & { db: PrismaDatabase };
  clock: ManualClock;
  logs: LogCapture;
  baseUrl: string;
  /** The environment the app was configured from (to start a sibling with one variable changed). */
  env: Record<string, string>;
  /** Calls the handler in-process, as if over HTTP from `remoteAddress`. */
  request(path: string, init?: RequestInit, remoteAddress?: string): Promise<Response>;
  /** Calls the internal listener's handler in-process (needs INTERNAL_PORT and INTERNAL_API_TOKEN in env). */
  internal(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
};

const BASE_URL = "http://api.test";

export async function startTestApp(options: {
  backend: BackendKind;
  env?: Record<string, string>;
  clock?: ManualClock;
  /** Real waiting as the app sees it (the MCP polling); the real timer unless given. */
  timer?: Timer;
  /** PostgreSQL: run on this existing database (migrated here, not dropped) instead of a new one. */
  databaseUrl?: string;
}): Promise<TestApp> {
  const database = options.databaseUrl
    ? await openTestDatabase(options.databaseUrl)
    : await createTestDatabase(options.backend);
  const clock = options.clock ?? new ManualClock();
  const logs = new LogCapture();
  const variables: Record<string, string> = {
    NODE_ENV: "test",
    PGLITE_DATA_DIR: "memory://",
    PUBLIC_BASE_URL: BASE_URL,
    // The in-process base URL is http://api.test, also under NODE_ENV=production.
    ALLOW_HTTP_PUBLIC_BASE_URL: "true",
    LOG_LEVEL: "debug",
    ...options.env,
  };
  const env = parseEnv(variables);
  const app = Object.assign(
    await createApp(env, {
      db: database.db,
      clock,
      logDestination: logs,
      ...(options.timer ? { timer: options.timer } : {}),
    }),
    {
      db: database.db,
    },
  );
  registerApiOrigin(BASE_URL);
  return {
    app,
    clock,
    logs,
    baseUrl: BASE_URL,
    env: variables,
    async request(path, init, remoteAddress = "203.0.113.10") {
      const request = new Request(`${BASE_URL}${path}`, init);
      const response = await app.handler(request, { remoteAddress });
      recordResponse(request, response);
      return response;
    },
    internal(path, init) {
      if (!app.internalHandler) throw new Error("startTestApp: set INTERNAL_PORT and INTERNAL_API_TOKEN");
      return app.internalHandler(new Request(`${BASE_URL}${path}`, init), { remoteAddress: "127.0.0.1" });
    },
    async close() {
      await app.close();
      await database.drop();
    },
  };
}

/**
 * The typed client of an in-process app's internal listener (needs
 * INTERNAL_PORT and INTERNAL_API_TOKEN in its env), acting for `operator`.
 */
export function inProcessInternalClient(t: TestApp, options: { token: string; operator?: string }) {
  return createInternalClient({
    baseUrl: BASE_URL,
    token: options.token,
    ...(options.operator !== undefined ? { operator: options.operator } : {}),
    fetch: (input, init) => {
      const url = new URL(String(input instanceof Request ? input.url : input));
      return t.internal(`${url.pathname}${url.search}`, init);
    },
  });
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export type ServerProcess = {
  baseUrl: string;
  port: number;
  /** The internal listener's base URL, when started with `internalToken`. */
  internalUrl?: string;
  child: ChildProcess;
  /** Every line the process wrote (stdout and stderr). */
  output: string[];
  databaseUrl?: string;
  /** Sends a signal and waits for the process to exit; resolves its exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Drops the server's database (PostgreSQL) or its data directory. */
  cleanup(): Promise<void>;
  waitForOutput(predicate: (line: string) => boolean, timeoutMs?: number): Promise<string>;
};

/**
 * Starts `deno run src/main.ts` on a free port against a fresh database:
 * a new PostgreSQL database, or PGlite in a temporary directory.
 */
export async function startServer(options: {
  backend: BackendKind;
  env?: Record<string, string>;
  args?: string[];
  /** Reuse an existing database instead of creating one. */
  databaseUrl?: string;
  pgliteDataDir?: string;
  /** Also open the internal listener (INTERNAL_PORT) with this INTERNAL_API_TOKEN. */
  internalToken?: string;
  /** Start under `ulimit <this>`, e.g. "-n 64" (soft and hard limit on open files) or "-S -n 64". */
  ulimit?: string;
  /** Wait until /readyz answers 200 (default), or only until the server listens. */
  waitForDatabase?: boolean;
}): Promise<ServerProcess> {
  const port = await freePort();
  const internalPort = options.internalToken ? await freePort() : undefined;
  let databaseUrl = options.databaseUrl;
  let dropDatabase: (() => Promise<void>) | undefined;
  let dataDir = options.pgliteDataDir;
  if (options.backend === "postgres" && !databaseUrl) {
    const created = await createPostgresTestDatabase();
    databaseUrl = created.databaseUrl;
    dropDatabase = created.drop;
  }
  if (options.backend === "pglite" && !dataDir) {
    dataDir = join(await mkdtemp(join(tmpdir(), "sms-api-")), "pglite");
  }
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    DENO_NO_UPDATE_CHECK: "1",
    NODE_ENV: "test",
    PORT: String(port),
    HOST: "127.0.0.1",
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    LOG_LEVEL: "debug",
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : { PGLITE_DATA_DIR: dataDir ?? "memory://" }),
    ...(internalPort && options.internalToken
      ? { INTERNAL_PORT: String(internalPort), INTERNAL_API_TOKEN: options.internalToken }
      : {}),
    ...options.env,
  };
  const denoArgs = denoRunArgs("src/main.ts", ...(options.args ?? []));
  // `exec` keeps the Deno process itself as the child (signals, its pid).
  const child =
    options.ulimit === undefined
      ? spawn(DENO, denoArgs, { cwd: API_DIR, env, stdio: ["ignore", "pipe", "pipe"] })
      : spawn("sh", ["-c", `ulimit ${options.ulimit} && exec "$0" "$@"`, DENO, ...denoArgs], {
          cwd: API_DIR,
          env,
          stdio: ["ignore", "pipe", "pipe"],
        });
  const output: string[] = [];
  const waiters = new Set<{ predicate: (line: string) => boolean; resolve: (line: string) => void }>();
  const onData = (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) {
      if (!line) continue;
      output.push(line);
      for (const waiter of waiters) {
        if (waiter.predicate(line)) {
          waiters.delete(waiter);
          waiter.resolve(line);
        }
      }
    }
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));

  function waitForOutput(predicate: (line: string) => boolean, timeoutMs = 30_000): Promise<string> {
    const seen = output.find(predicate);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const waiter = { predicate, resolve };
      waiters.add(waiter);
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(
          new Error(`timed out waiting for server output; last lines:\n${output.slice(-10).join("\n")}`),
        );
      }, timeoutMs);
      exited.then(() => {
        clearTimeout(timer);
        if (waiters.delete(waiter))
          reject(new Error(`server exited; output:\n${output.slice(-20).join("\n")}`));
      });
      const original = waiter.resolve;
      waiter.resolve = (line) => {
        clearTimeout(timer);
        original(line);
      };
    });
  }

  registerApiOrigin(`http://127.0.0.1:${port}`);
  const server: ServerProcess = {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    ...(internalPort ? { internalUrl: `http://127.0.0.1:${internalPort}` } : {}),
    child,
    output,
    databaseUrl,
    waitForOutput,
    async stop(signal = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    async cleanup() {
      await server.stop();
      await dropDatabase?.();
      if (!options.pgliteDataDir && dataDir && dataDir !== "memory://") {
        await rm(dirname(dataDir), { recursive: true, force: true });
      }
    },
  };
  if (!(options.args ?? []).includes("--role=worker")) {
    try {
      await waitForOutput((line) => line.includes('"msg":"listening on'), 60_000);
      // The database may still be migrating in the background (app.ts).
      for (let i = 0; options.waitForDatabase !== false; i++) {
        if ((await readyStatus(port)) === 200) break;
        if (i >= 600 || child.exitCode !== null) {
          throw new Error(`the server's database did not become ready:\n${output.slice(-10).join("\n")}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } catch (error) {
      await server.cleanup();
      throw error;
    }
  }
  return server;
}

/**
 * GET /readyz on a connection of its own, closed afterwards (fetch would keep
 * it open in its pool, and tests count the server's connections).
 */
function readyStatus(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const request = httpGet({ host: "127.0.0.1", port, path: "/readyz", agent: false }, (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode ?? null));
    });
    request.on("error", () => resolve(null));
  });
}

/** Creates a test key through the API. */
export async function createTestKey(
  call: (path: string, init?: RequestInit) => Promise<Response>,
): Promise<{ api_key: string; project_id: string; claim_url: string; expires_at: string }> {
  const response = await call("/v1/test-keys", { method: "POST" });
  if (response.status !== 201) throw new Error(`test key: ${response.status} ${await response.text()}`);
  return (await response.json()) as never;
}

/** POST /v1/messages with the usual headers. */
export function sendMessageRequest(
  apiKey: string,
  idempotencyKey: string | null,
  body: unknown,
  extraHeaders: Record<string, string> = {},
): RequestInit {
  return {
    method: "POST",
    headers: {
      Authorization: `Bearer ${apiKey}`,
      "Content-Type": "application/json",
      ...(idempotencyKey === null ? {} : { "Idempotency-Key": idempotencyKey }),
      ...extraHeaders,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  };
}

/**
 * Holds ACCESS EXCLUSIVE on `table` (PostgreSQL) in a transaction of its own,
 * on a connection outside the app's pool, until `release()`.
 */
export async function lockTable(t: TestApp, table: string): Promise<{ release(): Promise<void> }> {
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let locked = () => {};
  const isLocked = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const transaction = t.app.db.prisma.$transaction(
    async (tx) => {
      await tx.$executeRawUnsafe(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      locked();
      await released;
    },
    { timeout: 60_000, maxWait: 10_000 },
  );
  await isLocked;
  return {
    async release() {
      release();
      await transaction;
    },
  };
}
