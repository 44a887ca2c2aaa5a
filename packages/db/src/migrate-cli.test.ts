// migrateCli (`npm run db:migrate`'s work): takes its target from its caller
// and answers with what to print; a failure is one line and exit code 1.
import { describe, expect, it } from "vitest";
import { migrateCli } from "./migrate-cli.ts";

describe("migrateCli", () => {
  it("a database that cannot be reached: exit code 1, one line, no password", async () => {
    const result = await migrateCli({
      // Nothing listens on port 1.
      databaseUrl: "postgresql://postgres:pa55word-secret@127.0.0.1:1/sms",
      pgliteDataDir: "/nonexistent/unused",
    });
    expect(result.exitCode).toBe(1);
    const line = result.exitCode === 1 ? result.error : "";
    expect(line).toMatch(/^db:migrate: \S/);
    expect(line).not.toContain("\n");
    expect(line).not.toContain("pa55word-secret");
  });
});
