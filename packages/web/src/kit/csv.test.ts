// The CSV formula guard (OWASP CSV injection): what a spreadsheet would run is
// prefixed with ', plain and masked numbers pass as they are.
import { describe, expect, it } from "vitest";
import { csvCell, csvRow } from "./csv.ts";

describe("csvCell", () => {
  it("prefixes every cell a spreadsheet would run as a formula", () => {
    for (const formula of [
      "=1+1",
      "@SUM(A1)",
      "\tcmd",
      "\rcmd",
      "+1+cmd|' /C calc'!A0",
      "-2+3",
      "+cmd",
      "-cmd",
      "+9955••••••56+1",
    ]) {
      expect(csvCell(formula).replace(/^"/, "")).toMatch(/^'/);
    }
  });

  it("leaves plain numbers, masked numbers and ordinary text as they are", () => {
    expect(csvCell("-5")).toBe("-5");
    expect(csvCell("+12.5")).toBe("+12.5");
    expect(csvCell("+9955••••••56")).toBe("+9955••••••56");
    expect(csvCell(-3)).toBe("-3");
    expect(csvCell("delivered")).toBe("delivered");
    expect(csvCell(null)).toBe("");
  });

  it("quotes commas, quotes and line breaks (RFC 4180)", () => {
    expect(csvCell('a,"b"')).toBe('"a,""b"""');
    expect(csvRow(["=x,y", 1])).toBe(`"'=x,y",1\r\n`);
  });
});
