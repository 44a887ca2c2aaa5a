import { describe, expect, it } from "vitest";
import { params, sql } from "./named-sql.ts";

describe("named-sql", () => {
  const p = params<{ id: string; limit: number; now: Date; ids: string[] }>();

  it("numbers each name once, in order of first appearance, and binds by name", () => {
    const statement = sql`SELECT * FROM t WHERE id = ${p.id} AND n < ${p.limit} OR id = ${p.id}`;
    expect(statement.text).toBe("SELECT * FROM t WHERE id = $1 AND n < $2 OR id = $1");
    expect(statement.names).toEqual(["id", "limit"]);
    expect(statement.bind({ limit: 3, id: "a" })).toEqual(["a", 3]);
  });

  it("merges a fragment's parameters into the statement that splices it", () => {
    const claim = sql`key = ${p.id} AND at < ${p.now}`;
    const statement = sql`WITH x AS (SELECT ${p.ids} AS ids) SELECT 1 WHERE ${claim} AND ${claim}`;
    expect(statement.text).toBe(
      "WITH x AS (SELECT $1 AS ids) SELECT 1 WHERE key = $2 AND at < $3 AND key = $2 AND at < $3",
    );
    const now = new Date(0);
    expect(statement.bind({ ids: ["a"], id: "k", now })).toEqual([["a"], "k", now]);
  });

  it("splices raw text and integer literals as written, and joins fragments", () => {
    const statement = sql`SELECT ${sql.raw("count")} FROM t LIMIT ${5} OFFSET ${p.limit}`;
    expect(statement.text).toBe("SELECT count FROM t LIMIT 5 OFFSET $1");
    const joined = sql.join([sql`a = ${p.id}`, sql`b = ${p.limit}`], " AND ");
    expect(joined.text).toBe("a = $1 AND b = $2");
    expect(joined.bind({ id: "x", limit: 1 })).toEqual(["x", 1]);
  });

  it("refuses a value interpolated as it is, and a name left without a value", () => {
    const value = "x" as unknown as ReturnType<typeof sql.raw>;
    expect(() => sql`SELECT ${value}`).toThrow(TypeError);
    expect(() => sql`LIMIT ${1.5}`).toThrow(TypeError);
    const statement = sql`SELECT ${p.id}, ${p.limit}`;
    expect(() => statement.bind({ id: "a" } as unknown as { id: string; limit: number })).toThrow(/:limit/);
  });

  it("makes a missing, misspelt or mistyped name a compile error", () => {
    const statement = sql`SELECT ${p.id}, ${p.limit}`;
    // @ts-expect-error limit is missing
    expect(() => statement.bind({ id: "a" })).toThrow(/:limit/);
    // @ts-expect-error lmit is not a name of the statement (and limit is missing)
    expect(() => statement.bind({ id: "a", lmit: 1 })).toThrow(/:limit/);
    // @ts-expect-error limit is a number
    expect(statement.bind({ id: "a", limit: "1" })).toEqual(["a", "1"]);
    const mixed = sql`SELECT ${sql.raw("x")}, ${1}, ${p.id}`;
    // @ts-expect-error id is missing, though raw text and a literal come before it
    expect(() => mixed.bind({})).toThrow(/:id/);
    const withFragment = sql`SELECT 1 WHERE ${sql`at < ${p.now}`}`;
    // @ts-expect-error the fragment's now is missing
    expect(() => withFragment.bind({})).toThrow(/:now/);
  });
});
