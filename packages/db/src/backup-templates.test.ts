// The pgBackRest templates the restore drill renders (deploy/pgbackrest/) and
// the renderer itself: every placeholder of a shipped file has a value, the
// rendered files name what the runbook (docs/operations.md) relies on, and a
// missing or an unused value is an error rather than a silent gap; the
// runbook's commands fill every placeholder.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PGBACKREST_TEMPLATE_DIR, renderPgBackRestTemplate } from "./testing/index.ts";

const template = (name: string) => readFileSync(join(PGBACKREST_TEMPLATE_DIR, name), "utf8");

describe("deploy/pgbackrest templates", () => {
  it("renders pgbackrest.conf with a stanza of the given name over the given cluster and repository", () => {
    const rendered = renderPgBackRestTemplate(template("pgbackrest.conf"), {
      repo_path: "/var/lib/pgbackrest",
      log_path: "/var/log/pgbackrest",
      lock_path: "/tmp/pgbackrest",
      spool_path: "/var/spool/pgbackrest",
      stanza: "sms",
      pg_path: "/var/lib/postgresql/15/main",
      pg_port: "5432",
      pg_socket_path: "/var/run/postgresql",
    });
    expect(rendered).not.toContain("{{");
    expect(rendered).toContain("\n[sms]\npg1-path=/var/lib/postgresql/15/main\n");
    expect(rendered).toContain("\nrepo1-path=/var/lib/pgbackrest\n");
    expect(rendered).toMatch(/\nrepo1-retention-full=\d+\n/);
  });

  it("renders postgresql.conf: archive_mode on, archive_command pushing into that stanza", () => {
    const rendered = renderPgBackRestTemplate(template("postgresql.conf"), {
      config_path: "/etc/pgbackrest/pgbackrest.conf",
      stanza: "sms",
    });
    expect(rendered).toContain("\narchive_mode = on\n");
    expect(rendered).toContain(
      "\narchive_command = 'pgbackrest --config=/etc/pgbackrest/pgbackrest.conf --stanza=sms archive-push %p'\n",
    );
  });

  it("refuses a placeholder without a value and a value without a placeholder", () => {
    expect(() => renderPgBackRestTemplate("a={{a}} b={{b}}", { a: "1" })).toThrow(/\{\{b\}\}/);
    expect(() => renderPgBackRestTemplate("a={{a}}", { a: "1", c: "2" })).toThrow(/\{\{c\}\}/);
    expect(renderPgBackRestTemplate("a={{a}} again {{a}}", { a: "1" })).toBe("a=1 again 1");
  });

  it("is installed by the runbook: docs/operations.md's sed commands give every placeholder a value", () => {
    const operations = readFileSync(
      join(PGBACKREST_TEMPLATE_DIR, "..", "..", "docs", "operations.md"),
      "utf8",
    );
    const start = operations.indexOf("## Backups and restore");
    expect(start).toBeGreaterThan(-1);
    const end = operations.indexOf("\n## ", start + 1);
    const section = operations.slice(start, end === -1 ? undefined : end);
    const values = Object.fromEntries(
      [...section.matchAll(/'s\|\{\{(\w+)\}\}\|([^|]*)\|'/g)].map((match) => [match[1], match[2]]),
    ) as Record<string, string>;
    for (const name of ["pgbackrest.conf", "postgresql.conf"]) {
      const text = template(name);
      const used = new Set([...text.matchAll(/\{\{(\w+)\}\}/g)].map((match) => match[1] as string));
      const rendered = renderPgBackRestTemplate(
        text,
        Object.fromEntries(Object.entries(values).filter(([placeholder]) => used.has(placeholder))),
      );
      expect(rendered).not.toContain("{{");
    }
    expect(section).toContain("--type=time");
    expect(section).toContain("--target-action=promote");
    expect(section).toContain("`MESSAGE_ENCRYPTION_KEYS`");
  });
});
