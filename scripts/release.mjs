// `npm run release`: the release an operator unpacks and runs (docs/deploy.md, "The release").
//
//   dist/release/                              what the server runs, laid out like the checkout
//   dist/sms-api-<version>-linux-x64.tar.gz    the same, packed (unpack into an empty directory)
//
// A production install beside a copied Deno binary: the service's own sources
// (no tests, no generated Prisma client, no test harness), prisma/migrations,
// a `pnpm install --prod --offline` of the runtime packages from the lockfile,
// pruned to the packages the server can load, and bin/sms-api, which runs
// apps/api/src/main.ts with the one list of permissions (scripts/deno.mjs
// DENO_RUN_FLAGS). No `deno compile`: it needs `denort`, a second binary Deno
// downloads from its own host, which no registry here ships.
//
// import { buildRelease } from "./scripts/release.mjs";
// const { dir, tarball, version } = await buildRelease({ outDir: "/tmp/x" });
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { DENO_RUN_FLAGS, denoBinary } from "./deno.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The workspace packages the server runs (apps/api and what it imports). */
export const RUNTIME_PACKAGES = Object.freeze([
  "apps/api",
  "packages/contract",
  "packages/crypto",
  "packages/db",
  "packages/domain",
  "packages/provider-sim",
  "packages/provider-ubill",
  "packages/templates",
  "packages/web",
]);

/**
 * Packages whose code the server never loads: it reads one file from them.
 * Their dependencies are not installed into the release, and of the package
 * itself only these files (and package.json) are kept.
 */
const FILE_ONLY_PACKAGES = {
  // apps/api/src/docs/docs.ts resolves the entry, then reads browser/standalone.js beside it.
  "@scalar/api-reference": (dir) => {
    const entry = createRequire(join(dir, "package.json")).resolve("@scalar/api-reference");
    return [relative(dir, entry), join(relative(dir, dirname(entry)), "browser", "standalone.js")];
  },
};

/**
 * Required peers that only matter to the compiler: @trpc/server and
 * @trpc/client name TypeScript as a peer for their types.
 */
const TYPE_ONLY_PEERS = new Set(["typescript"]);

/** Files in node_modules the server never reads: source maps, type declarations, read-mes, packages' own tests. */
const NOT_LOADED = /(\.(map|d\.ts|d\.mts|d\.cts|md|markdown)|\.(test|spec)\.[cm]?[jt]sx?)$/i;
/** Packages' own test folders. */
const TEST_DIRS = new Set(["test", "tests", "__tests__"]);

/** What never belongs in a release, wherever it sits (checked again by the smoke test). */
export const FORBIDDEN = Object.freeze([
  /(^|\/)node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?(prisma|@prisma\/[^/]+|vitest|@vitest\/[^/]+|@biomejs\/[^/]+|turbo|turbo-[^/]+|playwright|playwright-core|dependency-cruiser|tsup|pglite-prisma-adapter)(\/|$)/,
  /\.(test|spec)\.[cm]?[jt]sx?$/,
  /^(apps|packages)\/[^/]+\/src\/(generated|testing)\//,
  /(^|\/)node_modules\/.*\/(test|tests|__tests__)\//,
]);

/** Sources the release leaves out of a runtime package's src/. */
function isExcludedSource(path) {
  return (
    /\.test\.ts$/.test(path) ||
    path.includes(`${sep}generated${sep}`) ||
    path.endsWith(`${sep}generated`) ||
    path.includes(`${sep}testing${sep}`) ||
    path.endsWith(`${sep}testing`) ||
    /(^|\/)(testing|fake-server)\.ts$/.test(path.split(sep).join("/"))
  );
}

function run(cmd, args, cwd) {
  const result = spawnSync(cmd, args, {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
    encoding: "utf8",
    env: { ...process.env, npm_config_update_notifier: "false" },
  });
  if (result.status !== 0) {
    throw new Error(
      `release: '${cmd} ${args.join(" ")}' failed (exit ${result.status ?? result.signal}):\n${result.stderr}${result.stdout}`,
    );
  }
  return result.stdout;
}

