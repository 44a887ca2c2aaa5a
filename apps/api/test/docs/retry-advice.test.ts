// The docs and the three clients agree on what is worth retrying (issue 54 item
// 3), on the words for a check's outcome (item 2) and on the one Idempotency-Key
// rule (issue 52 item 3): no 409 is retried, a
// gateway's 502/504 page on a send is, and a check's outcomes are the REST
// contract's own words. What is checked here is the text every reader meets
// (the /docs guide, the error guide, docs/api-behaviour.md, docs/agents.md, the
// three READMEs) and the clients' retry tables; what the clients do is checked
// against the real server by their own suites (packages/api-client/test/
// package.integration.test.ts, client-python.e2e.test.ts, client-php.e2e.test.ts).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  API_ERROR_CODES,
  CHECK_OUTCOME_STATUSES,
  ERROR_STATUS,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  idempotencyKeyProblem,
  ZIdempotencyKey,
} from "@sms/contract";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ERROR_GUIDE } from "../../src/contract/wording.ts";
import { guidePages } from "../../src/docs/guide.ts";
import { buildOpenApiDocument } from "../../src/docs/openapi.ts";
import { appRouter } from "../../src/router.ts";
import { TOOLS } from "../../src/mcp/tools.ts";
import { API_DIR } from "../harness.ts";

const ROOT = join(API_DIR, "..", "..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const CONFLICTS = API_ERROR_CODES.filter((code) => ERROR_STATUS[code] === 409);
const page = (name: string) =>
  guidePages("https://sms.example.ge").find((p) => p.name === name)?.description ?? "";
const READMES = {
  typescript: "packages/api-client/README.md",
  python: "packages/client-python/README.md",
  php: "packages/client-php/README.md",
} as const;
/** Each client's list of the answers that say nothing was done (retried for any call). */
const NOTHING_DONE = {
  typescript: /const NOTHING_DONE = new Set\(\[([^\]]*)\]\)/.exec(
    read("packages/api-client/src/transport.ts"),
  )?.[1],
  python: /NOTHING_DONE = frozenset\(\{([^}]*)\}\)/.exec(
    read("packages/client-python/src/sms_api/transport.py"),
  )?.[1],
  php: /const NOTHING_DONE = \[([^\]]*)\]/.exec(read("packages/client-php/src/Transport.php"))?.[1],
};
const GATEWAY_STATUSES = {
  typescript: /const GATEWAY_STATUSES = new Set\(\[([^\]]*)\]\)/.exec(
    read("packages/api-client/src/transport.ts"),
  )?.[1],
  python: /GATEWAY_STATUSES = frozenset\(\{([^}]*)\}\)/.exec(
    read("packages/client-python/src/sms_api/transport.py"),
  )?.[1],
  php: /const GATEWAY_STATUSES = \[([^\]]*)\]/.exec(read("packages/client-php/src/Transport.php"))?.[1],
};
const words = (list: string | undefined) => (list ?? "").match(/[a-z_0-9]+/g) ?? [];

describe("no 409 is worth retrying", () => {
  it("the contract's 409s are idempotency_key_reused and the extension's verification_not_pending", () => {
    expect(CONFLICTS).toEqual(["idempotency_key_reused", "verification_not_pending"]);
  });

  it("the error guide never tells a caller to retry a 409", () => {
    for (const code of CONFLICTS) {
      expect(ERROR_GUIDE[code].action, code).not.toMatch(/\bretry (shortly|with|after|later)\b/i);
      expect(ERROR_GUIDE[code].when, code).not.toMatch(/in progress/i);
    }
    expect(ERROR_GUIDE.idempotency_key_reused.action).toMatch(/^Do not retry/);
  });

  it("the /docs guide lists 409 under Never, not Safe, and knows no 409 'in progress'", () => {
    const retries = page("Idempotency and retries");
    const safe = /- \*\*Safe\*\*:([\s\S]*?)\n- /.exec(retries)?.[1] ?? "";
    expect(safe).toMatch(/provider_unavailable/);
    expect(safe).not.toMatch(/409/);
    expect(retries).toMatch(/- \*\*Never\*\*: a `409`/);
    expect(retries).not.toMatch(/in progress/i);
    expect(page("Client libraries")).toMatch(
      /no automatic retry of a\s+`201` `unknown`, a `429 daily_limit_reached` or any `409`/,
    );
  });

  it("docs/api-behaviour.md says it once, and each README says never for any 409 and points there", () => {
    const behaviour = read("docs/api-behaviour.md");
    expect(behaviour).toMatch(/\*\*No `409` is worth retrying\.\*\*/);
    for (const [client, path] of Object.entries(READMES)) {
      const readme = read(path);
      expect(readme, client).toMatch(/\*\*Never retried\*\*[\s\S]*?\*\*(any|every) `409`\*\*/);
      expect(readme, client).toContain("docs/api-behaviour.md#what-the-clients-retry");
    }
  });

  it("no client counts a 409's code among the answers it retries for any call", () => {
    for (const [client, list] of Object.entries(NOTHING_DONE)) {
      expect(words(list).length, client).toBeGreaterThan(0);
      for (const code of CONFLICTS) expect(words(list), client).not.toContain(code);
    }
  });
});

