// docs/operations.md's configuration table lists every environment variable
// the service reads, and nothing else (issue 51). What the code reads: the
// keys of the composed schema (src/config/index.ts's ZEnv: every slice's
// variables), plus every other `process.env` / `Deno.env`
// read in production code (apps/*/src and packages/*/src, tests, test
// harnesses and generated code left out). A read this test cannot name (a
// computed name, a destructuring) fails it rather than slip past.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ZEnv } from "../../src/config/index.ts";
import { API_DIR } from "../harness.ts";

const ROOT = join(API_DIR, "..", "..");

function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (["node_modules", "generated", "test", "testing", "fakes"].includes(name)) continue;
      files.push(...sourceFiles(path));
    } else if (/\.(ts|mts|js|mjs)$/.test(name) && !/\.test\.|\.d\.ts$/.test(name)) {
      files.push(path);
    }
  }
  return files;
}

function productionFiles(): string[] {
  const files: string[] = [];
  for (const parent of ["apps", "packages"]) {
    for (const name of readdirSync(join(ROOT, parent))) {
      const src = join(ROOT, parent, name, "src");
      if (statSync(join(ROOT, parent, name)).isDirectory() && exists(src)) files.push(...sourceFiles(src));
    }
  }
  return files;
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Block and line comments out (a `//` after a colon or a quote is a URL's or a string's). */
function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

/**
 * Single- and double-quoted strings emptied: a read inside one is text the
 * service writes for someone else (the /docs code samples' `process.env.SMS_API_KEY`),
 * not a variable it reads. Template literals stay: `${process.env.X}` in one is a read.
 */
function withoutQuotedStrings(source: string): string {
  return source.replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'/g, '""');
}

/** The composed schema's keys: every slice's variables. */
function schemaVariables(): string[] {
  return Object.keys(ZEnv.shape);
}

/** Every other read of the environment in production code, by name; the reads it cannot name. */
function otherReads(): { names: string[]; unnamed: string[] } {
  const names: string[] = [];
  const unnamed: string[] = [];
  for (const file of productionFiles()) {
    const source = withoutQuotedStrings(withoutComments(readFileSync(file, "utf8")));
    for (const match of source.matchAll(/\b(process\.env|Deno\.env)\b(.{0,60})/g)) {
      const [, what, after = ""] = match;
      const named =
        what === "process.env"
          ? /^(?:\.([A-Z_][A-Z0-9_]*)|\[\s*["']([A-Z_][A-Z0-9_]*)["']\s*\])/.exec(after)
          : /^\.get\(\s*["']([A-Z_][A-Z0-9_]*)["']\s*\)/.exec(after);
      const name = named?.[1] ?? named?.[2];
      if (name) names.push(name);
      // The whole environment handed to a parser of src/config (parseEnv, parseMigrationEnv): the schema's variables.
      else if (!/\bparse\w*Env\(\s*$/.test(source.slice(0, match.index))) {
        unnamed.push(`${relative(ROOT, file)}: ${what}${after.split("\n")[0]}`);
      }
    }
  }
  return { names, unnamed };
}

/** The variable names in the first column of docs/operations.md's configuration table. */
function documentedVariables(): string[] {
  const page = readFileSync(join(ROOT, "docs", "operations.md"), "utf8");
  const start = page.indexOf("\n## Configuration\n");
  const end = page.indexOf("\n## ", start + 1);
  expect(start, "docs/operations.md has ## Configuration").toBeGreaterThan(0);
  const names: string[] = [];
  for (const line of page.slice(start, end).split("\n")) {
    if (!line.startsWith("| `")) continue;
    const firstCell = line.split("|")[1] ?? "";
    for (const match of firstCell.matchAll(/`([^`]+)`/g)) {
      const name = match[1] as string;
      expect(name, `a variable name in the table: ${name}`).toMatch(/^[A-Z][A-Z0-9_]*$/);
      names.push(name);
    }
  }
  return names;
}

describe("docs/operations.md and the code read the same variables", () => {
  it("every read of the environment names its variable", () => {
    expect(otherReads().unnamed).toEqual([]);
  });

  it("the table lists each variable once", () => {
    const documented = documentedVariables();
    expect(documented.filter((name, i) => documented.indexOf(name) !== i)).toEqual([]);
  });

  it("the table lists every variable the code reads, and nothing else", () => {
    const read = new Set([...schemaVariables(), ...otherReads().names]);
    const documented = new Set(documentedVariables());
    expect(read.size).toBeGreaterThan(70);
    expect([...read].filter((name) => !documented.has(name)).sort(), "read but not documented").toEqual([]);
    expect([...documented].filter((name) => !read.has(name)).sort(), "documented but not read").toEqual([]);
  });
});