function readJson(path) {
  return JSON.parse(readFileSync(path, "utf8"));
}

/** Where `name` resolves from the real directory `from` (Node's lookup up the node_modules chain). */
function resolvePackageDir(from, name) {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", ...name.split("/"));
    if (existsSync(join(candidate, "package.json"))) return realpathSync(candidate);
    if (dirname(dir) === dir) return null;
  }
}

/**
 * Keeps, of the installed node_modules/.pnpm entries, those the runtime
 * packages reach through dependencies, optional dependencies and required
 * peers (not through FILE_ONLY_PACKAGES), and deletes the rest.
 */
function prune(dir) {
  const store = join(dir, "node_modules", ".pnpm");
  const keep = new Set();
  const fileOnly = new Map();
  const seen = new Set();
  const queue = RUNTIME_PACKAGES.map((p) => join(dir, p));
  while (queue.length > 0) {
    const pkgDir = queue.pop();
    if (seen.has(pkgDir)) continue;
    seen.add(pkgDir);
    const manifest = readJson(join(pkgDir, "package.json"));
    if (pkgDir.startsWith(store + sep)) keep.add(relative(store, pkgDir).split(sep)[0]);
    if (FILE_ONLY_PACKAGES[manifest.name] && !RUNTIME_PACKAGES.some((p) => join(dir, p) === pkgDir)) {
      fileOnly.set(pkgDir, FILE_ONLY_PACKAGES[manifest.name](pkgDir));
      continue;
    }
    const optionalPeers = manifest.peerDependenciesMeta ?? {};
    const names = [
      ...Object.keys(manifest.dependencies ?? {}),
      ...Object.keys(manifest.optionalDependencies ?? {}),
      ...Object.keys(manifest.peerDependencies ?? {}).filter(
        (name) => !optionalPeers[name]?.optional && !TYPE_ONLY_PEERS.has(name),
      ),
    ];
    for (const name of names) {
      const found = resolvePackageDir(pkgDir, name);
      if (found) queue.push(found);
    }
  }
  for (const entry of readdirSync(store)) {
    if (entry === "node_modules" || keep.has(entry)) continue;
    rmSync(join(store, entry), { recursive: true, force: true });
  }
  for (const [pkgDir, files] of fileOnly) {
    const saved = [...files, "package.json"].map((file) => [file, readFileSync(join(pkgDir, file))]);
    rmSync(pkgDir, { recursive: true, force: true });
    for (const [file, bytes] of saved) {
      mkdirSync(dirname(join(pkgDir, file)), { recursive: true });
      writeFileSync(join(pkgDir, file), bytes);
    }
  }
  removeDanglingLinks(join(dir, "node_modules"));
  for (const entry of readdirSync(store, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath ?? entry.path, entry.name);
    if (!existsSync(path)) continue; // inside a test folder removed meanwhile
    if (entry.isDirectory() && TEST_DIRS.has(entry.name)) rmSync(path, { recursive: true, force: true });
    else if (entry.isFile() && NOT_LOADED.test(entry.name)) rmSync(path);
  }
  for (const p of RUNTIME_PACKAGES) removeDanglingLinks(join(dir, p, "node_modules"));
}

/** Symbolic links whose target was pruned (pnpm's hoisted .pnpm/node_modules, and the packages' own). */
function removeDanglingLinks(dir) {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isSymbolicLink()) {
      if (!existsSync(path)) rmSync(path);
    } else if (
      entry.isDirectory() &&
      (entry.name.startsWith("@") || entry.name === ".pnpm" || entry.name === "node_modules")
    ) {
      removeDanglingLinks(path);
    } else if (entry.isDirectory() && basename(dir) === ".pnpm") {
      removeDanglingLinks(join(path, "node_modules"));
    }
  }
}

