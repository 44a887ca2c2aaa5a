// The alerting rules (deploy/prometheus/alerts.yml, issue 51 item 6): valid
// for Prometheus (`promtool check rules`), each alert tested firing and not
// firing (`promtool test rules alerts.test.yml`), and written over the metrics
// and labels the service really registers (apps/api/src/metrics.ts), so that
// renaming a metric or a label fails here rather than silencing an alert.
//
// promtool is Debian's `prometheus` package. Where it is absent the promtool
// cases are skipped with a warning; under CI that is an error instead. The
// metric names are checked everywhere.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Histogram } from "prom-client";
import { describe, expect, it } from "vitest";
import { parseEnv } from "../../src/config/index.ts";
import { periodicJobs } from "../../src/jobs/jobs.ts";
import { createMetrics } from "../../src/metrics.ts";
import type { ApiServices } from "../../src/services.ts";
import { debianToolAvailable } from "../support/debian-tool.ts";

const RULES_DIR = join(import.meta.dirname, "../../../../deploy/prometheus");
const RULES = join(RULES_DIR, "alerts.yml");
const RULE_TESTS = join(RULES_DIR, "alerts.test.yml");

const PROMTOOL = "/usr/bin/promtool";
const promtoolAvailable = () =>
  debianToolAvailable(PROMTOOL, "promtool's checks of the alerting rules", "prometheus");

function promtool(...args: string[]) {
  const run = spawnSync(PROMTOOL, args, { cwd: RULES_DIR, encoding: "utf8", timeout: 60_000 });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe.runIf(promtoolAvailable())("promtool and the alerting rules", () => {
  it("promtool check rules: alerts.yml is valid", () => {
    const run = promtool("check", "rules", RULES);
    expect(run.output).toContain("SUCCESS");
    expect(run.status).toBe(0);
  });

  it("promtool test rules: every case of alerts.test.yml passes", () => {
    const run = promtool("test", "rules", RULE_TESTS);
    expect(run.output).toContain("SUCCESS");
    expect(run.status).toBe(0);
  });
});

/** Each rule's alert name and expression (a one-line `expr:` or a `|` block), read from the file's lines. */
function alertRules(text: string): Array<{ alert: string; expr: string }> {
  const rules: Array<{ alert: string; expr: string }> = [];
  const lines = text.split("\n");
  for (let index = 0; index < lines.length; index++) {
    const alert = /^\s*- alert: (\S+)\s*$/.exec(lines[index] ?? "")?.[1];
    if (!alert) continue;
    let expr: string | null = null;
    for (let next = index + 1; next < lines.length && expr === null; next++) {
      const line = lines[next] ?? "";
      if (/^\s*- (alert|record):/.test(line)) break;
      const match = /^(\s*)expr: (.*)$/.exec(line);
      if (!match) continue;
      if (match[2]?.trim() !== "|") {
        expr = match[2] ?? "";
        break;
      }
      const indent = (match[1] ?? "").length;
      const block: string[] = [];
      for (let body = next + 1; body < lines.length; body++) {
        const bodyLine = lines[body] ?? "";
        if (bodyLine.trim() !== "" && bodyLine.search(/\S/) <= indent) break;
        block.push(bodyLine);
      }
      expr = block.join("\n");
    }
    if (expr === null) throw new Error(`alert ${alert} has no expr`);
    rules.push({ alert, expr });
  }
  return rules;
}

const KEYWORDS = new Set(["and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring"]);

/** The selectors of a PromQL expression: each metric name with the label names its matchers use. */
function selectors(expr: string): Array<{ metric: string; labels: string[] }> {
  const found: Array<{ metric: string; labels: string[] }> = [];
  // Grouping clauses name labels, not metrics; ranges and offsets are durations.
  const cleaned = expr
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\boffset\s+\w+/g, " ");
  const token = /([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?(\s*\()?|"(?:[^"\\]|\\.)*"|\d+(\.\d+)?/g;
  for (const match of cleaned.matchAll(token)) {
    const [, name, matchers, call] = match;
    if (!name || call || KEYWORDS.has(name)) continue;
    const labels = [...(matchers ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)/g)].map(
      (label) => label[1] ?? "",
    );
    found.push({ metric: name, labels });
  }
  return found;
}

