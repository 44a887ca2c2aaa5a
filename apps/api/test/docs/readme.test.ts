// The README is a front door (issue 14): short, its links lead somewhere, and
// its quick start works when pasted into bash on a bare Debian machine that has
// only Node and npm (plus curl): no uuidgen, no jq.
//
//   (a) every relative link in README.md, docs/*.md, bench/README.md and bench/log/*.md points
//       to an existing file, and every #anchor to a heading of that file; every
//       "spec N.M" names a section of docs/spec.md; docs/README.md lists every page;
//   (b) README.md is at most 200 lines;
//   (c) every ```bash block of README.md, run in order with `bash -euo pipefail`
//       against the real Deno server (http://localhost:3000 replaced by its
//       address) with PATH cut down to bash, coreutils, node and curl, gets a
//       201 test key, a 201 submitted message, and polls it to delivered; the
//       ```json examples of the README have the real responses' shapes.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, delimiter, dirname, join, relative, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { API_DIR, type ServerProcess, startServer } from "../harness.ts";
import { headingIds, proseLines } from "../support/markdown.ts";
import { type CommandRun, runCommand } from "../support/run.ts";

const ROOT = resolve(API_DIR, "..", "..");
const README = join(ROOT, "README.md");
const DOCS = join(ROOT, "docs");
const README_BASE_URL = "http://localhost:3000";

function markdownFiles(): string[] {
  const docs = readdirSync(DOCS)
    .filter((name) => name.endsWith(".md"))
    .map((name) => join(DOCS, name));
  const packages = readdirSync(join(ROOT, "packages"))
    .map((name) => join(ROOT, "packages", name, "README.md"))
    .filter((path) => existsSync(path));
  const benchLogs = readdirSync(join(ROOT, "bench", "log"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => join(ROOT, "bench", "log", name));
  return [README, ...docs, join(ROOT, "bench", "README.md"), ...benchLogs, ...packages];
}

/** The fenced blocks of one language, in order. */
function fencedBlocks(text: string, language: string): string[] {
  const blocks: string[] = [];
  const pattern = new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, "gm");
  for (const match of text.matchAll(pattern)) blocks.push(match[1] ?? "");
  return blocks;
}

type Link = { file: string; line: number; target: string };