describe("a gateway's 502/504 page on a send is retried with the same key", () => {
  it("the three clients treat the same gateway statuses alike, and their READMEs say so", () => {
    for (const [client, list] of Object.entries(GATEWAY_STATUSES))
      expect(words(list), client).toEqual(["502", "503", "504"]);
    for (const [client, path] of Object.entries(READMES))
      expect(read(path), client).toMatch(/a (foreign )?gateway's own `502`, `503` or `504`\s+page/);
    expect(page("Idempotency and retries")).toMatch(/a `502`, `503` or `504` page from a proxy/);
  });
});

describe("a check's outcome: one vocabulary", () => {
  const expected = [...CHECK_OUTCOME_STATUSES, "verification_not_pending"];

  it("is the check's three 200 statuses and the 409's code, in every client", () => {
    expect(CHECK_OUTCOME_STATUSES).toEqual(["approved", "pending", "max_attempts_reached"]);
    // Read from the sources, as the apps import no client.
    const typescript = /export const CHECK_OUTCOMES = \[([^\]]*)\]/.exec(
      read("packages/api-client/src/index.ts"),
    )?.[1];
    expect(words(typescript)).toEqual(expected);
    const python = /CHECK_OUTCOMES: Tuple\[CheckOutcome, \.\.\.\] = \(([^)]*)\)/.exec(
      read("packages/client-python/src/sms_api/resources.py"),
    )?.[1];
    expect(words(python)).toEqual(expected);
    const php = read("packages/client-php/src/CheckVerificationResult.php");
    const constants = Object.fromEntries(
      [...php.matchAll(/public const (\w+) = '(\w+)';/g)].map((m) => [m[1], m[2]]),
    );
    const listed = [
      ...(/public const OUTCOMES = \[([^\]]*)\]/.exec(php)?.[1] ?? "").matchAll(/self::(\w+)/g),
    ];
    expect(listed.map((m) => constants[m[1] as string])).toEqual(expected);
  });

  it("the OpenAPI document names the check's 200 examples by the three statuses", () => {
    const document = buildOpenApiDocument(appRouter, "http://api.test") as unknown as {
      paths: Record<string, { post?: { responses: Record<string, { content?: Record<string, { examples?: object }> }> } }>;
    };
    const ok = document.paths["/v1/verifications/{verification_id}/check"]?.post?.responses["200"];
    expect(Object.keys(ok?.content?.["application/json"]?.examples ?? {})).toEqual([...CHECK_OUTCOME_STATUSES]);
  });

  it("MCP's check_verification outcome has the check's three statuses (its 409 is the tool error's code)", () => {
    const tool = TOOLS.find((t) => t.name === "check_verification");
    if (!tool) throw new Error("no check_verification tool");
    const outcome = (tool.output.shape as Record<string, { options?: readonly string[] }>).outcome;
    expect(outcome?.options).toEqual([...CHECK_OUTCOME_STATUSES]);
  });

  it("the docs and READMEs use the words, and none of the old names", () => {
    const texts = {
      "docs/api-behaviour.md": read("docs/api-behaviour.md"),
      "docs/agents.md": read("docs/agents.md"),
      "/docs Client libraries": page("Client libraries"),
      ...Object.fromEntries(Object.values(READMES).map((path) => [path, read(path)])),
    };
    for (const [where, text] of Object.entries(texts)) {
      for (const word of expected) expect(text, `${where}: ${word}`).toContain(`\`${word}\``);
      expect(text, where).not.toMatch(/`wrong_code`|`not_pending`/);
    }
  });
});

describe("one Idempotency-Key rule: 1 to IDEMPOTENCY_KEY_MAX_LENGTH characters, on every road", () => {
  it("MCP's send_message and start_verification take the contract's own schema", () => {
    for (const name of ["send_message", "start_verification"]) {
      const argument = TOOLS.find((t) => t.name === name)?.input.shape.idempotency_key;
      // .describe() clones the schema; its checks are the contract's.
      expect(argument?.def.checks, name).toEqual(ZIdempotencyKey.def.checks);
      expect(z.toJSONSchema(argument ?? z.never()), name).toMatchObject({
        minLength: 1,
        maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
      });
    }
  });

  it("the schema counts characters as the header check does: the longest astral key passes, one more fails", () => {
    const longest = "\u{1F511}".repeat(IDEMPOTENCY_KEY_MAX_LENGTH);
    expect(idempotencyKeyProblem(longest)).toBeNull();
    expect(ZIdempotencyKey.safeParse(longest).success).toBe(true);
    expect(idempotencyKeyProblem(`${longest}k`)).toBe("too_long");
    expect(ZIdempotencyKey.safeParse(`${longest}k`).success).toBe(false);
    expect(ZIdempotencyKey.safeParse("").success).toBe(false);
    expect(idempotencyKeyProblem("")).toBe("missing");
  });

  it("the Python and PHP clients, which cannot import it, state the same bound", () => {
    expect(read("packages/client-python/src/sms_api/client.py")).toContain(
      `\`\`idempotency_key\`\`: 1-${IDEMPOTENCY_KEY_MAX_LENGTH} characters`,
    );
    expect(read("packages/client-php/src/Client.php")).toContain(
      `$idempotencyKey 1–${IDEMPOTENCY_KEY_MAX_LENGTH} characters`,
    );
  });
});
