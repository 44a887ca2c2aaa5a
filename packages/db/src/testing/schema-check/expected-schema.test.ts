import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MIGRATIONS_DIR } from "../../migrator.ts";
import { diffSchemas, emptySchema } from "./db-schema.ts";
import { expectedSchema, prismaDefaultName } from "./expected-schema.ts";
import { parseDatamodel } from "./prisma-dmmf.ts";

const schemaText = readFileSync(join(MIGRATIONS_DIR, "..", "schema.prisma"), "utf8");

const DATASOURCE = 'datasource db {\n  provider = "postgresql"\n}\n';

describe("parseDatamodel (Prisma's own schema parser)", () => {
  it("gives the full DMMF of schema.prisma: nullability, native types, defaults, indexes", () => {
    const datamodel = parseDatamodel(schemaText);
    const message = datamodel.models.find((model) => model.name === "Message")!;
    const status = message.fields.find((field) => field.name === "status")!;
    expect(status).toMatchObject({
      kind: "enum",
      type: "MessageStatus",
      isRequired: true,
      default: "queued",
    });
    const nextCheckAt = message.fields.find((field) => field.name === "nextCheckAt")!;
    expect(nextCheckAt).toMatchObject({
      dbName: "next_check_at",
      isRequired: false,
      nativeType: ["Timestamptz", ["3"]],
    });
    expect(
      datamodel.indexes.filter((index) => index.model === "Message" && index.type === "normal"),
    ).toHaveLength(4);
  });

  it("rejects an invalid schema with Prisma's message", () => {
    expect(() => parseDatamodel(`${DATASOURCE}model A {\n  id Int @id\n  b Missing\n}\n`)).toThrow(
      /Prisma rejected the schema: .*Missing/s,
    );
  });
});

describe("prismaDefaultName", () => {
  it("names constraints and indexes the way Prisma does", () => {
    expect(prismaDefaultName("projects", [], "pkey")).toBe("projects_pkey");
    expect(prismaDefaultName("api_keys", ["key_hash"], "key")).toBe("api_keys_key_hash_key");
    expect(prismaDefaultName("messages", ["project_id", "created_at"], "idx")).toBe(
      "messages_project_id_created_at_idx",
    );
    expect(prismaDefaultName("api_keys", ["project_id"], "fkey")).toBe("api_keys_project_id_fkey");
  });

  it("keeps within PostgreSQL's 63 characters", () => {
    const name = prismaDefaultName(
      "a_rather_long_table_name",
      ["and_an_even_longer_column", "and_another"],
      "idx",
    );
    expect(name).toHaveLength(63);
    expect(name.endsWith("_idx")).toBe(true);
  });
});

