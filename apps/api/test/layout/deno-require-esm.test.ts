// No package the service loads offers a `module-sync` export. Deno resolves
// a require() of such a package to its ES module and loads it with a
// blocking load on the runtime's one thread (require(esm)). On Deno 2.9.6,
// with a cold module cache (a new checkout, a new container), the service
// then hung before its first log line: 11 of 15 starts with an empty DENO_DIR
// were not ready within 20 s (bench startup --cold-runs=15), none of 15 once
// the chain below was gone.
// It came in through get-intrinsic 1.3.1 (qs → side-channel → get-intrinsic,
// under trpc-to-openapi and the MCP SDK), which pnpm-workspace.yaml's
// `overrides` pins to 1.3.0 (docs/operations.md, "Start-up").
//
// The walk follows every installed dependency of apps/api from its
// package.json, as Node's resolution finds it, except @scalar/api-reference:
// the service only serves that package's browser bundle as a file
// (src/docs/docs.ts) and never imports it.
import { readFileSync, realpathSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const API_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** Served as a file, never imported (src/docs/docs.ts). */
const FILES_ONLY = new Set(["@scalar/api-reference"]);

type Manifest = {
  name?: string;
  version?: string;
  exports?: unknown;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
};

const isDirectory = (path: string) => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};

/** `name`'s directory as Node's resolution finds it from `fromDir` (node_modules of each ancestor), or null. */
function findPackage(fromDir: string, name: string): string | null {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    if (!dir.endsWith("/node_modules")) {
      const candidate = join(dir, "node_modules", name);
      if (isDirectory(candidate)) return realpathSync(candidate);
    }
    if (dirname(dir) === dir) return null;
  }
}

/** Every package the service can load: apps/api's dependencies and theirs, installed ones only. */
function runtimePackages(): Map<string, Manifest> {
  const seen = new Map<string, Manifest>();
  const visit = (dir: string, root: boolean) => {
    if (seen.has(dir)) return;
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;
    if (!root) seen.set(dir, manifest);
    const names = [
      ...Object.keys(manifest.dependencies ?? {}),
      ...Object.keys(manifest.optionalDependencies ?? {}),
      ...(root ? [] : Object.keys(manifest.peerDependencies ?? {})),
    ];
    for (const name of names) {
      if (FILES_ONLY.has(name)) continue;
      const found = findPackage(dir, name);
      if (found) visit(found, false);
    }
  };
  visit(API_DIR, true);
  return seen;
}

describe("the service's dependencies and Deno's require(esm)", () => {
  it("no package the service loads has a `module-sync` export", () => {
    const packages = runtimePackages();
    const names = new Set([...packages.values()].map((manifest) => manifest.name));
    // The walk reaches the libraries the service is built on, and the chain that brought the hang.
    for (const expected of ["@trpc/server", "trpc-to-openapi", "pg", "pino", "qs", "get-intrinsic"])
      expect(names).toContain(expected);
    const moduleSync = [...packages.values()]
      .filter((manifest) => JSON.stringify(manifest.exports ?? null).includes('"module-sync"'))
      .map((manifest) => `${manifest.name}@${manifest.version}`);
    expect(moduleSync).toEqual([]);
  });
});
