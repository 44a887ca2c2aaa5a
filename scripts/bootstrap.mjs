#!/usr/bin/env node
// The one entry point behind `npm start`, `npm test` and friends.
//
// On a machine with only Node and npm it installs what is missing (a pinned
// pnpm through npx, the workspace, the generated Prisma client), then runs the
// requested command. Nothing is installed globally.
//
//   node scripts/bootstrap.mjs start            serve the API (Deno) on PORT
//   node scripts/bootstrap.mjs test             every test, through turbo
//   node scripts/bootstrap.mjs run <task>       any turbo task (typecheck, lint)
//   node scripts/bootstrap.mjs db:migrate       apply pending migrations
//   node scripts/bootstrap.mjs worker           the periodic jobs on their own
//   node scripts/bootstrap.mjs operator …       the operator's command-line tool
//   node scripts/bootstrap.mjs bench <name>     bench/<name>.ts (on demand, never in CI)
//   node scripts/bootstrap.mjs release          dist/release/ and its tarball (scripts/release.mjs)
//
// Only what needs the generated Prisma client (the tests, the typecheck, the
// benches' harness) generates it: the server, the worker, the migrator and the
// operator tool never load it.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { DENO_RUN_FLAGS, denoBinary, denoRunArgs } from "./deno.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { packageManager } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const PNPM_VERSION = packageManager.split("@")[1];

const quietEnv = {
  ...process.env,
  // turbo looks for the workspace's own pnpm on PATH.
  PATH: `${join(root, "node_modules", ".bin")}:${process.env.PATH ?? ""}`,
  DENO_NO_UPDATE_CHECK: "1",
  DENO_NO_PROMPT: "1",
  TURBO_TELEMETRY_DISABLED: "1",
  TURBO_NO_UPDATE_NOTIFIER: "1",
  DO_NOT_TRACK: "1",
  CHECKPOINT_DISABLE: "1",
  PRISMA_HIDE_UPDATE_MESSAGE: "1",
  npm_config_update_notifier: "false",
};

function mtime(path) {
  return existsSync(path) ? statSync(path).mtimeMs : 0;
}

function run(cmd, args, options = {}) {
  const result = spawnSync(cmd, args, { cwd: root, stdio: "inherit", env: quietEnv, ...options });
  if (result.status !== 0) {
    console.error(`bootstrap: '${cmd} ${args.join(" ")}' failed (exit ${result.status ?? result.signal})`);
    process.exit(result.status ?? 1);
  }
}

function ensureInstalled() {
  const marker = join(root, "node_modules", ".bootstrap-installed");
  const stale = Math.max(mtime(join(root, "pnpm-lock.yaml")), mtime(join(root, "pnpm-workspace.yaml")));
  if (existsSync(join(root, "node_modules", ".bin", "pnpm")) && mtime(marker) >= stale) return;
  console.error(`bootstrap: installing the workspace with pnpm ${PNPM_VERSION} …`);
  const frozen = process.env.CI ? ["--frozen-lockfile"] : [];
  run("npx", ["--yes", `pnpm@${PNPM_VERSION}`, "install", ...frozen]);
  writeFileSync(marker, new Date().toISOString());
}

function ensureGenerated() {
  const client = join(root, "packages", "db", "src", "generated", "prisma", "client.ts");
  if (mtime(client) >= mtime(join(root, "prisma", "schema.prisma"))) return;
  run(process.execPath, [join(root, "scripts", "prisma-generate.mjs")]);
}

/** Copies of one stop request arriving this close together count once (see `exec`'s `ownGroup`). */
const SAME_STOP_MS = 1000;

/**
 * Runs `cmd` and exits with its code; SIGINT and SIGTERM are passed on.
 *
 * `ownGroup` (the service and the worker, which shut down gracefully and take
 * a second signal to mean "now"): the child runs in a session of its own, so
 * the terminal's Ctrl-C, a process-group kill or npm's forwarding reach this
 * process only, and it passes a signal on once. Before, the child got the
 * terminal's SIGINT and then ours, took the second for a second Ctrl-C and
 * forced its shutdown. Copies of one stop request that arrive together (the
 * terminal's and npm's) are passed on once; a signal repeated later is passed
 * on again (a second Ctrl-C still forces). SIGHUP (the terminal closed)
 * becomes SIGTERM, since the child no longer hears the terminal itself.
 */