/** Every metric the service registers, with its label names (histograms with their _bucket, _count, _sum). */
function registeredMetrics(): Map<string, string[]> {
  const metrics = createMetrics({
    backlog: async () => ({ due: 0, oldestDueSeconds: 0, queued: 0, unknown: 0 }),
    pool: () => null,
  });
  try {
    const known = new Map<string, string[]>();
    for (const metric of metrics.registry.getMetricsAsArray()) {
      const labels = [...((metric as unknown as { labelNames?: string[] }).labelNames ?? [])];
      known.set(metric.name, labels);
      if (metric instanceof Histogram) {
        known.set(`${metric.name}_bucket`, [...labels, "le"]);
        known.set(`${metric.name}_count`, labels);
        known.set(`${metric.name}_sum`, labels);
      }
    }
    return known;
  } finally {
    metrics.stop();
  }
}

describe("the alerting rules and the service's metrics", () => {
  const rules = alertRules(readFileSync(RULES, "utf8"));

  it("reads every alert's expression from alerts.yml", () => {
    const declared = readFileSync(RULES, "utf8").match(/^\s*- alert: /gm) ?? [];
    expect(rules.length).toBe(declared.length);
    expect(rules.length).toBeGreaterThanOrEqual(14);
    for (const rule of rules) expect(selectors(rule.expr).length, rule.alert).toBeGreaterThan(0);
  });

  it("uses only metrics the service registers, with labels they have (and Prometheus' up, job, instance)", () => {
    const known = registeredMetrics();
    const problems: string[] = [];
    for (const rule of rules) {
      for (const { metric, labels } of selectors(rule.expr)) {
        if (metric === "up") continue;
        const names = known.get(metric);
        if (!names) {
          problems.push(`${rule.alert}: ${metric} is not registered`);
          continue;
        }
        // The scrape adds job and instance; a label of the service's own named job is stored as exported_job.
        const allowed = new Set([
          ...names,
          "job",
          "instance",
          ...(names.includes("job") ? ["exported_job"] : []),
        ]);
        for (const label of labels) {
          if (!allowed.has(label)) problems.push(`${rule.alert}: ${metric} has no label ${label}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("names periodic jobs that exist (exported_job)", () => {
    const rounds = new Proxy({}, { get: () => async () => ({}) }) as ApiServices["rounds"];
    const jobs = new Set(periodicJobs(rounds, parseEnv({})).map((job) => job.name));
    const named = rules.flatMap((rule) =>
      [...rule.expr.matchAll(/exported_job="([^"]+)"/g)].map((m) => m[1]),
    );
    expect(named.length).toBeGreaterThan(0);
    for (const name of named) expect(jobs, `exported_job="${name}"`).toContain(name);
  });

  it("the name check catches a metric or a label that does not exist", () => {
    const known = registeredMetrics();
    const found = selectors('rate(sms_no_such_total{code="x"}[5m]) > 0 and on (job) sms_ready');
    expect(found).toEqual([
      { metric: "sms_no_such_total", labels: ["code"] },
      { metric: "sms_ready", labels: [] },
    ]);
    expect(known.has("sms_no_such_total")).toBe(false);
    expect(known.get("sms_http_errors_total")).toEqual(["code", "route"]);
  });

  it("alerts.test.yml tests every alert both firing and not firing", () => {
    const lines = readFileSync(RULE_TESTS, "utf8").split("\n");
    const firing = new Set<string>();
    const quiet = new Set<string>();
    for (let index = 0; index < lines.length; index++) {
      const name = /^\s*alertname: (\S+)\s*$/.exec(lines[index] ?? "")?.[1];
      if (!name) continue;
      const expected = lines[index + 1] ?? "";
      if (/exp_alerts: \[\]\s*$/.test(expected)) quiet.add(name);
      else if (/exp_alerts:\s*$/.test(expected)) firing.add(name);
      else throw new Error(`alertname ${name}: exp_alerts must follow it`);
    }
    const alerts = rules.map((rule) => rule.alert).sort();
    expect([...firing].sort()).toEqual(alerts);
    expect([...quiet].sort()).toEqual(alerts);
  });
});
