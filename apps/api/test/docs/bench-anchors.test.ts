// Code and docs cite a benchmark's figures by a heading that stays (issue 52
// item 5): a `##` heading of bench/README.md (one per bench: today's figures),
// or a heading of the dated log the figure came from (bench/log/<date>.md, whose
// headings keep their dates). Every such citation in the repository's code and
// docs (`bench/README.md#anchor`, `bench/log/<date>.md#anchor`, bare in a
// comment or inside a relative Markdown link) must name an existing file and
// one of its headings, by GitHub's ids; a heading named only in words
// (`bench/README.md, "Read turns"`) cannot be checked and is refused.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { API_DIR } from "../harness.ts";
import { type Heading, headingIds, headings } from "../support/markdown.ts";

const ROOT = resolve(API_DIR, "..", "..");

/** What is the repository's own: not installed, built or written by a run. */
const SKIPPED_DIRECTORIES = new Set([
  "node_modules",
  ".git",
  ".turbo",
  "dist",
  "test-output",
  "coverage",
  "vendor",
  "__pycache__",
  ".venv",
]);
const TEXT_EXTENSIONS = new Set([
  ".ts",
  ".mts",
  ".cts",
  ".js",
  ".mjs",
  ".cjs",
  ".md",
  ".json",
  ".yml",
  ".yaml",
  ".sql",
  ".prisma",
  ".py",
  ".php",
  ".toml",
  ".service",
  ".conf",
  ".cfg",
  ".sh",
  "",
]);

function repositoryFiles(directory: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    if (SKIPPED_DIRECTORIES.has(entry.name)) continue;
    const path = join(directory, entry.name);
    if (entry.isDirectory()) files.push(...repositoryFiles(path));
    else if (entry.isFile() && TEXT_EXTENSIONS.has(extname(entry.name)) && statSync(path).size < 2_000_000)
      files.push(path);
  }
  return files;
}

type BenchCitation = { where: string; file: string; anchor: string };

/** Every `bench/README.md#…` and `bench/log/<name>.md#…` in a text (the path from the repository's root). */
function benchCitations(text: string, where: string): BenchCitation[] {
  const found: BenchCitation[] = [];
  const lines = text.split("\n");
  lines.forEach((line, index) => {
    for (const match of line.matchAll(
      /(?<![\w-])(bench\/(?:README\.md|log\/[\w.-]+\.md))#([\p{L}\p{M}\p{N}_-]+)/gu,
    )) {
      found.push({ where: `${where}:${index + 1}`, file: match[1] ?? "", anchor: match[2] ?? "" });
    }
  });
  return found;
}

