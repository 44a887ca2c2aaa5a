import { describe, expect, it } from "vitest";
import { literal, withLiterals } from "./literals.ts";

describe("withLiterals", () => {
  it("replaces each $n outside quotes, comments and identifiers with its parameter as a literal", () => {
    expect(withLiterals("SELECT $1, $2, $10", ["a", 2, null, 4, 5, 6, 7, 8, 9, "ten"])).toBe(
      "SELECT 'a', '2', 'ten'",
    );
    expect(withLiterals(`SELECT '$1', "col$1", x$1, E'\\'$1', $1 -- $1\n, /* $1 */ $1`, ["v"])).toBe(
      `SELECT '$1', "col$1", x$1, E'\\'$1', 'v' -- $1\n, /* $1 */ 'v'`,
    );
    expect(withLiterals("SELECT 'it''s $1', $1", ["v"])).toBe("SELECT 'it''s $1', 'v'");
  });

  it("quotes as pg does: quotes doubled, backslashes in an E'' literal", () => {
    expect(literal("it's")).toBe("'it''s'");
    expect(literal("a\\b")).toBe(" E'a\\\\b'");
    expect(literal(new Date("2026-11-28T10:11:12.345Z"))).toBe("'2026-11-28T10:11:12.345Z'");
    expect(literal(true)).toBe("'true'");
    expect(literal(12n)).toBe("'12'");
    expect(literal(undefined)).toBe("NULL");
  });

  it("refuses what it cannot write safely: dollar quoting, a missing parameter, other kinds of value", () => {
    expect(() => withLiterals("SELECT $fn$ x $fn$", [])).toThrow(/dollar-quoted/);
    expect(() => withLiterals("SELECT $2", ["a"])).toThrow(/\$2 has no parameter/);
    expect(() => withLiterals("SELECT 'open", [])).toThrow(/unterminated/);
    expect(() => literal(Number.NaN)).toThrow(RangeError);
    expect(() => literal(new Date(Number.NaN))).toThrow(RangeError);
    expect(() => literal({ a: 1 })).toThrow(TypeError);
    expect(() => literal(new Uint8Array(1))).toThrow(TypeError);
  });
});
