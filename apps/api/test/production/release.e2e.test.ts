// Issue 51 §1 (the release): `npm run release`'s build (scripts/release.mjs
// buildRelease), packed, unpacked into an empty temporary directory and run
// from there as an operator would: `bin/sms-api` with a fresh environment
// (PATH names an empty directory: no Node.js, no checkout), its working
// directory the temporary one. Through real HTTP on PGlite and on PostgreSQL:
// a test key, a send, a read, /docs and its bundle, /openapi.json, the
// dashboard's sign-in page and its stylesheet. `--role=worker` starts and
// stops on SIGTERM. The tarball holds nothing the server does not run and
// stays within 150 MB unpacked.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { lstatSync, readdirSync, realpathSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import { availableBackends, createPostgresTestDatabase } from "@sms/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BuiltRelease, buildRelease, FORBIDDEN } from "../../../../scripts/release.mjs";
import { createTestKey, freePort, sendMessageRequest } from "../harness.ts";
import { body } from "../support/messages.ts";

const MAX_UNPACKED_BYTES = 150_000_000;

let work: string;
let built: BuiltRelease;
/** Where the tarball was unpacked: the release as an operator has it. */
let release: string;
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "sms-release-"));
  built = await buildRelease({ outDir: join(work, "dist") });
  release = join(work, "opt", "sms-api");
  await mkdir(release, { recursive: true });
  const untar = spawnSync("tar", ["-xzf", built.tarball, "-C", release], { encoding: "utf8" });
  expect(untar.status, untar.stderr).toBe(0);
  // Nothing may lean on the build's own copy.
  await rm(built.dir, { recursive: true, force: true });
}, 300_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  if (work) await rm(work, { recursive: true, force: true });
}, 120_000);

type ReleaseProcess = {
  baseUrl: string;
  child: ChildProcess;
  output: string[];
  waitFor(predicate: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

/** `bin/sms-api` from the unpacked release, with `env` alone and a working directory of its own. */
async function startRelease(env: Record<string, string>, args: string[] = []): Promise<ReleaseProcess> {
  const cwd = await mkdtemp(join(work, "run-"));
  const emptyPath = join(cwd, "empty-path");
  await mkdir(emptyPath);
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const child = spawn(join(release, "bin", "sms-api"), args, {
    cwd,
    env: {
      PATH: emptyPath,
      HOME: cwd,
      HOST: "127.0.0.1",
      PORT: String(port),
      PUBLIC_BASE_URL: baseUrl,
      LOG_LEVEL: "info",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output.push(...chunk.toString("utf8").split("\n").filter(Boolean));
    for (const listener of listeners) listener();
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const waitFor = (predicate: (line: string) => boolean, timeoutMs = 60_000) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const line = output.find(predicate);
        if (line === undefined) return;
        done();
        resolve(line);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`bin/sms-api: timed out; last lines:\n${output.slice(-15).join("\n")}`));
      }, timeoutMs);
      const onExit = () => {
        done();
        reject(new Error(`bin/sms-api exited; output:\n${output.slice(-20).join("\n")}`));
      };
      const done = () => {
        clearTimeout(timer);
        listeners.delete(check);
        child.off("exit", onExit);
      };
      listeners.add(check);
      child.once("exit", onExit);
      check();
    });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    const result = await exited;
    clearTimeout(timer);
    return result;
  };
  cleanups.push(stop);
  return { baseUrl, child, output, waitFor, stop };
}

/** /readyz until 200 (bounded: 600 tries, 100 ms apart, while the process lives). */
async function waitReady(server: ReleaseProcess): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (server.child.exitCode !== null) break;
    const status = await fetch(`${server.baseUrl}/readyz`)
      .then((response) => response.status)
      .catch(() => null);
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`bin/sms-api never became ready:\n${server.output.slice(-20).join("\n")}`);
}

/** Every file and link under `dir`, relative to it, with `/` separators. */
function listRelease(dir: string): Array<{ path: string; link: boolean; bytes: number }> {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).map((entry) => {
    const full = join(entry.parentPath, entry.name);
    const stat = lstatSync(full);
    return {
      path: relative(dir, full).split(sep).join("/"),
      link: stat.isSymbolicLink(),
      bytes: stat.isFile() ? stat.size : 0,
    };
  });
}

describe("the release's contents", () => {
  it("holds bin/sms-api, the sources, the migrations and the pages' and docs' assets, and nothing forbidden", () => {
    const entries = listRelease(release);
    const paths = new Set(entries.map((entry) => entry.path));
    for (const expected of [
      "bin/sms-api",
      "bin/deno",
      "apps/api/src/main.ts",
      "packages/db/src/migrator.ts",
      "packages/web/src/kit/assets.ts",
      "prisma/migrations/20261122000000_init/migration.sql",
    ]) {
      expect(paths, expected).toContain(expected);
    }
    expect(
      entries.some((entry) => entry.path.endsWith("@scalar/api-reference/dist/browser/standalone.js")),
    ).toBe(true);
    expect(entries.some((entry) => /@electric-sql\/pglite\/dist\/pglite\.wasm$/.test(entry.path))).toBe(true);
    const forbidden = entries.filter((entry) => FORBIDDEN.some((pattern) => pattern.test(entry.path)));
    expect(forbidden.map((entry) => entry.path)).toEqual([]);
    // Named once more here, independently of the build's own list.
    const tools =
      /(^|\/)node_modules\/(\.pnpm\/)?(prisma|@prisma\+?|vitest|@biomejs|turbo|playwright|dependency-cruiser|tsup|typescript)[@/+]/;
    expect(entries.filter((entry) => tools.test(entry.path)).map((entry) => entry.path)).toEqual([]);
    expect(
      entries.filter((entry) => /\.test\.[cm]?[jt]s$/.test(entry.path)).map((entry) => entry.path),
    ).toEqual([]);
    expect(paths.has("packages/db/src/generated")).toBe(false);
  });

  it("is at most 150 MB unpacked, and every link stays inside it", () => {
    const entries = listRelease(release);
    const bytes = entries.reduce((sum, entry) => sum + entry.bytes, 0);
    expect(bytes).toBeLessThanOrEqual(MAX_UNPACKED_BYTES);
    const root = realpathSync(release);
    const outside = entries
      .filter((entry) => entry.link)
      .filter((entry) => !realpathSync(join(release, entry.path)).startsWith(`${root}${sep}`));
    expect(outside.map((entry) => entry.path)).toEqual([]);
  });
});

