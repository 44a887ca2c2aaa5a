// The samples of /docs cannot mislead (issue 54, item 1): run as a user would
// copy them, against the real Deno server.
//   - Every operation has curl, Node.js, Python and PHP samples (x-codeSamples), Scalar shows those and not
//     its own (whose Idempotency-Key was the parameter's fixed example), and preselects the one auth scheme.
//   - A send's sample makes a new Idempotency-Key each run: run twice, each sample sends twice (201, two
//     messages), never a 200 replay.
//   - The 201 comes before the 200 replay in each send's responses.
//   - The guide's Getting started, pasted into bash on a machine with only coreutils, node and curl (no
//     /proc, as on macOS), reaches delivered; its Node.js and Python versions do too.
//   - The polling page's wait at the server (ETag, `Prefer: wait`) reaches delivered.
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FRESH_KEY } from "../../src/docs/code-samples.ts";
import { createTestKey, type ServerProcess, startServer } from "../harness.ts";
import { debianToolAvailable } from "../support/debian-tool.ts";
import { type CommandRun, runCommand } from "../support/run.ts";

type Sample = { lang: string; label: string; source: string };
type Operation = {
  operationId: string;
  parameters?: Array<{ in: string; name: string }>;
  "x-codeSamples"?: Sample[];
};

const LABELS = ["curl", "Node.js", "Python", "PHP"];
const FRESH: Record<string, string> = {
  curl: FRESH_KEY.shell,
  "Node.js": FRESH_KEY.node,
  Python: FRESH_KEY.python,
  PHP: FRESH_KEY.php,
};
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const phpAvailable = debianToolAvailable("/usr/bin/php", "the PHP samples of /docs", "php-cli");

function onPath(command: string): string | undefined {
  for (const directory of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(directory, command);
    if (directory && existsSync(candidate)) return candidate;
  }
  return undefined;
}

function run(command: string, args: string[], env: Record<string, string>, cwd: string): Promise<CommandRun> {
  return runCommand(command, args, { cwd, env, timeoutMs: 120_000 });
}

/** The fenced blocks of one language in a Markdown text, in order. */
function fenced(text: string, language: string): string[] {
  const pattern = new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, "gm");
  return [...text.matchAll(pattern)].map((match) => match[1] ?? "");
}