/** The release's one command: Deno with DENO_RUN_FLAGS on apps/api/src/main.ts; `--role=worker` and the like pass through. */
function launcher() {
  const flags = DENO_RUN_FLAGS.map((flag) => `'${flag}'`).join(" ");
  return `#!/bin/sh
# The SMS API: ./bin/sms-api [--role=api|worker]. Configured by its environment alone
# (docs/operations.md); written by scripts/release.mjs, the flags from scripts/deno.mjs.
# Needs nothing on PATH: the release's own Deno runs the release's own sources.
set -e
case "$0" in */*) bin=\${0%/*} ;; *) bin=. ;; esac
if [ -L "$0" ] && command -v readlink >/dev/null 2>&1; then target=$(readlink -f "$0"); bin=\${target%/*}; fi
here=$(CDPATH= cd -- "$bin/.." && pwd -P)
export DENO_NO_UPDATE_CHECK=1 DENO_NO_PROMPT=1
exec "$here/bin/deno" run ${flags} --no-lock "$here/apps/api/src/main.ts" "$@"
`;
}

function directorySize(dir) {
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath ?? entry.path, entry.name);
    const stat = lstatSync(path);
    if (stat.isFile()) bytes += stat.size;
  }
  return bytes;
}

/**
 * Builds the release into `outDir` (default dist/): `outDir/release/` and
 * `outDir/sms-api-<version>-linux-x64.tar.gz`. Offline: the packages come from
 * the local pnpm store the workspace was installed from.
 */
