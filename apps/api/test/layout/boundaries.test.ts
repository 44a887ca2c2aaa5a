// The import boundaries (.dependency-cruiser.cjs, run by `npm run lint`):
// the repository keeps them, and each rule bites on a planted violation, so
// the check cannot pass by checking nothing.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");
const CONFIG = join(ROOT, ".dependency-cruiser.cjs");
const DEPCRUISE = join(ROOT, "node_modules", ".bin", "depcruise");

type Violation = { rule: string; from: string; to: string };

/** Runs the check exactly as `npm run lint` does (its exit code and its lines). */
function cruise(cwd: string, paths: string[]): { exitCode: number | null; violations: Violation[] } {
  const run = spawnSync(DEPCRUISE, [...paths, "--config", CONFIG, "--output-type", "err"], {
    cwd,
    encoding: "utf8",
  });
  const violations = [...run.stdout.matchAll(/^\s*error (\S+): (\S+) →\s+(\S+)/gm)].map(
    ([, rule, from, to]) => ({
      rule: rule ?? "",
      from: from ?? "",
      to: to ?? "",
    }),
  );
  return { exitCode: run.status, violations };
}

describe("import boundaries", () => {
  const fixtures: string[] = [];
  afterAll(() => {
    for (const dir of fixtures) rmSync(dir, { recursive: true, force: true });
  });

  /** A tree of files (path → source) in a temporary directory laid out like the repository. */
  function plant(files: Record<string, string>): string {
    const dir = mkdtempSync(join(tmpdir(), "boundaries-"));
    fixtures.push(dir);
    for (const [path, source] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), source);
    }
    return dir;
  }

  it("the repository keeps every rule: no cycles, no forbidden import", () => {
    const { exitCode, violations } = cruise(ROOT, ["apps", "packages", "bench"]);
    expect(violations.map((v) => `${v.rule}: ${v.from} → ${v.to}`)).toEqual([]);
    expect(exitCode).toBe(0);
  }, 60_000);

  it("fails on a planted cycle (type-only imports included)", () => {
    const dir = plant({
      "apps/api/src/http/a.ts": 'import type { B } from "../trpc/b.ts";\nexport type A = B;\n',
      "apps/api/src/trpc/b.ts": 'import { c } from "../c.ts";\nexport type B = typeof c;\n',
      "apps/api/src/c.ts": 'import type { A } from "./http/a.ts";\nexport const c: A | 1 = 1;\n',
    });
    const { exitCode, violations } = cruise(dir, ["apps"]);
    expect(exitCode).not.toBe(0);
    expect(violations.map((v) => v.rule)).toContain("no-cycles");
  });

  it("fails on @sms/db imported outside the domain's store/, and accepts it inside", () => {
    const dir = plant({
      "packages/domain/src/store/messages.ts":
        'import { createDatabase } from "@sms/db";\nexport { createDatabase };\n',
      "packages/domain/src/messages/send.ts":
        'import { createDatabase } from "@sms/db";\nexport { createDatabase };\n',
    });
    const { exitCode, violations } = cruise(dir, ["packages"]);
    expect(exitCode).not.toBe(0);
    expect(violations.map((v) => [v.rule, v.from])).toEqual([
      ["database-only-from-store", "packages/domain/src/messages/send.ts"],
    ]);
  });

  it("fails when the domain imports tRPC, the contract room imports the app, or the edge reaches up", () => {
    const dir = plant({
      "packages/domain/src/auth/x.ts": 'import { initTRPC } from "@trpc/server";\nexport { initTRPC };\n',
      "apps/api/src/contract/errors.ts": 'import { logger } from "../logger.ts";\nexport const x = logger;\n',
      "apps/api/src/logger.ts": "export const logger = 1;\n",
      "apps/api/src/trpc/trpc.ts": 'import { y } from "../http/errors.ts";\nexport const t = y;\n',
      "apps/api/src/http/errors.ts": 'import { z } from "../routers/r.ts";\nexport const y = z;\n',
      "apps/api/src/routers/r.ts": "export const z = 1;\n",
    });
    const { violations } = cruise(dir, ["apps", "packages"]);
    expect(new Set(violations.map((v) => v.rule))).toEqual(
      new Set([
        "domain-without-http-or-trpc",
        "contract-is-a-leaf",
        "trpc-without-http",
        "edge-below-procedures",
      ]),
    );
  });
  it("fails when @sms/contract imports anything of ours but the templates, and accepts zod and the templates", () => {
    const dir = plant({
      "packages/contract/src/ok.ts":
        'import { z } from "zod";\nimport { LOCALES } from "../../templates/src/index.ts";\nexport const x = [z, LOCALES];\n',
      "packages/templates/src/index.ts": "export const LOCALES = 1;\n",
      "packages/contract/src/domain.ts":
        'import { y } from "../../domain/src/model/index.ts";\nexport const d = y;\n',
      "packages/domain/src/model/index.ts": "export const y = 1;\n",
      "packages/contract/src/named.ts": 'import { q } from "@sms/db";\nexport const n = q;\n',
      "packages/contract/src/app.ts":
        'import { r } from "../../../apps/api/src/r.ts";\nexport const a = r;\n',
      "apps/api/src/r.ts": "export const r = 1;\n",
    });
    const { exitCode, violations } = cruise(dir, ["apps", "packages"]);
    expect(exitCode).not.toBe(0);
    const wire = violations.filter((v) => v.rule === "wire-shapes-above-nothing-of-ours");
    expect(wire.map((v) => v.from).sort()).toEqual([
      "packages/contract/src/app.ts",
      "packages/contract/src/domain.ts",
      "packages/contract/src/named.ts",
    ]);
    expect(violations.map((v) => v.from)).not.toContain("packages/contract/src/ok.ts");
  });
});