function exec(cmd, args, { extraEnv = {}, after, ownGroup = false } = {}) {
  const child = spawn(cmd, args, {
    cwd: root,
    stdio: "inherit",
    env: { ...quietEnv, ...extraEnv },
    detached: ownGroup,
  });
  let lastStop = Number.NEGATIVE_INFINITY;
  const pass = (signal) => {
    if (!ownGroup) {
      child.kill(signal);
      return;
    }
    const now = performance.now();
    if (now - lastStop < SAME_STOP_MS) return;
    lastStop = now;
    child.kill(signal === "SIGHUP" ? "SIGTERM" : signal);
  };
  for (const signal of ownGroup ? ["SIGINT", "SIGTERM", "SIGHUP"] : ["SIGINT", "SIGTERM"]) {
    process.on(signal, () => pass(signal));
  }
  // Should this process exit first (an uncaught error), its detached child must not outlive it.
  if (ownGroup)
    process.on("exit", () => child.exitCode === null && child.signalCode === null && child.kill("SIGTERM"));
  child.on("exit", (code, signal) => {
    after?.();
    process.exit(code ?? (signal ? 1 : 0));
  });
}

/**
 * Sums every package's vitest JSON report into one closing line, and names
 * what made a run fail without a failing test: a file that could not run
 * (a hook, an import) or an error thrown outside any test.
 */
function printTestSummary() {
  const dir = join(root, ".test-results");
  if (!existsSync(dir)) return;
  const totals = { passed: 0, failed: 0, skipped: 0 };
  const problems = [];
  for (const file of readdirSync(dir).filter((name) => name.endsWith(".json"))) {
    try {
      const report = JSON.parse(readFileSync(join(dir, file), "utf8"));
      totals.passed += report.numPassedTests ?? 0;
      totals.failed += report.numFailedTests ?? 0;
      totals.skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
      for (const suite of report.testResults ?? []) {
        if (suite.status !== "failed") continue;
        const where = relative(root, suite.name);
        const failed = (suite.assertionResults ?? []).filter((test) => test.status === "failed");
        for (const test of failed) problems.push(`${where}: ${test.fullName}`);
        if (failed.length === 0) {
          const why = String(suite.message ?? "").split("\n")[0] || "failed outside its tests (a hook)";
          problems.push(`${where}: ${why}`);
        }
      }
      if (report.success === false && (report.numFailedTests ?? 0) === 0 && problems.length === 0) {
        problems.push(`${file}: the run failed outside any test (see "Unhandled Errors" above)`);
      }
    } catch {
      totals.failed += 1;
      problems.push(`${file}: unreadable report`);
    }
  }
  console.log(`\ntests: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
  for (const problem of problems) console.log(`  ${problem}`);
}

const bin = (name) => join(root, "node_modules", ".bin", name);
const deno = () => denoBinary();
// --continue: a failing package does not hide the results of the others.
const TURBO_TEST_FLAGS = ["--env-mode=loose", "--concurrency=1", "--continue", "--log-order=stream"];

const [command = "start", ...rest] = process.argv.slice(2);
ensureInstalled();
if (["test", "run", "bench"].includes(command)) ensureGenerated();

switch (command) {
  case "start":
    exec(deno(), denoRunArgs("apps/api/src/main.ts", ...rest), { ownGroup: true });
    break;
  case "worker":
    exec(deno(), denoRunArgs("apps/api/src/main.ts", "--role=worker", ...rest), { ownGroup: true });
    break;
  case "db:migrate":
    exec(deno(), denoRunArgs("apps/api/src/migrate.ts", ...rest));
    break;
  case "operator":
    exec(deno(), denoRunArgs("apps/operator/src/main.ts", ...rest));
    break;
  case "bench":
    // bench/<name>.ts, run with Deno; see bench/README.md.
    exec(deno(), ["run", ...DENO_RUN_FLAGS, "--allow-run", `bench/${rest[0]}.ts`, ...rest.slice(1)]);
    break;
  case "release": {
    const { buildRelease } = await import("./release.mjs");
    await buildRelease({ log: (line) => console.error(`release: ${line}`) });
    break;
  }
  case "test":
    rmSync(join(root, ".test-results"), { recursive: true, force: true });
    exec(bin("turbo"), ["run", "test", ...TURBO_TEST_FLAGS, ...rest], { after: printTestSummary });
    break;
  case "run":
    exec(bin("turbo"), ["run", ...rest, "--env-mode=loose"]);
    break;
  default:
    console.error(`bootstrap: unknown command '${command}'`);
    process.exit(2);
}
