// The operator's pages: find a project, act on it (suspend, reinstate, grant
// paid credits, create or revoke keys), decide sender requests, read the
// audit log. Everything the command-line tool does, through the same procedures.
import type {
  AuditPage,
  AuditRecord,
  Described,
  FoundProjects,
  SenderRequestRecord,
  SenderRequests,
} from "@sms/contract";
import { type Html, html } from "../kit/html.ts";
import { auditSentence } from "./audit.ts";
import { meter } from "./charts.ts";
import {
  type Chrome,
  csrfField,
  htmlPage,
  keyCells,
  note,
  number,
  pager,
  projectState,
  statusBadge,
  table,
  time,
  withQuery,
} from "./layout.ts";

export const operatorProjectPath = (projectId: string, rest = "") =>
  `/dashboard/operator/projects/${encodeURIComponent(projectId)}${rest}`;

function operatorTitle(title: string): Html {
  return html`<p class="crumbs"><a href="/dashboard/operator">Operator</a></p><h1>${title}</h1>`;
}

function foundTable(found: FoundProjects): Html {
  if (found.projects.length === 0) return note("info", html`<p>No project matches.</p>`);
  return table(
    "Projects found",
    ["Project", "Account", "Created", "Claimed", "State", "Sender", "Credits"],
    found.projects.map((project) => [
      html`<a href="${operatorProjectPath(project.id)}"><code>${project.id}</code></a>`,
      project.account_email
        ? project.account_email
        : html`<span class="muted">${project.account_id ?? "unclaimed"}</span>`,
      time(project.created_at, "short"),
      time(project.claimed_at, "short"),
      projectState(project),
      project.sender ? project.sender : html`<span class="muted">default</span>`,
      number(project.credit_balance),
    ]),
    [6],
  );
}

/** One card per request (a table cannot hold two forms legibly at 390 px). */
function requestCard(chrome: Chrome, request: SenderRequestRecord, brandsConfigured: boolean): Html {
  const id = request.id;
  const action = (verb: string) => `/dashboard/operator/sender-requests/${encodeURIComponent(id)}/${verb}`;
  return html`<section class="panel" aria-labelledby="request-${id}">
<h3 id="request-${id}">${request.name} <span class="muted">for <a href="${operatorProjectPath(request.project_id)}"><code>${request.project_id}</code></a></span></h3>
<dl class="facts"><dt>Purpose</dt><dd>${request.purpose}</dd><dt>Requested</dt><dd>${time(request.created_at)} by <code>${request.requested_by}</code></dd></dl>
<div class="grid-2">
<form method="post" action="${action("approve")}">${csrfField(chrome)}
<div class="field"><label for="brand-${id}">uBill brand id <span class="hint">(${brandsConfigured ? "optional: found by name in uBill's brand list" : "required: no brand list is configured"})</span></label>
<input id="brand-${id}" name="brand_id" inputmode="numeric" pattern="[0-9]*" maxlength="9"${!brandsConfigured && " required"}></div>
<div class="actions"><button type="submit" class="primary">Approve ${request.name}</button></div></form>
<form method="post" action="${action("refuse")}">${csrfField(chrome)}
<div class="field"><label for="reason-${id}">Reason for refusing <span class="hint">(the account holder sees it)</span></label><input id="reason-${id}" name="reason" required maxlength="500"></div>
<div class="actions"><button type="submit">Refuse ${request.name}</button></div></form>
</div></section>`;
}

/** The latest audit entries as sentences: when, who, what, which project. */
function latestActions(entries: AuditRecord[]): Html {
  return html`<ol class="events">
${entries.map(
  (entry) =>
    html`<li>${time(entry.created_at, "short")} · <code>${entry.actor}</code>: ${auditSentence(entry)}${entry.project_id && html` · <a href="${operatorProjectPath(entry.project_id)}"><code>${entry.project_id}</code></a>`}</li>\n`,
)}</ol>`;
}

export function operatorHomePage(
  chrome: Chrome,
  options: {
    query: string;
    found: FoundProjects | null;
    problem: string | null;
    requests: SenderRequests;
    requestsFirst: boolean;
    notice: Html | "";
    brandsConfigured: boolean;
    /** The latest audit entries, newest first. */
    latest: AuditRecord[];
  },
): Response {
  const requests = options.requests.requests.map(
    (request, i) => html`${i > 0 && "\n"}${requestCard(chrome, request, options.brandsConfigured)}`,
  );
  return htmlPage(chrome, {
    title: "Operator",
    section: "operator",
    body: html`<h1>Operator</h1>
${options.notice}
<form method="post" action="/dashboard/operator/search" class="panel" role="search">${csrfField(chrome)}
<div class="form-grid">
<div class="field"><label for="q">Find a project <span class="hint">(project id, key prefix such as sk_live_AbCd, or account e-mail)</span></label>
<input id="q" name="q" value="${options.query}" required maxlength="300" autocomplete="off" spellcheck="false"></div>
<div class="field"><button type="submit" class="primary">Find</button></div>
</div></form>
${options.problem && note("bad", html`<p>${options.problem}</p>`, "alert")}
${options.found && foundTable(options.found)}
<h2>Sender requests waiting</h2>
${requests.length > 0 ? requests : html`<p class="muted">None waiting.</p>`}
${pager({ first: "/dashboard/operator", next: options.requests.next ? withQuery("/dashboard/operator", { requests: options.requests.next }) : null, isFirst: options.requestsFirst })}
<h2>Latest actions</h2>
${options.latest.length > 0 ? latestActions(options.latest) : html`<p class="muted">Nothing yet.</p>`}
<p><a href="/dashboard/operator/audit">The whole audit log: every operator and dashboard action, newest first</a></p>`,
  });
}

