// The expand/contract rule (docs/operations.md#upgrades): during a rolling
// upgrade the previous release keeps running on the new schema, so a migration
// may only add. A statement that would break the running release (DROP COLUMN,
// DROP TABLE, a RENAME of a table or column, ALTER COLUMN ... TYPE, SET NOT
// NULL on an existing column) is refused unless its migration.sql carries a
// contract marker, a line `-- contract: <why>`, which says the release that
// stopped using the object is everywhere already.
//
// Migrations up to GRANDFATHERED_UNTIL predate the rule and are listed by name
// in GRANDFATHERED: the check starts after them, and a new migration cannot
// join that list without an edit here that review sees.
import { readMigrations } from "./migrator.ts";

/** The newest migration that predates the rule. */
export const GRANDFATHERED_UNTIL = "20261229000000_verification_codes_index";

/** Every migration that predates the rule (each of them up to GRANDFATHERED_UNTIL). */
export const GRANDFATHERED: ReadonlySet<string> = new Set([
  "20261122000000_init",
  "20261201000000_dashboard",
  "20261210000000_verifications",
  "20261215000000_console",
  "20261220000000_partitions",
  "20261228000000_statement_refusals",
  GRANDFATHERED_UNTIL,
]);

export type BreakingChange = {
  /** "DROP TABLE", "DROP COLUMN", "RENAME", "ALTER TYPE", "SET NOT NULL" or "ADD COLUMN NOT NULL" (without a default). */
  kind: string;
  /** The statement, whitespace collapsed, at most 200 characters. */
  statement: string;
};

/** `-- contract: <reason>` on a line of its own; the reason may not be empty. */
const CONTRACT_MARKER = /^[ \t]*--[ \t]*contract:[ \t]*\S/im;

/** The SQL without comments. */
function withoutComments(sql: string): string {
  return sql.replace(/\/\*[\s\S]*?\*\//g, " ").replace(/--[^\n]*/g, " ");
}

const DOLLAR_QUOTED = /\$([A-Za-z_]*)\$([\s\S]*?)\$\1\$/g;

/** The SQL without comments, function bodies and string literals (a word inside them is no statement), split into statements. */
function statements(sql: string): string[] {
  return withoutComments(sql)
    .replace(DOLLAR_QUOTED, " '' ")
    .replace(/'(?:[^']|'')*'/g, "''")
    .split(";")
    .map((statement) => statement.replace(/\s+/g, " ").trim())
    .filter(Boolean);
}

/**
 * DDL run from a function or DO body (`EXECUTE format('ALTER TABLE %I RENAME
 * TO %I', ...)`, as the partitions migration did) cannot be parsed, so the
 * body's text, strings included, is searched for the same changes.
 */
const DYNAMIC_RULES: Array<[string, RegExp]> = [
  ["DROP TABLE", /\bDROP\s+TABLE\b/i],
  ["DROP COLUMN", /\bDROP\s+COLUMN\b/i],
  ["RENAME", /\bRENAME\b(?!\s+CONSTRAINT\b)/i],
  ["ALTER TYPE", /\bALTER\s+(?:COLUMN\s+)?\S+\s+(?:SET\s+DATA\s+)?TYPE\b/i],
  ["SET NOT NULL", /\bSET\s+NOT\s+NULL\b/i],
];

function dynamicChanges(sql: string): BreakingChange[] {
  const found: BreakingChange[] = [];
  for (const match of withoutComments(sql).matchAll(DOLLAR_QUOTED)) {
    const body = (match[2] ?? "").replace(/\s+/g, " ").trim();
    for (const [kind, pattern] of DYNAMIC_RULES) {
      const hit = pattern.exec(body);
      if (hit)
        found.push({
          kind: `${kind} (in a function body)`,
          statement: body.slice(Math.max(0, hit.index - 60), hit.index + 140),
        });
    }
  }
  return found;
}

const TABLE_NAME = String.raw`(?:"[^"]+"|[A-Za-z_][\w$]*)(?:\.(?:"[^"]+"|[A-Za-z_][\w$]*))?`;

/**
 * The tables a statement list creates: a SET NOT NULL or a type change on a
 * table made in the same migration breaks nobody (no release reads it yet).
 */
