// Every entry point is type-checked: each script the bootstrap runs with Deno
// (and every benchmark) must be in its package's `tsc` program or in the
// `deno check` list of its package's "typecheck" script. A file in neither
// would let a type error through CI.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");

function entryPoints(): string[] {
  const bootstrap = readFileSync(join(ROOT, "scripts", "bootstrap.mjs"), "utf8");
  const run = [...bootstrap.matchAll(/denoRunArgs\("([^"]+\.ts)"/g)].map((match) => match[1] as string);
  const bench = readdirSync(join(ROOT, "bench"))
    .filter((name) => name.endsWith(".ts"))
    .map((name) => `bench/${name}`);
  return [...new Set([...run, ...bench])];
}

function packageOf(file: string): string {
  for (let dir = dirname(join(ROOT, file)); dir.startsWith(ROOT); dir = dirname(dir)) {
    try {
      readFileSync(join(dir, "package.json"));
      return dir;
    } catch {
      // keep going up
    }
  }
  throw new Error(`no package for ${file}`);
}

/** Minimal glob: `*` within one path segment. */
const globToRegExp = (glob: string) =>
  new RegExp(`^${glob.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*")}$`);

function coveredBy(file: string): string | null {
  const dir = packageOf(file);
  const fromPackage = relative(dir, join(ROOT, file));
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
    scripts?: Record<string, string>;
  };
  const typecheck = manifest.scripts?.typecheck ?? "";
  // deno check lists, relative to the package (or to its parent after `cd ..`).
  const commands = typecheck.split("&&").map((part) => part.trim());
  const checkedFrom = commands.includes("cd ..") ? dirname(dir) : dir;
  for (const command of commands.filter((part) => part.startsWith("deno check "))) {
    for (const arg of command.slice("deno check ".length).split(/\s+/)) {
      if (globToRegExp(arg).test(relative(checkedFrom, join(ROOT, file)))) return `deno check (${arg})`;
    }
  }
  if (typecheck.includes("tsc -p tsconfig.json")) {
    const raw = readFileSync(join(dir, "tsconfig.json"), "utf8").replace(/^\s*\/\/.*$/gm, "");
    const config = JSON.parse(raw) as { include?: string[]; exclude?: string[] };
    const inside = (patterns: string[] = []) =>
      patterns.some((pattern) => fromPackage === pattern || fromPackage.startsWith(`${pattern}/`));
    if (inside(config.include) && !inside(config.exclude)) return "tsc";
  }
  return null;
}

describe("entry points", () => {
  const entries = entryPoints();

  it("finds the service, the operator tool, the migrator and the benchmarks", () => {
    expect(entries).toEqual(
      expect.arrayContaining([
        "apps/api/src/main.ts",
        "apps/operator/src/main.ts",
        "apps/api/src/migrate.ts",
        "bench/messages.ts",
      ]),
    );
  });

  it.each(entries)("%s is type-checked by npm run typecheck", (file) => {
    expect(coveredBy(file), `${file} is in no tsc program and no deno check list`).not.toBeNull();
  });
});
