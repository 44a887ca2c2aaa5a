// The account holder's projects: the list, and a project's overview with the
// usage charts.
import type { Overview, ProjectsList, Usage, VerificationConversion } from "@sms/contract";
import { MESSAGE_STATUSES } from "@sms/domain";
import { type Html, html } from "../kit/html.ts";
import { barChart, meter, percent } from "./charts.ts";
import {
  type Chrome,
  csrfField,
  htmlPage,
  note,
  number,
  pager,
  projectHeader,
  projectPath,
  projectState,
  table,
  time,
  withQuery,
} from "./layout.ts";
import { conversionSection } from "./verifications.ts";

export function projectsPage(chrome: Chrome, list: ProjectsList, options: { isFirst: boolean }): Response {
  const rows = list.projects.map((project) => [
    html`<a href="${projectPath(project.id)}">${project.name && html`<strong class="project-name">${project.name}</strong> `}<code>${project.id}</code></a>`,
    time(project.claimed_at),
    projectState(project),
    project.sender
      ? project.sender
      : html`<span class="muted">shared default</span>${project.pending_sender && html` <span class="muted">(${project.pending_sender} requested)</span>`}`,
    number(project.credit_balance),
    number(project.messages_today),
  ]);
  const body =
    list.projects.length === 0 && options.isFirst
      ? note(
          "info",
          html`<p><strong>No projects yet.</strong> Projects appear here once you claim them: get a test key with <code>POST /v1/test-keys</code> and open its <code>claim_url</code> in this browser, signed in as you are now.</p>`,
        )
      : html`${table(
          "Your projects",
          ["Project", "Claimed", "State", "Sender", "Credits", "Messages today"],
          rows,
          [4, 5],
        )}
${pager({ first: "/dashboard/projects", next: list.next ? withQuery("/dashboard/projects", { cursor: list.next }) : null, isFirst: options.isFirst })}`;
  return htmlPage(chrome, {
    title: "Your projects",
    section: "projects",
    body: html`<h1>Your projects</h1>\n${body}
<section class="panel" aria-labelledby="sessions-title"><h2 id="sessions-title">Sessions</h2>
<p class="muted">Signed in on a computer you no longer use? End every session of your account, here and everywhere else.</p>
<form method="post" action="/dashboard/sign-out-everywhere">${csrfField(chrome)}
<div class="actions"><button type="submit">Sign out everywhere</button></div></form></section>`,
  });
}

const STATUS_LABEL: Record<string, string> = {
  queued: "Queued",
  submitted: "Submitted",
  delivered: "Delivered",
  undeliverable: "Undeliverable",
  failed: "Failed",
  unknown: "Unknown",
};

export function overviewPage(
  chrome: Chrome,
  overview: Overview,
  usage: Usage,
  options: {
    mode: "live" | "test" | null;
    defaultSender: string;
    conversion: VerificationConversion;
    console?: Html;
  },
): Response {
  const { project, credits, free_tier: freeTier } = overview;
  const base = projectPath(project.id);
  const pending = overview.pending_sender_request;
  const modeLink = (mode: "live" | "test" | null, label: string) =>
    html`<a href="${mode ? `${base}?mode=${mode}` : base}"${options.mode === mode && html` aria-current="true"`}>${label}</a>`;
  const byStatus = usage.days.map((day) => ({
    day: day.day,
    values: day.by_status as Record<string, number>,
  }));
  const segments = usage.days.map((day) => ({ day: day.day, values: { segments: day.segments } }));
  const suspended =
    project.suspended_at &&
    note(
      "bad",
      html`<p><strong>This project is suspended</strong> since ${time(project.suspended_at)}: every key is answered with <code>403 project_suspended</code>. Contact the operator.</p>`,
      "alert",
    );
  return htmlPage(chrome, {
    title: `Project ${project.id}`,
    section: "projects",
    body: html`${projectHeader(chrome, project.id, "overview", "Overview")}
${suspended}
${options.console ?? ""}
<div class="cards">
<div class="card"><p class="label">State</p><p class="value">${projectState(project)}</p><p class="sub">Claimed ${time(project.claimed_at)}</p></div>
<div class="card"><p class="label">Credit balance</p><p class="value">${number(credits.balance)}</p><p class="sub">${credits.consistent ? "Matches the ledger" : html`<span class="state-suspended">Ledger says ${number(credits.ledger_sum)}</span>`}</p></div>
<div class="card"><p class="label">Messages today</p><p class="value">${number(overview.messages_today)}</p><p class="sub">Since midnight UTC</p></div>
<div class="card"><p class="label">Sender name</p><p class="value">${project.sender ?? options.defaultSender}</p><p class="sub">${project.sender ? "Approved for this project" : "Shared default"}${pending && html`; <a href="${base}/sender">${pending.name}</a> requested`}</p></div>
<div class="card"><p class="label">Free tier today</p><p class="value">${freeTier.applies ? `${number(freeTier.used_today)} / ${number(freeTier.limit)}` : "Not applicable"}</p>
${freeTier.applies && meter(freeTier.used_today, freeTier.limit, "Free-tier segments used today")}<p class="sub">${freeTier.applies ? "Live segments; resets at midnight UTC" : "Paid credits lift the daily allowance"}</p></div>
</div>
<h2 id="usage">Usage, last ${usage.days.length} days</h2>
<p class="muted">Show: ${modeLink(null, "all keys")} · ${modeLink("live", "live keys")} · ${modeLink("test", "test keys")}</p>
<div class="cards">
<div class="card"><p class="label">Messages</p><p class="value">${number(usage.totals.messages)}</p></div>
<div class="card"><p class="label">Segments</p><p class="value">${number(usage.totals.segments)}</p></div>
<div class="card"><p class="label">Delivery rate, live keys</p><p class="value">${percent(usage.delivery_rate_by_mode.live)}</p><p class="sub">Delivered, of the live messages in a final status</p></div>
<div class="card"><p class="label">Delivery rate, test keys</p><p class="value">${percent(usage.delivery_rate_by_mode.test)}</p><p class="sub">The simulator: its failing numbers fail on purpose</p></div>
</div>
<div class="grid-2">
${barChart({
  id: "chart-status",
  title: "Messages per day by status",
  days: byStatus,
  series: [...MESSAGE_STATUSES],
  classOf: (status) => `s-${status}`,
  labelOf: (status) => STATUS_LABEL[status] ?? status,
  unit: "messages",
  emptyHint: "A message sent with this project's keys shows here a moment later.",
})}
${barChart({
  id: "chart-segments",
  title: "Segments per day",
  days: segments,
  series: ["segments"],
  classOf: () => "bar",
  labelOf: () => "Segments",
  unit: "segments",
})}
</div>
<p class="muted">Days are UTC. Live segments cost one credit each; test keys never send real SMS.</p>
${conversionSection(options.conversion)}`,
  });
}