function actions(chrome: Chrome, base: string, project: Described["project"]): Html {
  const suspended = project.suspended_at !== null;
  const cap = project.daily_credit_cap;
  const suspension = suspended
    ? html`<form method="post" action="${base}/reinstate" class="panel">${csrfField(chrome)}
<h3>Reinstate</h3>
<div class="field"><label for="reinstate-reason">Reason <span class="hint">(optional; written to the audit log)</span></label><input id="reinstate-reason" name="reason" maxlength="500"></div>
<div class="actions"><button type="submit" class="primary">Reinstate the project</button></div></form>`
    : html`<form method="post" action="${base}/suspend" class="panel">${csrfField(chrome)}
<h3>Suspend</h3>
<div class="field"><label for="suspend-reason">Reason <span class="hint">(written to the audit log)</span></label><input id="suspend-reason" name="reason" required maxlength="500"></div>
<div class="actions"><button type="submit" class="danger">Suspend the project</button></div>
<p class="muted">Every key is then answered <code>403 project_suspended</code>.</p></form>`;
  return html`<div class="grid-2">
${suspension}
<form method="post" action="${base}/credits" class="panel">${csrfField(chrome)}
<h3>Grant paid credits</h3>
<div class="form-grid">
<div class="field"><label for="amount">Credits</label><input id="amount" name="amount" required inputmode="numeric" pattern="[0-9]*" maxlength="7"></div>
<div class="field"><label for="reference">Reference <span class="hint">(invoice or payment id; a repeat is a no-op)</span></label><input id="reference" name="reference" maxlength="200"></div>
</div>
<div class="actions"><button type="submit" class="primary">Grant credits</button></div></form>
<form method="post" action="${base}/daily-cap" class="panel">${csrfField(chrome)}
<h3>Daily credit cap</h3>
<div class="field"><label for="daily-cap">Credits a UTC day <span class="hint">(empty: no cap; now ${cap === null ? "none" : number(cap)})</span></label><input id="daily-cap" name="daily_credit_cap" inputmode="numeric" pattern="[0-9]*" maxlength="9" value="${cap === null ? "" : String(cap)}" autocomplete="off"></div>
<div class="actions"><button type="submit" class="primary">Set the daily cap</button></div>
<p class="muted">Live sends past it are refused with <code>429 daily_limit_reached</code> until midnight UTC.</p></form>
<form method="post" action="${base}/keys/live" class="panel">${csrfField(chrome)}
<h3>Live key</h3>
<p class="muted">For a claimed, active project; shown once.</p>
<div class="actions"><button type="submit">Create a live key</button></div></form>
</div>`;
}