const backends = await availableBackends();

describe.each(backends)("bin/sms-api from the unpacked release on %s", (backend) => {
  let server: ReleaseProcess;
  let databaseEnv: Record<string, string>;

  beforeAll(async () => {
    if (backend === "postgres") {
      const database = await createPostgresTestDatabase({ migrate: false });
      cleanups.push(() => database.drop());
      // Production as an operator runs it: every secret explicit, no development defaults.
      databaseEnv = {
        NODE_ENV: "production",
        DATABASE_URL: database.databaseUrl,
        MESSAGE_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString("base64")}`,
        CLAIM_COOKIE_SECRET: randomBytes(32).toString("hex"),
      };
    } else {
      databaseEnv = { PGLITE_DATA_DIR: join(await mkdtemp(join(work, "pglite-")), "data") };
    }
    server = await startRelease(databaseEnv);
    await waitReady(server);
  }, 180_000);

  it("applied the migrations itself, under the advisory lock, and serves the API", async () => {
    expect(server.output.some((line) => line.includes('"msg":"database migrated"'))).toBe(true);
    const call = (path: string, init?: RequestInit) => fetch(`${server.baseUrl}${path}`, init);
    const key = await createTestKey(call);
    const idempotencyKey = randomUUID();
    const sent = await call("/v1/messages", sendMessageRequest(key.api_key, idempotencyKey, body()));
    expect(sent.status).toBe(201);
    const message = (await sent.json()) as { id: string; status: string; to: string };
    expect(message.id).toMatch(/^msg_/);
    expect(message.to).toBe("+9955••••••56");

    const replay = await call("/v1/messages", sendMessageRequest(key.api_key, idempotencyKey, body()));
    expect(replay.status).toBe(200);
    expect(((await replay.json()) as { id: string }).id).toBe(message.id);

    const read = await call(`/v1/messages/${message.id}`, {
      headers: { Authorization: `Bearer ${key.api_key}` },
    });
    expect(read.status).toBe(200);
    expect(((await read.json()) as { id: string }).id).toBe(message.id);

    const unknown = await call("/v1/messages/msg_00000000000000000000000000", {
      headers: { Authorization: `Bearer ${key.api_key}` },
    });
    expect(unknown.status).toBe(404);
    const error = (await unknown.json()) as { error: { code: string; request_id: string } };
    expect(error.error.code).toBe("message_not_found");
    expect(unknown.headers.get("x-request-id")).toBe(error.error.request_id);
  });

  it("serves /docs with its bundle, /openapi.json, and the dashboard's sign-in page with its stylesheet", async () => {
    const docs = await fetch(`${server.baseUrl}/docs`);
    expect(docs.status).toBe(200);
    const page = await docs.text();
    const bundlePath = page.match(/src="(\/docs\/assets\/api-reference\.[^"]+\.js)"/)?.[1];
    expect(bundlePath).toBeDefined();
    const bundle = await fetch(`${server.baseUrl}${bundlePath}`);
    expect(bundle.status).toBe(200);
    expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(1_000_000);

    const openapi = await fetch(`${server.baseUrl}/openapi.json`);
    expect(openapi.status).toBe(200);
    const document = (await openapi.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(document.openapi).toMatch(/^3\./);
    expect(Object.keys(document.paths)).toContain("/v1/messages");

    const signIn = await fetch(`${server.baseUrl}/dashboard/sign-in`);
    expect(signIn.status).toBe(200);
    const html = await signIn.text();
    expect(html).toContain("<h1>Sign in to the dashboard</h1>");
    const cssPath = html.match(/href="(\/dashboard\/assets\/dashboard\.css[^"]*)"/)?.[1];
    expect(cssPath).toBeDefined();
    const css = await fetch(`${server.baseUrl}${cssPath}`);
    expect(css.status).toBe(200);
    expect(css.headers.get("content-type")).toContain("text/css");
  });

  it("stops on SIGTERM with exit 0", async () => {
    const { code } = await server.stop();
    expect(code).toBe(0);
    expect(server.output.some((line) => line.includes('"msg":"stopped"'))).toBe(true);
  });

  it("starts with --role=worker on the same database, runs the jobs alone, and stops on SIGTERM", async () => {
    const worker = await startRelease(databaseEnv, ["--role=worker"]);
    await worker.waitFor((line) => line.includes('"msg":"worker started"'), 90_000);
    expect(worker.output.some((line) => line.includes('"msg":"listening on'))).toBe(false);
    const { code } = await worker.stop();
    expect(code).toBe(0);
    expect(worker.output.some((line) => line.includes('"msg":"stopped"'))).toBe(true);
  });
});
