// A project's verifications (issue 22): the log, newest first. Numbers arrive
// masked; codes never arrive at all.
import type { VerificationConversion, VerificationsList } from "@sms/contract";
import { html } from "../kit/html.ts";
import { barChart, percent } from "./charts.ts";
import {
  type Chrome,
  htmlPage,
  note,
  number,
  pager,
  projectHeader,
  projectPath,
  statusBadge,
  table,
  time,
  withQuery,
} from "./layout.ts";

/** Where a verification is shown: its row in the verifications log (there is no page per verification). */
export const verificationHref = (projectId: string, verificationId: string) =>
  `${projectPath(projectId, "/verifications")}#${encodeURIComponent(verificationId)}`;

export function verificationsPage(
  chrome: Chrome,
  options: { projectId: string; list: VerificationsList; isFirst: boolean },
): Response {
  const base = projectPath(options.projectId, "/verifications");
  const messages = projectPath(options.projectId, "/messages");
  const rows = options.list.verifications.map((verification) => [
    html`<code id="${verification.id}">${verification.id}</code>`,
    html`<span class="mono">${verification.to}</span>`,
    statusBadge(verification.status),
    verification.mode,
    number(verification.attempts_used),
    time(verification.created_at, "short"),
    verification.approved_at ? time(verification.approved_at, "short") : "—",
    html`<a href="${messages}/${encodeURIComponent(verification.message_id)}"><code>${verification.message_id}</code></a>`,
  ]);
  return htmlPage(chrome, {
    title: "Verifications",
    section: "projects",
    body: html`${projectHeader(chrome, options.projectId, "verifications", "Verifications")}
<p class="muted">Newest first. Numbers are masked; codes are never stored, only a keyed hash of each, so they are never shown.</p>
${
  rows.length === 0
    ? note("info", html`<p>No verifications yet. Start one with <code>POST /v1/verifications</code>.</p>`)
    : table(
        "Verifications",
        ["Verification", "To", "Status", "Mode", "Wrong codes", "Started", "Approved", "Message"],
        rows,
        [4],
      )
}
${pager({
  first: base,
  next: options.list.next ? withQuery(base, { cursor: options.list.next }) : null,
  isFirst: options.isFirst,
})}`,
  });
}

/** "42 s", "3 min 5 s": a median time to approve. */
function duration(seconds: number | null): string {
  if (seconds === null) return "—";
  const whole = Math.round(seconds);
  if (whole < 60) return `${whole} s`;
  return `${Math.floor(whole / 60)} min ${whole % 60} s`;
}

/** The overview's section: conversion per day (approved ÷ started) and the median time to approve. */
export function conversionSection(conversion: VerificationConversion) {
  const days = conversion.days.map((day) => ({
    day: day.day,
    values: { approved: day.approved, unapproved: day.started - day.approved },
  }));
  return html`<h2 id="verifications">Verifications, last ${conversion.days.length} days</h2>
<div class="cards">
<div class="card"><p class="label">Started</p><p class="value">${number(conversion.started)}</p></div>
<div class="card"><p class="label">Conversion</p><p class="value">${percent(conversion.conversion_rate)}</p><p class="sub">Approved, of the verifications started</p></div>
<div class="card"><p class="label">Median time to approve</p><p class="value">${duration(conversion.median_seconds_to_approve)}</p></div>
</div>
${barChart({
  id: "chart-conversion",
  title: "Verifications per day: approved and not",
  days,
  series: ["approved", "unapproved"],
  classOf: (series) => (series === "approved" ? "s-delivered" : "s-failed"),
  labelOf: (series) => (series === "approved" ? "Approved" : "Not approved"),
  unit: "verifications",
})}
<p class="muted">Per UTC day: ${
    conversion.days
      .filter((day) => day.started > 0)
      .map((day) => `${day.day} ${percent(day.rate)}`)
      .join(" · ") || "no verifications yet"
  }. A sudden drop in conversion is the sign of SMS pumping.</p>`;
}