function relativeLinks(file: string): Link[] {
  const links: Link[] = [];
  for (const { line, number } of proseLines(readFileSync(file, "utf8"))) {
    // Inline code is not a link; keep a placeholder so "[`x`](y)" still is one.
    const prose = line.replace(/`[^`]*`/g, "code");
    for (const match of prose.matchAll(/\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = match[1] ?? "";
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      links.push({ file, line: number, target });
    }
  }
  return links;
}

describe("the README and docs/", () => {
  it("(a) every relative link points to an existing file, and every anchor to a heading", () => {
    const files = markdownFiles();
    const links = files.flatMap(relativeLinks);
    // The README links into docs/ and bench/; a parse that finds nothing would pass vacuously.
    expect(links.filter((link) => link.file === README).length).toBeGreaterThan(10);
    const broken: string[] = [];
    for (const link of links) {
      const [path = "", anchor] = link.target.split("#", 2);
      const target = path === "" ? link.file : resolve(dirname(link.file), decodeURIComponent(path));
      const where = `${relative(ROOT, link.file)}:${link.line} → ${link.target}`;
      if (!existsSync(target)) {
        broken.push(`${where}: no such file`);
        continue;
      }
      if (anchor === undefined || anchor === "") continue;
      if (!target.endsWith(".md") || statSync(target).isDirectory()) continue;
      if (!headingIds(readFileSync(target, "utf8")).has(anchor)) {
        broken.push(`${where}: no heading #${anchor} in ${relative(ROOT, target)}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('every "spec N" or "spec N.M" names a section of docs/spec.md', () => {
    const spec = readFileSync(join(DOCS, "spec.md"), "utf8");
    // A section N.M is a "### N.M" heading or, in a section without subsections, its numbered item M.
    const known = new Set<string>();
    let section: string | undefined;
    for (const line of spec.split("\n")) {
      const top = /^## (\d+)\. /.exec(line)?.[1];
      if (top) {
        section = top;
        known.add(top);
        continue;
      }
      const sub = /^### (\d+\.\d+) /.exec(line)?.[1];
      if (sub) known.add(sub);
      const item = /^(\d+)\. /.exec(line)?.[1];
      if (item && section) known.add(`${section}.${item}`);
    }
    expect(known.has("4.2")).toBe(true);
    expect(known.has("1.6")).toBe(true);
    const unknown: string[] = [];
    let references = 0;
    for (const file of markdownFiles()) {
      if (file === join(DOCS, "spec.md")) continue;
      const text = readFileSync(file, "utf8");
      for (const match of text.matchAll(/\bspec(?:\s+section)?\s+(\d+(?:\.\d+)?)/gi)) {
        references++;
        if (!known.has(match[1] ?? "")) unknown.push(`${relative(ROOT, file)}: ${match[0]}`);
      }
    }
    expect(references).toBeGreaterThan(10);
    expect(unknown).toEqual([]);
  });

  it("docs/README.md lists every page of docs/", () => {
    const linked = new Set(
      relativeLinks(join(DOCS, "README.md")).map((link) =>
        resolve(DOCS, decodeURIComponent(link.target.split("#")[0] ?? "")),
      ),
    );
    const pages = readdirSync(DOCS)
      .filter((name) => name.endsWith(".md") && name !== "README.md")
      .map((name) => join(DOCS, name));
    expect(pages.length).toBeGreaterThan(5);
    expect(pages.filter((page) => !linked.has(page)).map((page) => relative(ROOT, page))).toEqual([]);
  });

  it("(d) the quick start works on Linux and macOS and leads to the dashboard (issue 25)", () => {
    const readme = readFileSync(README, "utf8");
    const script = fencedBlocks(readme, "bash").join("\n");
    // Nothing only Linux has: macOS has no /proc or /sys.
    expect(script).not.toMatch(/\/proc\/|\/sys\//);
    expect(script).toContain(`Idempotency-Key: $(node -e "console.log(crypto.randomUUID())")`);
    const prerequisites = readme.split("\n").find((line) => line.startsWith("Prerequisites:")) ?? "";
    expect(prerequisites).toContain("`git`");
    expect(prerequisites).toContain("Node.js");
    expect(readme).toMatch(/open the `claim_url`[\s\S]*Sign in as a local\s+developer[\s\S]*\/dashboard/);
  });

  it("docs/testing.md names only test files that exist, and every file of apps/api/test", () => {
    const page = readFileSync(join(DOCS, "testing.md"), "utf8");
    // apps/api/test is organised by area (one folder each); every test file sits in one.
    const files = readdirSync(join(API_DIR, "test"), { recursive: true, encoding: "utf8" })
      .filter((name) => name.endsWith(".test.ts"))
      .map((name) => join(API_DIR, "test", name));
    expect(
      files.filter((path) => dirname(path) === join(API_DIR, "test")).map((path) => relative(ROOT, path)),
    ).toEqual([]);
    const byName = new Map<string, string[]>();
    for (const path of files) byName.set(basename(path), [...(byName.get(basename(path)) ?? []), path]);
    expect([...byName].filter(([, paths]) => paths.length > 1).map(([name]) => name)).toEqual([]);
    const named = new Set<string>();
    for (const match of page.matchAll(/`([^`\s*]+\.test\.ts)`/g)) {
      const name = match[1] ?? "";
      // A bare name is one of apps/api/test's (its area's folder is in the row); a path is from the repository's root.
      named.add(
        name.includes("/") ? resolve(ROOT, name) : (byName.get(name)?.[0] ?? join(API_DIR, "test", name)),
      );
    }
    expect(named.size).toBeGreaterThan(40);
    expect([...named].filter((path) => !existsSync(path)).map((path) => relative(ROOT, path))).toEqual([]);
    expect(files.filter((path) => !named.has(path)).map((path) => relative(ROOT, path))).toEqual([]);
  });

  it("(b) README.md is at most 200 lines", () => {
    const lines = readFileSync(README, "utf8").trimEnd().split("\n").length;
    expect(lines).toBeLessThanOrEqual(200);
  });
});

// ---------------------------------------------------------------------------
// (c) The quick start, pasted.

function onPath(command: string, path = process.env.PATH ?? ""): string | undefined {
  for (const directory of path.split(delimiter)) {
    if (!directory) continue;
    const candidate = join(directory, command);
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

/** Outside CI a machine without curl skips the quick start; in CI that is a failure. */
function curlMissing(): boolean {
  if (onPath("curl")) return false;
  if (process.env.CI)
    throw new Error("curl is missing: the README's quick start needs it (apt-get install curl)");
  console.warn("skipping the README quick-start test: curl is not installed (apt-get install curl)");
  return true;
}

// What a bare Debian system has (bash and coreutils, essential packages), plus
// Node and curl. Notably absent: uuidgen (uuid-runtime) and jq.
const BARE_DEBIAN = [
  "bash",
  "sh",
  "cat",
  "sleep",
  "echo",
  "printf",
  "head",
  "tail",
  "tr",
  "cut",
  "sed",
  "grep",
  "env",
  "mktemp",
  "tee",
  "date",
  "wc",
  "sort",
  "uniq",
  "ls",
  "rm",
  "mkdir",
  "true",
  "false",
  "test",
  "expr",
  "seq",
  "basename",
  "dirname",
];

async function bareBin(directory: string): Promise<string> {
  await mkdir(directory, { recursive: true });
  for (const command of BARE_DEBIAN) {
    const found = onPath(command);
    if (found) await symlink(found, join(directory, command));
  }
  await symlink(process.execPath, join(directory, "node"));
  await symlink(onPath("curl") ?? "curl", join(directory, "curl"));
  return directory;
}

function runBash(
  script: string,
  options: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<CommandRun> {
  return runCommand(onPath("bash") ?? "/bin/bash", ["-euo", "pipefail", "-c", script], options);
}

const sortedKeys = (value: unknown) => Object.keys(value as object).sort();

describe.skipIf(curlMissing())("(c) the README's quick start, pasted into bash", () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it("gets a 201 test key, a 201 submitted message, and polls it to delivered", {
    timeout: 180_000,
  }, async () => {
    const readme = readFileSync(README, "utf8");
    const blocks = fencedBlocks(readme, "bash");
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    for (const block of blocks) expect(block).toContain(README_BASE_URL);
    const examples = fencedBlocks(readme, "json").map(
      (block) => JSON.parse(block) as Record<string, unknown>,
    );
    expect(examples.length).toBe(3);

    const server: ServerProcess = await startServer({
      backend: "pglite",
      // A quicker status check than the defaults (20 s, 5 s), so the poll ends within seconds.
      env: { STATUS_CHECK_INTERVAL_SECONDS: "1", SIMULATOR_DELIVERY_DELAY_MS: "2500" },
    });
    cleanups.push(() => server.cleanup());
    const work = await mkdtemp(join(tmpdir(), "sms-readme-"));
    cleanups.push(() => rm(work, { recursive: true, force: true }));
    const bin = await bareBin(join(work, "bin"));
    const home = join(work, "home");
    await mkdir(home);
    expect(onPath("uuidgen", bin)).toBeUndefined();
    expect(onPath("jq", bin)).toBeUndefined();

    const script = blocks.map((block) => block.replaceAll(README_BASE_URL, server.baseUrl)).join("\n");
    const result = await runBash(script, { cwd: home, env: { PATH: bin, HOME: home }, timeoutMs: 150_000 });
    const context = `exit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
    expect(result.code, context).toBe(0);

    // Status lines go to stderr (curl -w '%{stderr}…'), one per POST.
    expect(result.stderr.trim().split("\n"), context).toEqual(["HTTP 201", "HTTP 201"]);
    const outputs = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const [testKey, message, ...polls] = outputs;
    expect(polls.length, context).toBeGreaterThanOrEqual(1);

    expect(testKey?.api_key).toMatch(/^sk_test_[A-Za-z0-9_-]{43}$/);
    expect(testKey?.mode).toBe("test");
    expect(String(testKey?.claim_url).startsWith(`${server.baseUrl}/claim/`)).toBe(true);
    expect(message).toMatchObject({
      object: "message",
      status: "submitted",
      to: "+9955••••••56",
      error: null,
    });
    expect(message?.id).toMatch(/^msg_/);
    for (const poll of polls) expect(poll.id).toBe(message?.id);
    for (const poll of polls.slice(0, -1)) expect(["queued", "submitted"]).toContain(poll.status);
    expect(polls.at(-1)?.status, context).toBe("delivered");

    // The README's example responses have the real shapes, in order: key, submitted, delivered.
    const [keyExample, messageExample, deliveredExample] = examples;
    expect(sortedKeys(keyExample)).toEqual(sortedKeys(testKey));
    expect(keyExample?.mode).toBe(testKey?.mode);
    expect(keyExample?.next_steps).toBe(testKey?.next_steps);
    expect(sortedKeys(messageExample)).toEqual(sortedKeys(message));
    expect(messageExample?.status).toBe(message?.status);
    expect(messageExample?.to).toBe(message?.to);
    expect(sortedKeys(deliveredExample)).toEqual(sortedKeys(polls.at(-1)));
    expect(deliveredExample?.status).toBe(polls.at(-1)?.status);

    // The server saw exactly what the README did: one message, now delivered.
    const read = await fetch(`${server.baseUrl}/v1/messages/${message?.id}`, {
      headers: { Authorization: `Bearer ${testKey?.api_key}` },
    });
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual(polls.at(-1));
  });
});