describe("the samples of /docs", () => {
  let server: ServerProcess;
  let text: string;
  let document: {
    paths: Record<string, Record<string, Operation>>;
    tags: Array<{ name: string; description: string }>;
  };
  let work: string;

  beforeAll(async () => {
    server = await startServer({
      backend: "pglite",
      env: { STATUS_CHECK_INTERVAL_SECONDS: "1", SIMULATOR_DELIVERY_DELAY_MS: "2500" },
    });
    text = await (await fetch(`${server.baseUrl}/openapi.json`)).text();
    document = JSON.parse(text);
    work = await mkdtemp(join(tmpdir(), "sms-docs-samples-"));
  }, 120_000);
  afterAll(async () => {
    await server?.cleanup();
    if (work) await rm(work, { recursive: true, force: true });
  });

  const operations = () =>
    Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ path, method, operation })),
    );
  const samplesOf = (operationId: string) =>
    operations().find(({ operation }) => operation.operationId === operationId)?.operation["x-codeSamples"] ??
    [];

  it("every operation has curl, Node.js, Python and PHP samples; a send's make a new key each run, none a fixed one", () => {
    expect(operations().length).toBeGreaterThan(6);
    for (const { path, method, operation } of operations()) {
      const samples = operation["x-codeSamples"] ?? [];
      expect(
        samples.map((sample) => sample.label),
        `${method} ${path}`,
      ).toEqual(LABELS);
      const idempotent = (operation.parameters ?? []).some(
        (parameter) => parameter.in === "header" && parameter.name === "Idempotency-Key",
      );
      for (const sample of samples) {
        expect(sample.source, `${method} ${path} ${sample.label}`).not.toMatch(UUID);
        if (idempotent) expect(sample.source).toContain(FRESH[sample.label]);
        else expect(sample.source).not.toContain("Idempotency-Key");
      }
    }
    expect(samplesOf("sendMessage")).toHaveLength(4);
    expect(samplesOf("startVerification")).toHaveLength(4);
  });

  it("a send's 201 comes before its 200 replay in /openapi.json", () => {
    for (const path of ['"/v1/messages":{"post":', '"/v1/verifications":{"post":']) {
      const at = text.indexOf(path);
      expect(at, path).toBeGreaterThan(-1);
      const responses = text.indexOf('"responses":{', at);
      expect(text.slice(responses, responses + 20)).toBe('"responses":{"201":{');
    }
  });

  it("/docs shows the document's samples, not Scalar's generated ones, and preselects the API key scheme", async () => {
    const page = await (await fetch(`${server.baseUrl}/docs`)).text();
    expect(page).toContain("hiddenClients: true");
    expect(page).toContain("preferredSecurityScheme: 'ApiKey'");
  });

  it("each send sample, run twice as copied, sends twice: two 201s and two messages", {
    timeout: 180_000,
  }, async () => {
    const key = await createTestKey((path, init) => fetch(`${server.baseUrl}${path}`, init));
    const env = { PATH: process.env.PATH ?? "", HOME: work, SMS_API_KEY: key.api_key };
    const runners: Record<string, (source: string) => Promise<{ status: number; id: string }>> = {
      curl: async (source) => {
        const result = await run(onPath("bash") ?? "/bin/bash", ["-c", source], env, work);
        expect(result.code, result.stderr).toBe(0);
        const body = JSON.parse(result.stdout) as { id: string };
        return { status: Number(/^HTTP (\d+)$/m.exec(result.stderr)?.[1]), id: body.id };
      },
      "Node.js": async (source) => {
        const result = await run(process.execPath, ["--input-type=module", "-e", source], env, work);
        expect(result.code, result.stderr).toBe(0);
        return {
          status: Number(result.stdout.split(" ")[0]),
          id: /id: '([^']+)'/.exec(result.stdout)?.[1] ?? "",
        };
      },
      Python: async (source) => {
        const result = await run(onPath("python3") ?? "python3", ["-c", source], env, work);
        expect(result.code, result.stderr).toBe(0);
        const [status, ...rest] = result.stdout.trim().split(" ");
        return { status: Number(status), id: /'id': '([^']+)'/.exec(rest.join(" "))?.[1] ?? "" };
      },
      PHP: async (source) => {
        const file = join(work, `sample-${crypto.randomUUID()}.php`);
        await writeFile(file, source);
        const result = await run("/usr/bin/php", [file], env, work);
        expect(result.code, result.stderr).toBe(0);
        const [statusLine = "", body = "{}"] = result.stdout.trim().split("\n");
        return { status: Number(statusLine.split(" ")[1]), id: (JSON.parse(body) as { id: string }).id };
      },
    };
    for (const operationId of ["sendMessage", "startVerification"]) {
      for (const sample of samplesOf(operationId)) {
        if (sample.label === "PHP" && !phpAvailable) continue;
        const runner = runners[sample.label];
        if (!runner) throw new Error(`no runner for ${sample.label}`);
        const first = await runner(sample.source);
        const second = await runner(sample.source);
        expect([first.status, second.status], `${operationId} ${sample.label}`).toEqual([201, 201]);
        expect(first.id).toMatch(operationId === "sendMessage" ? /^msg_/ : /^vrf_/);
        expect(second.id, `${operationId} ${sample.label}: a replay repeats the id`).not.toBe(first.id);
      }
    }
  });

  it("the guide's Getting started reaches delivered in bash without /proc or uuidgen, and in Node.js and Python", {
    timeout: 240_000,
  }, async () => {
    const page = document.tags.find((tag) => tag.name === "Getting started")?.description ?? "";
    const bash = fenced(page, "bash");
    expect(bash).toHaveLength(3);
    const script = bash.join("\n");
    expect(script).not.toMatch(/\/proc\/|\/sys\/|uuidgen/);
    expect(script.split("\n")[0]).toBe(`BASE_URL=${server.baseUrl}`);
    // bash, coreutils, node and curl: what a bare machine (or macOS) has.
    const bin = join(work, "bin");
    await mkdir(bin, { recursive: true });
    for (const command of ["bash", "od", "tr", "cat", "sleep", "echo"]) {
      const found = onPath(command);
      if (found) await symlink(found, join(bin, command));
    }
    await symlink(process.execPath, join(bin, "node"));
    await symlink(onPath("curl") ?? "/usr/bin/curl", join(bin, "curl"));
    // The polling loop of "Polling and the status lifecycle" finishes it.
    const polling = fenced(
      document.tags.find((tag) => tag.name === "Polling and the status lifecycle")?.description ?? "",
      "bash",
    );
    expect(polling).toHaveLength(1);
    const shell = await run(
      join(bin, "bash"),
      ["-euo", "pipefail", "-c", `${script}\n${polling[0]}`],
      {
        PATH: bin,
        HOME: work,
      },
      work,
    );
    expect(shell.code, shell.stderr).toBe(0);
    expect(shell.stdout).toMatch(/"status":"delivered"/);

    const [js] = fenced(page, "js");
    const node = await run(process.execPath, ["--input-type=module", "-e", js ?? ""], { PATH: bin }, work);
    expect(node.code, node.stderr).toBe(0);
    expect(node.stdout.trim().split("\n")).toEqual(expect.arrayContaining(["201 submitted", "delivered"]));

    const [py] = fenced(page, "python");
    const python = await run(
      onPath("python3") ?? "python3",
      ["-c", py ?? ""],
      { PATH: process.env.PATH ?? "" },
      work,
    );
    expect(python.code, python.stderr).toBe(0);
    expect(python.stdout.trim().split("\n")).toEqual(expect.arrayContaining(["201 submitted", "delivered"]));
  });

  it("the polling page's wait at the server (an extension), run with Node.js, reaches delivered", {
    timeout: 120_000,
  }, async () => {
    const page =
      document.tags.find((tag) => tag.name === "Polling and the status lifecycle")?.description ?? "";
    const [js] = fenced(page, "js");
    expect(js).toContain("If-None-Match");
    const node = await run(
      process.execPath,
      ["--input-type=module", "-e", js ?? ""],
      { PATH: process.env.PATH ?? "" },
      work,
    );
    expect(node.code, node.stderr).toBe(0);
    expect(node.stdout.trim()).toBe("delivered");
  });
});
