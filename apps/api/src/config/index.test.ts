// The composition (index.ts): every slice's variables are in the composed
// schema, each declared by one slice only, and nothing else is.
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseEnv, ZEnv } from "./index.ts";

const DIR = dirname(fileURLToPath(import.meta.url));

/** The slice files and what they export. */
async function sliceModules(): Promise<Array<{ file: string; module: Record<string, unknown> }>> {
  const files = readdirSync(DIR).filter(
    (name) => name.endsWith(".ts") && !name.endsWith(".test.ts") && !["index.ts", "shared.ts"].includes(name),
  );
  return Promise.all(
    files.map(async (file) => ({ file, module: (await import(join(DIR, file))) as Record<string, unknown> })),
  );
}

/** Each slice file's `Z…Env` schemas, by file. */
async function sliceSchemas(): Promise<Array<{ file: string; name: string; keys: string[] }>> {
  const schemas: Array<{ file: string; name: string; keys: string[] }> = [];
  for (const { file, module } of await sliceModules()) {
    for (const [name, value] of Object.entries(module)) {
      if (/^Z\w+Env$/.test(name) && value instanceof z.ZodObject) {
        schemas.push({ file, name, keys: Object.keys(value.shape) });
      }
    }
  }
  return schemas;
}

describe("the configuration's slices", () => {
  it("every slice file declares its variables in one schema", async () => {
    const schemas = await sliceSchemas();
    const files = new Set(schemas.map((schema) => schema.file));
    expect(schemas.length).toBeGreaterThanOrEqual(8);
    expect(schemas.length, "one Z…Env per file").toBe(files.size);
  });

  it("each variable is declared by one slice, and the composed schema holds exactly theirs", async () => {
    const declared = (await sliceSchemas()).flatMap((schema) =>
      schema.keys.map((key) => `${key} (${schema.file})`),
    );
    const names = declared.map((entry) => entry.split(" ")[0] as string);
    expect(
      declared.filter((_, i) => names.indexOf(names[i] as string) !== i),
      "declared twice",
    ).toEqual([]);
    expect(new Set(Object.keys(ZEnv.shape))).toEqual(new Set(names));
  });

  it("each part of Config comes from one slice's mapping (`…Config`), and Config is theirs together", async () => {
    const env = ZEnv.parse({});
    const parts: string[] = [];
    for (const { file, module } of await sliceModules()) {
      const mappings = Object.entries(module).filter(
        ([name, value]) => /^[a-z]\w*Config$/.test(name) && typeof value === "function",
      );
      expect(mappings.length, `${file} maps its variables in one …Config function`).toBe(1);
      const [, mapping] = mappings[0] as [string, (env: unknown, options: object) => object];
      parts.push(...Object.keys(mapping(env, {})));
    }
    expect(
      parts.filter((key, i) => parts.indexOf(key) !== i),
      "a part written by two slices",
    ).toEqual([]);
    expect(parts.sort()).toEqual(Object.keys(parseEnv({})).sort());
  });

  it("parses an empty environment to the development defaults", () => {
    expect(parseEnv({})).toMatchObject({
      nodeEnv: "development",
      port: 3000,
      database: { url: undefined, pgliteDataDir: ".data/pglite", read: null },
      internal: null,
      ubill: null,
      jobsEnabled: true,
    });
  });
});