export function operatorProjectPage(
  chrome: Chrome,
  options: { described: Described; notice: Html | ""; defaultSender: string },
): Response {
  const { project, credits, free_tier: freeTier, keys, messages } = options.described;
  const base = operatorProjectPath(project.id);
  const keyRows = keys.map((key) =>
    keyCells(
      key,
      withQuery(`/dashboard/operator/keys/${encodeURIComponent(key.id)}/revoke`, { project: project.id }),
    ),
  );
  const counts = messages.map((row) => [
    row.mode,
    statusBadge(row.status),
    number(row.last_24h),
    number(row.last_7d),
  ]);
  return htmlPage(chrome, {
    title: `Operator: ${project.id}`,
    section: "operator",
    body: html`${operatorTitle(`Project ${project.id}`)}
${options.notice}
<div class="cards">
<div class="card"><p class="label">State</p><p class="value">${projectState(project)}</p><p class="sub">${project.suspended_at ? html`since ${time(project.suspended_at)}` : project.claimed_at ? html`claimed ${time(project.claimed_at)}` : "not claimed"}</p></div>
<div class="card"><p class="label">Account</p><p class="value mono">${project.account_id ?? "—"}</p></div>
<div class="card"><p class="label">Credits</p><p class="value">${number(credits.balance)}</p><p class="sub">${credits.consistent ? "Matches the ledger" : html`<span class="state-suspended">Ledger: ${number(credits.ledger_sum)}</span>`}${credits.has_paid_credits && "; paid credits granted"}</p></div>
<div class="card"><p class="label">Sender</p><p class="value">${project.sender ?? options.defaultSender}</p><p class="sub">${project.sender ? `uBill brand ${project.sender_brand_id ?? "?"}` : "shared default"}</p></div>
<div class="card"><p class="label">Daily credit cap</p><p class="value">${project.daily_credit_cap === null ? "None" : number(project.daily_credit_cap)}</p><p class="sub">Live credits a UTC day</p></div>
<div class="card"><p class="label">Free tier today</p><p class="value">${freeTier.applies ? `${number(freeTier.used_today)} / ${number(freeTier.limit)}` : "Lifted"}</p>${freeTier.applies && meter(freeTier.used_today, freeTier.limit, "Free-tier segments used today")}</div>
</div>
<h2>Act</h2>
${actions(chrome, base, project)}
<h2>Keys</h2>
${keyRows.length > 0 ? table("Keys", ["Key", "Mode", "Created", "Last used", "State", ""], keyRows) : html`<p class="muted">No keys.</p>`}
<h2>Messages, last 7 days</h2>
${counts.length > 0 ? table("Message counts", ["Mode", "Status", "Last 24 h", "Last 7 days"], counts, [2, 3]) : html`<p class="muted">None.</p>`}
<p><a href="${withQuery("/dashboard/operator/audit", { project: project.id })}">This project's audit log</a></p>`,
  });
}

export function operatorKeyPage(
  chrome: Chrome,
  options: { projectId: string; key: { prefix: string; api_key: string } },
): Response {
  return htmlPage(chrome, {
    title: "New live key",
    section: "operator",
    body: html`${operatorTitle(`A live key for ${options.projectId}`)}
${note("warn", html`<p><strong>This is the only time the whole key is shown.</strong> Hand it over securely now; only its hash is stored.</p>`, "alert")}
<div class="panel"><label for="new-key">Live API key <span class="hint">(${options.key.prefix}…)</span></label>
<div class="secret"><input id="new-key" readonly value="${options.key.api_key}" data-select-on-focus autocomplete="off" spellcheck="false">
<button type="button" data-copy="new-key" hidden>Copy</button></div></div>
<p><a href="${operatorProjectPath(options.projectId)}">Back to the project</a></p>`,
  });
}

export function operatorRevokeConfirmPage(
  chrome: Chrome,
  options: { projectId: string; key: { id: string; prefix: string; mode: string } },
): Response {
  return htmlPage(chrome, {
    title: "Revoke a key",
    section: "operator",
    body: html`${operatorTitle("Revoke this key?")}
<dl class="facts panel"><dt>Project</dt><dd><code>${options.projectId}</code></dd><dt>Key</dt><dd><code>${options.key.prefix}…</code> (${options.key.mode})</dd></dl>
<p>Every request with it is then answered <code>401 invalid_api_key</code>, within a few seconds on every server.</p>
<form method="post" action="/dashboard/operator/keys/${encodeURIComponent(options.key.id)}/revoke">${csrfField(chrome)}
<input type="hidden" name="project" value="${options.projectId}">
<div class="actions"><button type="submit" class="danger">Revoke ${options.key.prefix}…</button><a href="${operatorProjectPath(options.projectId)}">Cancel</a></div></form>`,
  });
}

export function operatorAuditPage(
  chrome: Chrome,
  options: { audit: AuditPage; projectId: string | null; isFirst: boolean },
): Response {
  const base = "/dashboard/operator/audit";
  const rows = options.audit.entries.map((entry) => [
    time(entry.created_at, "short"),
    html`<code>${entry.actor}</code>`,
    html`<code>${entry.action}</code>`,
    entry.project_id &&
      html`<a href="${operatorProjectPath(entry.project_id)}"><code>${entry.project_id}</code></a>`,
    html`<span class="said">${auditSentence(entry)}</span>`,
  ]);
  return htmlPage(chrome, {
    title: "Audit log",
    section: "operator",
    body: html`${operatorTitle("Audit log")}
<form method="get" action="${base}" class="panel" role="search"><div class="form-grid">
<div class="field"><label for="audit-project">Project <span class="hint">(prj_…; empty for all)</span></label><input id="audit-project" name="project" value="${options.projectId ?? ""}" maxlength="40" spellcheck="false"></div>
<div class="field"><button type="submit" class="primary">Show</button></div></div></form>
${rows.length > 0 ? table("Audit log", ["When", "Actor", "Action", "Project", "What happened"], rows) : note("info", html`<p>No entries.</p>`)}
${pager({
  first: withQuery(base, { project: options.projectId }),
  next: options.audit.next
    ? withQuery(base, { project: options.projectId, cursor: options.audit.next })
    : null,
  isFirst: options.isFirst,
})}`,
  });
}