export async function buildRelease({ outDir = join(ROOT, "dist"), log = () => {} } = {}) {
  const started = Date.now();
  const { packageManager } = readJson(join(ROOT, "package.json"));
  const { version } = readJson(join(ROOT, "apps", "api", "package.json"));
  const dir = join(outDir, "release");
  const tarball = join(outDir, `sms-api-${version}-linux-x64.tar.gz`);
  rmSync(dir, { recursive: true, force: true });
  rmSync(tarball, { force: true });
  mkdirSync(dir, { recursive: true });

  // 1. The workspace's manifests and lockfile, for a frozen production install of apps/api's tree.
  for (const file of ["package.json", "pnpm-lock.yaml", "pnpm-workspace.yaml"])
    copyFileSync(join(ROOT, file), join(dir, file));
  cpSync(join(ROOT, "patches"), join(dir, "patches"), { recursive: true });
  const { workspaces } = readJson(join(ROOT, "package.json"));
  const members = workspaces.flatMap((pattern) =>
    pattern.endsWith("/*")
      ? readdirSync(join(ROOT, pattern.slice(0, -2))).map((name) => `${pattern.slice(0, -2)}/${name}`)
      : [pattern],
  );
  for (const member of members.filter((m) => existsSync(join(ROOT, m, "package.json")))) {
    mkdirSync(join(dir, member), { recursive: true });
    copyFileSync(join(ROOT, member, "package.json"), join(dir, member, "package.json"));
  }
  log("installing the production dependencies (offline) …");
  const storeDir = workspaceStoreDir();
  run(
    "npx",
    [
      "--yes",
      packageManager,
      "install",
      "--prod",
      "--frozen-lockfile",
      "--offline",
      "--ignore-scripts",
      "--filter",
      "@sms/api...",
      ...(storeDir ? ["--store-dir", storeDir] : []),
    ],
    dir,
  );

  // 2. Only the runtime packages stay; the install's own files go.
  for (const member of members)
    if (!RUNTIME_PACKAGES.includes(member)) rmSync(join(dir, member), { recursive: true, force: true });
  for (const file of [
    "pnpm-lock.yaml",
    "pnpm-workspace.yaml",
    "patches",
    "node_modules/.modules.yaml",
    "node_modules/.pnpm-workspace-state-v1.json",
    "node_modules/.pnpm/lock.yaml",
  ]) {
    rmSync(join(dir, file), { recursive: true, force: true });
  }
  rmSync(join(dir, "node_modules", ".bin"), { recursive: true, force: true });
  for (const p of RUNTIME_PACKAGES)
    rmSync(join(dir, p, "node_modules", ".bin"), { recursive: true, force: true });
  writeFileSync(
    join(dir, "package.json"),
    `${JSON.stringify({ name: "sms-api", version, private: true, type: "module", workspaces: [...RUNTIME_PACKAGES] }, null, 2)}\n`,
  );
  prune(dir);

  // 3. The sources (no tests, no generated client, no test harness) and the migrations.
  for (const p of RUNTIME_PACKAGES) {
    cpSync(join(ROOT, p, "src"), join(dir, p, "src"), {
      recursive: true,
      filter: (source) => !isExcludedSource(source),
    });
  }
  cpSync(join(ROOT, "prisma", "migrations"), join(dir, "prisma", "migrations"), { recursive: true });

  // 4. The runtime and the command.
  mkdirSync(join(dir, "bin"), { recursive: true });
  copyFileSync(denoBinary(), join(dir, "bin", "deno"));
  chmodSync(join(dir, "bin", "deno"), 0o755);
  writeFileSync(join(dir, "bin", "sms-api"), launcher(), { mode: 0o755 });
  writeFileSync(
    join(dir, "RELEASE"),
    `sms-api ${version}\nbuilt ${new Date().toISOString()}\ncommit ${gitCommit()}\ndeno ${run(denoBinary(), ["--version"], ROOT).split("\n")[0]}\n`,
  );

  const forbidden = readdirSync(dir, { recursive: true })
    .map((path) => String(path).split(sep).join("/"))
    .filter((path) => FORBIDDEN.some((pattern) => pattern.test(path)));
  if (forbidden.length > 0)
    throw new Error(`release: forbidden content: ${forbidden.slice(0, 10).join(", ")}`);

  // 5. Packed: unpack into an empty directory (e.g. /opt/sms-api) and run ./bin/sms-api.
  run("tar", ["-czf", tarball, "-C", dir, "--owner=0", "--group=0", "."], ROOT);
  const unpackedBytes = directorySize(dir);
  const result = {
    dir,
    tarball,
    version,
    unpackedBytes,
    tarballBytes: statSync(tarball).size,
    seconds: (Date.now() - started) / 1000,
  };
  log(
    `release ${version}: ${relative(ROOT, dir) || dir} (${(unpackedBytes / 1e6).toFixed(1)} MB), ${relative(ROOT, tarball)} (${(result.tarballBytes / 1e6).toFixed(1)} MB) in ${result.seconds.toFixed(1)} s`,
  );
  return result;
}

/**
 * The pnpm store the workspace was installed from (node_modules/.modules.yaml), so that the offline
 * install finds it wherever outDir is (pnpm otherwise picks a store on outDir's file system).
 */
function workspaceStoreDir() {
  const file = join(ROOT, "node_modules", ".modules.yaml");
  if (!existsSync(file)) return null;
  const found = readFileSync(file, "utf8").match(/^\s*"?storeDir"?:\s*"?([^"\n]+)"?\s*$/m)?.[1];
  if (!found) return null;
  // Recorded with pnpm's layout version (…/store/v10); --store-dir takes the folder above it.
  return /^v\d+$/.test(basename(found)) ? dirname(found) : found;
}

function gitCommit() {
  const result = spawnSync("git", ["rev-parse", "HEAD"], { cwd: ROOT, encoding: "utf8" });
  return result.status === 0 ? result.stdout.trim() : "unknown";
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outIndex = process.argv.indexOf("--out");
  const outDir = outIndex > 0 ? process.argv[outIndex + 1] : undefined;
  buildRelease({ ...(outDir ? { outDir } : {}), log: (line) => console.error(line) }).catch((error) => {
    console.error(error.message);
    process.exit(1);
  });
}
