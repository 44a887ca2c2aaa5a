// The full DMMF (Prisma's parsed data model) of a schema, for the schema test.
//
// Why not the generated client's own metadata? Prisma 7's `prisma-client`
// generator keeps only a stripped "runtime data model" in internal/class.ts:
// model and field names, kinds, types and @map names, but no nullability,
// defaults, native types (@db.Timestamptz(3)), ids, unique constraints or
// indexes. What the generated client does carry is the exact schema text it was
// generated from (`inlineSchema`). We feed that text to Prisma's own schema
// parser, the WebAssembly build of prisma-schema-wasm (`get_dmmf`) that ships in
// the installed `prisma` CLI package (node_modules/prisma/build/
// prisma_schema_build_bg.wasm), which is what `prisma generate` itself runs.
// No other package provides it here (@prisma/internals and
// @prisma/prisma-schema-wasm are not installed), so this file holds the few
// lines of wasm-bindgen glue the CLI bundles for it.
//
// Test support only (Node): the service never loads this file.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

export type DmmfFieldDefault =
  | string
  | number
  | boolean
  | { name: string; args: unknown[] }
  | Array<string | number | boolean>;

export type DmmfField = {
  name: string;
  dbName?: string | null;
  kind: "scalar" | "object" | "enum" | "unsupported";
  isList: boolean;
  isRequired: boolean;
  isUnique: boolean;
  isId: boolean;
  hasDefaultValue: boolean;
  type: string;
  nativeType?: [string, string[]] | null;
  default?: DmmfFieldDefault;
  isUpdatedAt?: boolean;
  relationName?: string;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
  relationOnUpdate?: string;
};

export type DmmfModel = {
  name: string;
  dbName: string | null;
  schema?: string | null;
  fields: DmmfField[];
  primaryKey: { name: string | null; fields: string[] } | null;
};

export type DmmfEnum = {
  name: string;
  dbName?: string | null;
  values: Array<{ name: string; dbName: string | null }>;
};

export type DmmfIndex = {
  model: string;
  type: "id" | "unique" | "normal" | "fulltext";
  isDefinedOnField: boolean;
  name?: string;
  dbName?: string;
  algorithm?: string;
  clustered?: boolean;
  fields: Array<{ name: string; sortOrder?: "asc" | "desc"; length?: number; operatorClass?: string }>;
  /**
   * A partial index's predicate, `where: raw("…")` (preview feature `partialIndexes`). Prisma 7.10's DMMF
   * leaves it out, so parseDatamodel reads it from the schema text (partialIndexPredicates).
   */
  where?: string;
};

export type DmmfDatamodel = {
  enums: DmmfEnum[];
  models: DmmfModel[];
  indexes: DmmfIndex[];
};

type SchemaWasm = {
  memory: WebAssembly.Memory;
  get_dmmf(ptr: number, len: number): [number, number, number, number];
  __wbindgen_malloc(size: number, align: number): number;
  __wbindgen_free(ptr: number, size: number, align: number): void;
  __wbindgen_externrefs: WebAssembly.Table;
  __externref_table_dealloc(index: number): void;
  __wbindgen_start(): void;
};

let wasm: SchemaWasm | undefined;

function loadSchemaWasm(): SchemaWasm {
  if (wasm) return wasm;
  const cliDir = dirname(createRequire(import.meta.url).resolve("prisma/package.json"));
  const module = new WebAssembly.Module(readFileSync(join(cliDir, "build", "prisma_schema_build_bg.wasm")));
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let exports: SchemaWasm | undefined;
  const text = (ptr: number, len: number) =>
    decoder.decode(new Uint8Array(exports!.memory.buffer, ptr >>> 0, len >>> 0));

  // The import names carry build hashes; match them by their stable prefixes.
  const imports: Record<string, Record<string, (...args: number[]) => unknown>> = {};
  for (const { module: from, name } of WebAssembly.Module.imports(module)) {
    let implementation: (...args: number[]) => unknown;
    if (name.startsWith("__wbg_set_message_")) {
      implementation = () => undefined; // panic message for Prisma's panic registry
    } else if (name.startsWith("__wbg_Error_")) {
      implementation = (ptr = 0, len = 0) => new Error(text(ptr, len));
    } else if (name.startsWith("__wbg___wbindgen_throw_")) {
      implementation = (ptr = 0, len = 0) => {
        throw new Error(text(ptr, len));
      };
    } else if (name === "__wbindgen_init_externref_table") {
      implementation = () => {
        const table = exports!.__wbindgen_externrefs;
        const offset = table.grow(4);
        table.set(0, undefined);
        table.set(offset + 0, undefined);
        table.set(offset + 1, null);
        table.set(offset + 2, true);
        table.set(offset + 3, false);
      };
    } else {
      throw new Error(`prisma_schema_build_bg.wasm wants an unknown import ${from}.${name}: update the glue`);
    }
    imports[from] ??= {};
    imports[from][name] = implementation;
  }
  exports = new WebAssembly.Instance(module, imports).exports as unknown as SchemaWasm;
  exports.__wbindgen_start();
  wasm = exports;
  return exports;
}