function createdTables(list: string[]): Set<string> {
  const created = new Set<string>();
  const pattern = new RegExp(`^CREATE (?:UNLOGGED )?TABLE (?:IF NOT EXISTS )?(${TABLE_NAME})`, "i");
  for (const statement of list) {
    const match = pattern.exec(statement);
    if (match?.[1]) created.add(normalise(match[1]));
  }
  return created;
}

function normalise(name: string): string {
  return name.replaceAll('"', "").toLowerCase();
}

/** The actions of an ALTER TABLE, split at the commas outside parentheses. */
function actions(statement: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of statement) {
    if (char === "(") depth += 1;
    if (char === ")") depth -= 1;
    if (char === "," && depth === 0) {
      parts.push(current.trim());
      current = "";
      continue;
    }
    current += char;
  }
  parts.push(current.trim());
  return parts;
}

const ALTER_TABLE = new RegExp(`^ALTER TABLE (?:IF EXISTS )?(?:ONLY )?(${TABLE_NAME})`, "i");
const COLUMN_NAME = String.raw`(?:"[^"]+"|[A-Za-z_][\w$]*)`;

/** What one action of an ALTER TABLE on an existing table breaks, or null. */
function breakingAction(action: string): string | null {
  if (/\bRENAME\b(?! CONSTRAINT\b)/i.test(action)) return "RENAME";
  if (new RegExp(String.raw`\bALTER (?:COLUMN )?${COLUMN_NAME} (?:SET DATA )?TYPE\b`, "i").test(action))
    return "ALTER TYPE";
  if (/\bSET NOT NULL\b/i.test(action)) return "SET NOT NULL";
  if (/\bDROP (?!CONSTRAINT\b|DEFAULT\b|NOT NULL\b|IDENTITY\b|EXPRESSION\b)/i.test(action))
    return "DROP COLUMN";
  // A new NOT NULL column without a default: the running release's inserts fail.
  if (
    /\bADD\b/i.test(action) &&
    !/\bADD (?:CONSTRAINT|PRIMARY|UNIQUE|FOREIGN|CHECK|EXCLUDE)\b/i.test(action)
  ) {
    if (/\bNOT NULL\b/i.test(action) && !/\bDEFAULT\b|\bGENERATED\b/i.test(action))
      return "ADD COLUMN NOT NULL";
  }
  return null;
}

/**
 * The statements of one migration that would break the running release;
 * empty when there are none or the migration carries a contract marker.
 * Changes to a table the same migration creates break nobody (no release
 * reads it yet) and are not counted.
 */
export function findBreakingChanges(sql: string): BreakingChange[] {
  if (CONTRACT_MARKER.test(sql)) return [];
  const list = statements(sql);
  const created = createdTables(list);
  const found: BreakingChange[] = [];
  for (const statement of list) {
    const brief = statement.slice(0, 200);
    if (/^DROP TABLE\b/i.test(statement)) {
      found.push({ kind: "DROP TABLE", statement: brief });
      continue;
    }
    // ALTER TABLE x RENAME TO y, RENAME COLUMN, and ALTER TABLE ... RENAME on a view or sequence alike.
    if (/^ALTER (?:VIEW|MATERIALIZED VIEW|SEQUENCE|TYPE)\b.*\bRENAME\b/i.test(statement)) {
      found.push({ kind: "RENAME", statement: brief });
      continue;
    }
    const table = ALTER_TABLE.exec(statement);
    if (!table?.[1] || created.has(normalise(table[1]))) continue;
    const kinds = new Set(
      actions(statement.slice(table[0].length)).flatMap((action) => breakingAction(action) ?? []),
    );
    for (const kind of kinds) found.push({ kind, statement: brief });
  }
  return [...found, ...dynamicChanges(sql)];
}

export type MigrationViolation = { migration: string; changes: BreakingChange[] };

/**
 * Every migration in `dir` after the grandfathered ones that would break the
 * running release without a contract marker. A migration that sorts before
 * GRANDFATHERED_UNTIL but is not in GRANDFATHERED is checked too (nobody can
 * slip one in under the cut-off).
 */
export async function checkMigrations(dir?: string): Promise<MigrationViolation[]> {
  const violations: MigrationViolation[] = [];
  for (const migration of await readMigrations(dir)) {
    if (GRANDFATHERED.has(migration.name)) continue;
    const changes = findBreakingChanges(migration.sql);
    if (changes.length > 0) violations.push({ migration: migration.name, changes });
  }
  return violations;
}