describe("expectedSchema of schema.prisma", () => {
  const schema = expectedSchema(parseDatamodel(schemaText));

  it("maps the model's types, nullability and defaults to what Prisma creates", () => {
    expect(schema.tables.messages?.status).toEqual({
      type: "MessageStatus",
      nullable: false,
      default: "'queued'::\"MessageStatus\"",
    });
    expect(schema.tables.messages?.recipient_ciphertext).toEqual({
      type: "bytea",
      nullable: true,
      default: null,
    });
    expect(schema.tables.projects?.created_at).toEqual({
      type: "timestamp(3) with time zone",
      nullable: false,
      default: "CURRENT_TIMESTAMP",
    });
    expect(schema.tables.projects?.has_paid_credits).toEqual({
      type: "boolean",
      nullable: false,
      default: "false",
    });
    expect(schema.tables.audit_log?.details).toEqual({ type: "jsonb", nullable: false, default: null });
    expect(schema.enums.CreditEntryKind).toEqual(["grant_paid", "grant_free", "reservation", "refund"]);
  });

  it("names keys, unique indexes and indexes as Prisma does", () => {
    expect(schema.constraints.rate_limit_counters_pkey).toEqual({
      table: "rate_limit_counters",
      type: "PRIMARY KEY",
      columns: ["bucket", "window_start"],
      definition: null,
    });
    expect(schema.indexes.api_keys_key_hash_key).toMatchObject({ columns: ["key_hash"], unique: true });
    expect(schema.indexes.idempotency_records_project_id_mode_key_key).toMatchObject({
      columns: ["project_id", "mode", "key"],
      unique: true,
    });
    expect(schema.indexes.messages_project_id_created_at_id_idx).toMatchObject({
      columns: ["project_id", "created_at", "id"],
      unique: false,
    });
  });

  it("applies Prisma's referential action defaults", () => {
    // Optional relation without onDelete: SET NULL; updates always cascade.
    expect(schema.foreignKeys.projects_account_id_fkey).toEqual({
      table: "projects",
      columns: ["account_id"],
      referencedTable: "accounts",
      referencedColumns: ["id"],
      onDelete: "SET NULL",
      onUpdate: "CASCADE",
    });
    expect(schema.foreignKeys.messages_project_id_fkey).toMatchObject({
      onDelete: "CASCADE",
      onUpdate: "CASCADE",
    });
  });

  it("defaults a required relation without onDelete to RESTRICT", () => {
    const small = expectedSchema(
      parseDatamodel(`${DATASOURCE}
model Parent {
  id       String  @id
  children Child[]
}
model Child {
  id       String @id
  parentId String
  parent   Parent @relation(fields: [parentId], references: [id])
}
`),
    );
    expect(small.foreignKeys.Child_parentId_fkey).toMatchObject({
      onDelete: "RESTRICT",
      onUpdate: "CASCADE",
    });
  });

  it("gives a partial index its predicate, which Prisma's DMMF leaves out, and refuses the object form", () => {
    const generator =
      'generator client {\n  provider = "prisma-client"\n  previewFeatures = ["partialIndexes"]\n}\n';
    const small = expectedSchema(
      parseDatamodel(`${DATASOURCE}${generator}
model A {
  id    String  @id
  gone  String?
  at    Int
  @@index([at], where: raw("gone IS NOT NULL"))
  @@index([at, id])
}
`),
    );
    expect(small.indexes.A_at_idx).toMatchObject({ columns: ["at"], predicate: "(gone IS NOT NULL)" });
    expect(small.indexes.A_at_id_idx).toMatchObject({ predicate: null });
    const verifications = expectedSchema(parseDatamodel(schemaText)).indexes.verifications_created_at_idx;
    expect(verifications).toMatchObject({ columns: ["created_at"], predicate: "(code_hash IS NOT NULL)" });
    expect(() =>
      parseDatamodel(
        `${DATASOURCE}${generator}model A {\n  id String @id\n  on Boolean\n  @@index([id], where: { on: true })\n}\n`,
      ),
    ).toThrow(/raw\(\) form/);
  });

  it("refuses what it cannot judge instead of passing it unchecked", () => {
    expect(() =>
      expectedSchema(parseDatamodel(`${DATASOURCE}model A {\n  id Int @id @default(autoincrement())\n}\n`)),
    ).toThrow(/autoincrement/);
    expect(() =>
      expectedSchema(parseDatamodel(`${DATASOURCE}model A {\n  id String @id @db.Inet\n}\n`)),
    ).toThrow(/@db.Inet/);
  });
});

describe("diffSchemas", () => {
  it("reports missing, extra and changed objects, one line each", () => {
    const expected = emptySchema();
    expected.tables.t = { a: { type: "text", nullable: false, default: null } };
    expected.indexes.t_a_idx = {
      table: "t",
      columns: ["a"],
      unique: false,
      primary: false,
      method: "btree",
      predicate: null,
    };
    const actual = emptySchema();
    actual.tables.t = {
      a: { type: "text", nullable: true, default: null },
      b: { type: "text", nullable: true, default: null },
    };
    actual.tables.u = {};
    expect(diffSchemas(expected, actual)).toEqual([
      "table u: in the database but not in schema.prisma",
      "column t.a: nullable is true in the database, schema.prisma says false",
      "column t.b: in the database but not in schema.prisma",
      "index t_a_idx: missing from the database",
    ]);
    expect(diffSchemas(expected, structuredClone(expected))).toEqual([]);
  });
});
