// A database schema reduced to what `prisma migrate diff` decides: enums,
// tables and columns (type, nullability, default), indexes, constraints and
// foreign keys, all keyed by their database names. Built from schema.prisma's
// DMMF (expected-schema.ts) and from a live database (introspect.ts), then
// compared by diffSchemas().

export type ColumnShape = {
  /** As PostgreSQL's format_type() spells it, without quotes: "timestamp(3) with time zone", "KeyMode". */
  type: string;
  nullable: boolean;
  /** As PostgreSQL shows it in information_schema.columns.column_default, or null. */
  default: string | null;
};

export type IndexShape = {
  table: string;
  /** Column names in order; "name DESC" for a descending key. */
  columns: string[];
  unique: boolean;
  primary: boolean;
  method: string;
  /** WHERE clause of a partial index, or null. */
  predicate: string | null;
};

export type ConstraintShape = {
  table: string;
  type: "PRIMARY KEY" | "UNIQUE" | "CHECK" | "EXCLUDE";
  columns: string[];
  /** pg_get_constraintdef() of a CHECK constraint; null for the others. */
  definition: string | null;
};

export type ReferentialAction = "CASCADE" | "RESTRICT" | "NO ACTION" | "SET NULL" | "SET DEFAULT";

export type ForeignKeyShape = {
  table: string;
  columns: string[];
  referencedTable: string;
  referencedColumns: string[];
  onDelete: ReferentialAction;
  onUpdate: ReferentialAction;
};

export type DbSchema = {
  /** Enum type name → labels in order. */
  enums: Record<string, string[]>;
  /** Table name → column name → column. */
  tables: Record<string, Record<string, ColumnShape>>;
  /** Index name → index (including the indexes behind primary keys). */
  indexes: Record<string, IndexShape>;
  /** Constraint name → primary key, unique or check constraint. */
  constraints: Record<string, ConstraintShape>;
  /** Constraint name → foreign key. */
  foreignKeys: Record<string, ForeignKeyShape>;
};

export function emptySchema(): DbSchema {
  return { enums: {}, tables: {}, indexes: {}, constraints: {}, foreignKeys: {} };
}

const show = (value: unknown) => JSON.stringify(value);

function diffRecords<T extends object>(
  what: string,
  expected: Record<string, T>,
  actual: Record<string, T>,
  out: string[],
): void {
  for (const name of Object.keys(expected).sort()) {
    const want = expected[name]!;
    const have = actual[name];
    if (have === undefined) {
      out.push(`${what} ${name}: missing from the database`);
      continue;
    }
    for (const key of Object.keys(want) as Array<keyof T>) {
      if (show(want[key]) !== show(have[key])) {
        out.push(
          `${what} ${name}: ${String(key)} is ${show(have[key])} in the database, schema.prisma says ${show(want[key])}`,
        );
      }
    }
  }
  for (const name of Object.keys(actual).sort()) {
    if (!(name in expected)) out.push(`${what} ${name}: in the database but not in schema.prisma`);
  }
}

/** Every difference between the schema.prisma side and the database, one line each; [] when they agree. */
export function diffSchemas(expected: DbSchema, actual: DbSchema): string[] {
  const out: string[] = [];
  diffRecords(
    "enum",
    Object.fromEntries(Object.entries(expected.enums).map(([name, values]) => [name, { values }])),
    Object.fromEntries(Object.entries(actual.enums).map(([name, values]) => [name, { values }])),
    out,
  );
  const tables = (schema: DbSchema) =>
    Object.fromEntries(Object.keys(schema.tables).map((name) => [name, {}])) as Record<string, object>;
  diffRecords("table", tables(expected), tables(actual), out);
  const columns = (schema: DbSchema, only: DbSchema) => {
    const result: Record<string, ColumnShape> = {};
    for (const [table, cols] of Object.entries(schema.tables)) {
      // Columns of a table missing on the other side are covered by the table line.
      if (!(table in only.tables)) continue;
      for (const [column, shape] of Object.entries(cols)) result[`${table}.${column}`] = shape;
    }
    return result;
  };
  diffRecords("column", columns(expected, actual), columns(actual, expected), out);
  diffRecords("index", expected.indexes, actual.indexes, out);
  diffRecords("constraint", expected.constraints, actual.constraints, out);
  diffRecords("foreign key", expected.foreignKeys, actual.foreignKeys, out);
  return out;
}

/** `base` plus what the SQL deliberately adds beyond schema.prisma (e.g. CHECK constraints). */
export function withAdditions(base: DbSchema, additions: Partial<DbSchema>): DbSchema {
  const merged = structuredClone(base);
  Object.assign(merged.enums, additions.enums);
  Object.assign(merged.indexes, additions.indexes);
  Object.assign(merged.constraints, additions.constraints);
  Object.assign(merged.foreignKeys, additions.foreignKeys);
  for (const [table, columns] of Object.entries(additions.tables ?? {})) {
    merged.tables[table] = { ...merged.tables[table], ...columns };
  }
  return merged;
}