/** Citations that name a heading of bench/README.md in words, which no test can follow. */
function wordedBenchCitations(text: string, where: string): string[] {
  const found: string[] = [];
  text.split("\n").forEach((line, index) => {
    if (/bench\/README\.md`?,?\s*["“]/.test(line)) found.push(`${where}:${index + 1}: ${line.trim()}`);
  });
  return found;
}

/** The problems of one citation: its file missing, its anchor no heading, or not one that stays. */
function citationProblem(citation: BenchCitation, read: (file: string) => string | null): string | null {
  const text = read(citation.file);
  const at = `${citation.where} → ${citation.file}#${citation.anchor}`;
  if (text === null) return `${at}: no such file`;
  const heading: Heading | undefined = headings(text).find((each) => each.id === citation.anchor);
  if (!heading) return `${at}: no heading #${citation.anchor} in ${citation.file}`;
  if (citation.file === "bench/README.md" && heading.level !== 2)
    return `${at}: "${heading.text}" is not one of bench/README.md's ## headings (cite the log it came from)`;
  return null;
}

function readRepositoryFile(file: string): string | null {
  try {
    return readFileSync(join(ROOT, file), "utf8");
  } catch {
    return null;
  }
}

describe("citations of the benchmarks' figures", () => {
  it("GitHub's heading ids: lower case, punctuation dropped except '-' and '_', spaces to '-', repeats numbered", () => {
    const ids = headings(
      [
        "## Live path under a slow provider",
        "#### The log's destination (2026-11-27)",
        "### Issue 26's targets, after the changes (2026-11-25, 18:04 and 18:11 UTC)",
        "### `snake_case` and [a link](x.md) (issue 27.1)",
        "### Results",
        "```sh",
        "# not a heading",
        "```",
        "### Results",
      ].join("\n"),
    ).map((heading) => heading.id);
    expect(ids).toEqual([
      "live-path-under-a-slow-provider",
      "the-logs-destination-2026-11-27",
      "issue-26s-targets-after-the-changes-2026-11-25-1804-and-1811-utc",
      "snake_case-and-a-link-issue-271",
      "results",
      "results-1",
    ]);
  });

  it("finds both kinds of citation, and refuses a missing file, a missing heading and a ### of the README", () => {
    const text = [
      "// see bench/README.md#messages, and (bench/log/2026-11-27.md#read-turns-2026-11-27).",
      "[bench](../../bench/log/2026-11-29.md#nowhere) and bench/log/1999-01-01.md#x",
      "also bench/README.md#profiling.",
    ].join("\n");
    const citations = benchCitations(text, "sample");
    expect(citations.map((citation) => `${citation.file}#${citation.anchor}`)).toEqual([
      "bench/README.md#messages",
      "bench/log/2026-11-27.md#read-turns-2026-11-27",
      "bench/log/2026-11-29.md#nowhere",
      "bench/log/1999-01-01.md#x",
      "bench/README.md#profiling",
    ]);
    const files: Record<string, string> = {
      "bench/README.md": "# Benchmarks\n\n## Messages\n\n### Profiling\n",
      "bench/log/2026-11-27.md": "# Log\n\n## Messages\n\n#### Read turns (2026-11-27)\n",
      "bench/log/2026-11-29.md": "# Log\n",
    };
    const problems = citations.map((citation) => citationProblem(citation, (file) => files[file] ?? null));
    expect(problems[0]).toBeNull();
    expect(problems[1]).toBeNull();
    expect(problems[2]).toContain("no heading #nowhere");
    expect(problems[3]).toContain("no such file");
    expect(problems[4]).toContain("not one of bench/README.md's ## headings");
    expect(
      wordedBenchCitations('// (bench/README.md, "Read turns")\n// bench/README.md#x', "sample"),
    ).toHaveLength(1);
  });

  it("every bench/README.md#… and bench/log/<date>.md#… cited in the repository's code and docs names a heading that stays", () => {
    // This file's own samples are meant to be broken.
    const files = repositoryFiles(ROOT).filter(
      (path) => path !== join(API_DIR, "test", "docs", "bench-anchors.test.ts"),
    );
    const citations: BenchCitation[] = [];
    const worded: string[] = [];
    for (const path of files) {
      const where = relative(ROOT, path);
      const text = readFileSync(path, "utf8");
      citations.push(...benchCitations(text, where));
      worded.push(...wordedBenchCitations(text, where));
    }
    // A walk or a pattern that finds nothing would pass vacuously: the code and docs cite both kinds.
    expect(citations.filter((citation) => citation.file === "bench/README.md").length).toBeGreaterThan(5);
    expect(citations.filter((citation) => citation.file.startsWith("bench/log/")).length).toBeGreaterThan(30);
    expect(new Set(citations.map((citation) => citation.where.split(":")[0])).size).toBeGreaterThan(20);
    const problems = citations
      .map((citation) => citationProblem(citation, readRepositoryFile))
      .filter((problem) => problem !== null);
    const unchecked = worded.map((line) => `${line}: a heading named in words (cite it by its #id)`);
    expect([...problems, ...unchecked]).toEqual([]);
  });

  it("bench/README.md keeps the ## heading of every bench", () => {
    const ids = headingIds(readFileSync(join(ROOT, "bench", "README.md"), "utf8"));
    for (const id of [
      "messages",
      "status-check",
      "live-path-under-a-slow-provider",
      "start-up",
      "release-start-up",
      "http-server",
      "templates",
      "dashboard",
      "faults",
      "verifications",
      "partitions",
      "backup-and-restore",
      "failover",
    ]) {
      expect(ids.has(id), id).toBe(true);
    }
  });
});
