// What a statement's plan reads, table by table: run under EXPLAIN (ANALYZE,
// FORMAT JSON), each scan's rows (returned, or removed by a filter) times its
// loops, summed per table (a monthly partition counts as its parent). For tests
// that hold a periodic statement to the rows it needs, however large the
// tables around it grow.
import type { Sql } from "@sms/db";

type PlanNode = {
  "Node Type": string;
  "Relation Name"?: string;
  "Actual Rows"?: number;
  "Actual Loops"?: number;
  "Rows Removed by Filter"?: number;
  Plans?: PlanNode[];
};

/** Runs `sql` (it takes effect: wrap a write in a transaction the test can afford) and returns the rows read. */
export async function rowsRead(db: Pick<Sql, "query">, sql: string, values: unknown[] = []) {
  const [row] = await db.query<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>(
    `EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`,
    values,
  );
  const plan = row?.["QUERY PLAN"][0]?.Plan;
  if (!plan) throw new Error("EXPLAIN returned no plan");
  return sum(plan, new Map());
}

function sum(plan: PlanNode, into: Map<string, number>): Map<string, number> {
  const relation = plan["Relation Name"];
  // Scans only: a ModifyTable node names its relation too.
  if (relation && plan["Node Type"].endsWith("Scan")) {
    const read =
      ((plan["Actual Rows"] ?? 0) + (plan["Rows Removed by Filter"] ?? 0)) * (plan["Actual Loops"] ?? 1);
    const table = relation.replace(/_(p\d{4}_\d{2}|default)$/, "");
    into.set(table, (into.get(table) ?? 0) + read);
  }
  for (const child of plan.Plans ?? []) sum(child, into);
  return into;
}
