// Reads the schema a session's current_schema() actually has, in DbSchema form.
// Sources: information_schema.tables / .columns (names, nullability, defaults),
// format_type() for exact types with their modifiers (timestamp(3) with time
// zone), pg_enum, pg_index for indexes, and pg_constraint for primary keys,
// unique/check constraints and foreign keys (information_schema.table_constraints
// lists the same constraints but also every NOT NULL as a nameless CHECK, and
// has neither column order nor referential actions).
// A partitioned table is one table here: its partitions (and the indexes and
// constraints PostgreSQL clones onto them) are left out, as Prisma sees only
// the parent.
import type { SqlSession } from "../../sql-session.ts";
import type { ConstraintShape, DbSchema, ReferentialAction } from "./db-schema.ts";
import { emptySchema } from "./db-schema.ts";

const ACTIONS: Record<string, ReferentialAction> = {
  a: "NO ACTION",
  r: "RESTRICT",
  c: "CASCADE",
  n: "SET NULL",
  d: "SET DEFAULT",
};

const CONSTRAINT_TYPES: Record<string, ConstraintShape["type"]> = {
  p: "PRIMARY KEY",
  u: "UNIQUE",
  c: "CHECK",
  x: "EXCLUDE",
};

// Columns of a constraint in key order, by attribute number.
const constraintColumns = (keys: string, relation: string) => `ARRAY(
  SELECT a.attname::text
  FROM unnest(${keys}) WITH ORDINALITY AS k(attnum, ord)
  JOIN pg_attribute a ON a.attrelid = ${relation} AND a.attnum = k.attnum
  ORDER BY k.ord)`;

export type IntrospectOptions = {
  /** Tables left out of the result, e.g. `_prisma_migrations`. */
  excludeTables?: string[];
};