/** Parses and validates a Prisma schema; throws Prisma's validation error. */
export function parseDatamodel(schemaText: string): DmmfDatamodel {
  const engine = loadSchemaWasm();
  const input = new TextEncoder().encode(JSON.stringify({ prismaSchema: schemaText }));
  const ptr = engine.__wbindgen_malloc(input.length, 1) >>> 0;
  new Uint8Array(engine.memory.buffer, ptr, input.length).set(input);
  const [outPtr, outLen, errorIndex, failed] = engine.get_dmmf(ptr, input.length);
  if (failed) {
    const error = engine.__wbindgen_externrefs.get(errorIndex);
    engine.__externref_table_dealloc(errorIndex);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: strips ANSI colours
    const message = String(error instanceof Error ? error.message : error).replace(/\u001b\[[0-9;]*m/g, "");
    throw new Error(`Prisma rejected the schema: ${message}`);
  }
  try {
    const json = new TextDecoder().decode(new Uint8Array(engine.memory.buffer, outPtr >>> 0, outLen >>> 0));
    const datamodel = (JSON.parse(json) as { datamodel: DmmfDatamodel }).datamodel;
    for (const partial of partialIndexPredicates(schemaText)) {
      // Two indexes on the same fields (one of them partial) are told apart by their `map:` name.
      const index = datamodel.indexes.find(
        (candidate) =>
          candidate.model === partial.model &&
          candidate.type === partial.type &&
          candidate.fields.map((field) => field.name).join(",") === partial.fields.join(",") &&
          (partial.map === undefined ? !candidate.dbName : candidate.dbName === partial.map),
      );
      if (!index)
        throw new Error(`schema check: no index of ${partial.model} on ${partial.fields.join(", ")}`);
      index.where = partial.where;
    }
    return datamodel;
  } finally {
    engine.__wbindgen_free(outPtr, outLen, 1);
  }
}

/** A partial index as schema.prisma writes it. */
type PartialIndex = {
  model: string;
  type: "normal" | "unique";
  fields: string[];
  where: string;
  map?: string;
};

/**
 * The partial indexes of a schema's text: each `@@index([…], where: raw("…"))` (or `@@unique`) with its
 * model, fields, predicate and `map:` name if any. Only the raw() form: the object form (`where: { … }`)
 * throws, not mapped.
 */
export function partialIndexPredicates(schemaText: string): PartialIndex[] {
  const found: PartialIndex[] = [];
  for (const block of schemaText.matchAll(/^model\s+(\w+)\s*\{([\s\S]*?)^\}/gm)) {
    const [, model = "", body = ""] = block;
    for (const line of body.split("\n")) {
      const attribute = /^\s*@@(index|unique)\(\s*\[([^\]]*)\](.*)\)\s*$/.exec(line);
      if (!attribute || !/\bwhere\s*:/.test(attribute[3] ?? "")) continue;
      const raw = /\bwhere\s*:\s*raw\(\s*"((?:[^"\\]|\\.)*)"\s*\)/.exec(attribute[3] ?? "");
      if (!raw)
        throw new Error(`schema check: a partial index of ${model} not in raw() form, not mapped yet`);
      const map = /\bmap\s*:\s*"([^"]*)"/.exec(attribute[3] ?? "")?.[1];
      found.push({
        model,
        type: attribute[1] === "unique" ? "unique" : "normal",
        fields: (attribute[2] ?? "").split(",").map((field) => field.trim().replace(/\(.*$/, "")),
        where: JSON.parse(`"${raw[1]}"`) as string,
        ...(map === undefined ? {} : { map }),
      });
    }
  }
  return found;
}

/**
 * The schema text a generated PrismaClient instance was generated from. Reads
 * the client's engine configuration, an internal of Prisma's runtime: if a
 * Prisma upgrade moves it, this says so instead of silently passing.
 */
export function generatedClientSchema(prisma: object): string {
  const inlineSchema = (prisma as { _engineConfig?: { inlineSchema?: unknown } })._engineConfig?.inlineSchema;
  if (typeof inlineSchema !== "string") {
    throw new Error(
      "the generated Prisma client no longer exposes _engineConfig.inlineSchema; adapt schema-check/prisma-dmmf.ts",
    );
  }
  return inlineSchema;
}