export async function introspectSchema(
  session: SqlSession,
  options: IntrospectOptions = {},
): Promise<DbSchema> {
  const excluded = new Set(options.excludeTables ?? []);
  const schema = emptySchema();

  const enumRows = await session.query<{ name: string; label: string }>(
    `SELECT t.typname::text AS name, e.enumlabel::text AS label
     FROM pg_type t
     JOIN pg_enum e ON e.enumtypid = t.oid
     JOIN pg_namespace n ON n.oid = t.typnamespace
     WHERE n.nspname = current_schema()
     ORDER BY t.typname, e.enumsortorder`,
  );
  for (const row of enumRows) {
    schema.enums[row.name] = [...(schema.enums[row.name] ?? []), row.label];
  }

  const tableRows = await session.query<{ name: string }>(
    `SELECT table_name::text AS name FROM information_schema.tables
     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
       AND NOT EXISTS (SELECT 1 FROM pg_class p WHERE p.oid = format('%I.%I', table_schema, table_name)::regclass
                       AND p.relispartition)`,
  );
  for (const { name } of tableRows) if (!excluded.has(name)) schema.tables[name] = {};

  const columnRows = await session.query<{
    table_name: string;
    column_name: string;
    is_nullable: string;
    column_default: string | null;
    type: string;
  }>(
    `SELECT c.table_name::text, c.column_name::text, c.is_nullable::text, c.column_default::text,
            format_type(a.atttypid, a.atttypmod) AS type
     FROM information_schema.columns c
     JOIN pg_namespace n ON n.nspname = c.table_schema
     JOIN pg_class t ON t.relnamespace = n.oid AND t.relname = c.table_name
     JOIN pg_attribute a ON a.attrelid = t.oid AND a.attname = c.column_name
     WHERE c.table_schema = current_schema()
     ORDER BY c.table_name, c.ordinal_position`,
  );
  for (const row of columnRows) {
    const table = schema.tables[row.table_name];
    if (!table) continue; // a view or an excluded table
    table[row.column_name] = {
      // format_type() quotes mixed-case names ("KeyMode"); the DMMF side does not.
      type: row.type.replaceAll('"', ""),
      nullable: row.is_nullable === "YES",
      default: row.column_default,
    };
  }

  const indexRows = await session.query<{
    name: string;
    table: string;
    unique: boolean;
    primary: boolean;
    method: string;
    predicate: string | null;
    columns: string[];
  }>(
    `SELECT i.relname::text AS name, t.relname::text AS table, ix.indisunique AS unique,
            ix.indisprimary AS primary, am.amname::text AS method,
            pg_get_expr(ix.indpred, ix.indrelid) AS predicate,
            ARRAY(
              SELECT COALESCE(a.attname::text, pg_get_indexdef(ix.indexrelid, k.ord::int, true))
                || CASE WHEN k.ord > ix.indnkeyatts THEN ' INCLUDE'
                        WHEN ix.indoption[k.ord - 1] & 3 = 1 THEN ' DESC NULLS LAST'
                        WHEN ix.indoption[k.ord - 1] & 3 = 2 THEN ' NULLS FIRST'
                        WHEN ix.indoption[k.ord - 1] & 3 = 3 THEN ' DESC'
                        ELSE '' END
              FROM unnest(ix.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
              LEFT JOIN pg_attribute a ON a.attrelid = ix.indrelid AND a.attnum = k.attnum AND k.attnum <> 0
              ORDER BY k.ord
            ) AS columns
     FROM pg_index ix
     JOIN pg_class i ON i.oid = ix.indexrelid
     JOIN pg_class t ON t.oid = ix.indrelid
     JOIN pg_am am ON am.oid = i.relam
     JOIN pg_namespace n ON n.oid = t.relnamespace
     WHERE n.nspname = current_schema() AND t.relkind IN ('r', 'p') AND NOT t.relispartition`,
  );
  for (const row of indexRows) {
    if (excluded.has(row.table)) continue;
    schema.indexes[row.name] = {
      table: row.table,
      columns: row.columns,
      unique: row.unique,
      primary: row.primary,
      method: row.method,
      predicate: row.predicate,
    };
  }

  const constraintRows = await session.query<{
    name: string;
    table: string;
    type: string;
    columns: string[];
    definition: string | null;
  }>(
    `SELECT con.conname::text AS name, t.relname::text AS table, con.contype::text AS type,
            ${constraintColumns("con.conkey", "con.conrelid")} AS columns,
            CASE WHEN con.contype = 'c' THEN pg_get_constraintdef(con.oid, true) END AS definition
     FROM pg_constraint con
     JOIN pg_class t ON t.oid = con.conrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace
     WHERE n.nspname = current_schema() AND con.contype IN ('p', 'u', 'c', 'x') AND NOT t.relispartition`,
  );
  for (const row of constraintRows) {
    if (excluded.has(row.table)) continue;
    schema.constraints[row.name] = {
      table: row.table,
      type: CONSTRAINT_TYPES[row.type]!,
      columns: row.columns,
      definition: row.definition,
    };
  }

  const foreignKeyRows = await session.query<{
    name: string;
    table: string;
    referenced_table: string;
    columns: string[];
    referenced_columns: string[];
    on_delete: string;
    on_update: string;
  }>(
    `SELECT con.conname::text AS name, t.relname::text AS table, rt.relname::text AS referenced_table,
            ${constraintColumns("con.conkey", "con.conrelid")} AS columns,
            ${constraintColumns("con.confkey", "con.confrelid")} AS referenced_columns,
            con.confdeltype::text AS on_delete, con.confupdtype::text AS on_update
     FROM pg_constraint con
     JOIN pg_class t ON t.oid = con.conrelid
     JOIN pg_class rt ON rt.oid = con.confrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace
     WHERE n.nspname = current_schema() AND con.contype = 'f' AND NOT t.relispartition`,
  );
  for (const row of foreignKeyRows) {
    if (excluded.has(row.table)) continue;
    schema.foreignKeys[row.name] = {
      table: row.table,
      columns: row.columns,
      referencedTable: row.referenced_table,
      referencedColumns: row.referenced_columns,
      onDelete: ACTIONS[row.on_delete] ?? (row.on_delete as ReferentialAction),
      onUpdate: ACTIONS[row.on_update] ?? (row.on_update as ReferentialAction),
    };
  }
  return schema;
}
