// The operator's pages: find a project, act on it (suspend, reinstate, grant
// paid credits, create or revoke keys), decide sender requests, read the
// audit log. Everything the command-line tool does, with the same functions.
import type { inferRouterOutputs } from "@trpc/server";
import type { InternalRouter } from "../../../internal-router.ts";
import { meter } from "./charts.ts";
import {
  type Chrome,
  csrfField,
  esc,
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

type Out = inferRouterOutputs<InternalRouter>["operator"];
export type FoundProjects = Extract<Out["projects"]["find"], { ok: true }>;
export type Described = Extract<Out["projects"]["get"], { ok: true }>;
export type SenderRequests = Out["senderRequests"]["list"];
export type AuditPage = Extract<Out["audit"]["list"], { ok: true }>;

const opProject = (projectId: string, rest = "") =>
  `/dashboard/operator/projects/${encodeURIComponent(projectId)}${rest}`;

function operatorTitle(title: string): string {
  return `<p class="crumbs"><a href="/dashboard/operator">Operator</a></p><h1>${esc(title)}</h1>`;
}

export function operatorHomePage(
  chrome: Chrome,
  options: {
    query: string;
    found: FoundProjects | null;
    problem: string | null;
    requests: SenderRequests;
    requestsFirst: boolean;
    notice: string;
    brandsConfigured: boolean;
  },
): Response {
  const found = options.found
    ? options.found.projects.length === 0
      ? note("info", "<p>No project matches.</p>")
      : table(
          "Projects found",
          ["Project", "Account", "Created", "Claimed", "State", "Sender", "Credits"],
          options.found.projects.map((project) => [
            `<a href="${opProject(project.id)}"><code>${esc(project.id)}</code></a>`,
            project.account_email
              ? esc(project.account_email)
              : `<span class="muted">${project.account_id ? esc(project.account_id) : "unclaimed"}</span>`,
            time(project.created_at, "short"),
            time(project.claimed_at, "short"),
            projectState(project),
            project.sender ? esc(project.sender) : `<span class="muted">default</span>`,
            number(project.credit_balance),
          ]),
          [6],
        )
    : "";
  // One card per request (a table cannot hold two forms legibly at 390 px).
  const requests = options.requests.requests.map(
    (request) => `<section class="panel" aria-labelledby="request-${esc(request.id)}">
<h3 id="request-${esc(request.id)}">${esc(request.name)} <span class="muted">for <a href="${opProject(request.project_id)}"><code>${esc(request.project_id)}</code></a></span></h3>
<dl class="facts"><dt>Purpose</dt><dd>${esc(request.purpose)}</dd><dt>Requested</dt><dd>${time(request.created_at)} by <code>${esc(request.requested_by)}</code></dd></dl>
<div class="grid-2">
<form method="post" action="/dashboard/operator/sender-requests/${encodeURIComponent(request.id)}/approve">${csrfField(chrome)}
<div class="field"><label for="brand-${esc(request.id)}">uBill brand id <span class="hint">(${options.brandsConfigured ? "optional: found by name in uBill's brand list" : "required: no brand list is configured"})</span></label>
<input id="brand-${esc(request.id)}" name="brand_id" inputmode="numeric" pattern="[0-9]*" maxlength="9"${options.brandsConfigured ? "" : " required"}></div>
<div class="actions"><button type="submit" class="primary">Approve ${esc(request.name)}</button></div></form>
<form method="post" action="/dashboard/operator/sender-requests/${encodeURIComponent(request.id)}/refuse">${csrfField(chrome)}
<div class="field"><label for="reason-${esc(request.id)}">Reason for refusing <span class="hint">(the account holder sees it)</span></label><input id="reason-${esc(request.id)}" name="reason" required maxlength="500"></div>
<div class="actions"><button type="submit">Refuse ${esc(request.name)}</button></div></form>
</div></section>`,
  );
  return htmlPage(chrome, {
    title: "Operator",
    section: "operator",
    body: `<h1>Operator</h1>
${options.notice}
<form method="get" action="/dashboard/operator" class="panel" role="search">
<div class="form-grid">
<div class="field"><label for="q">Find a project <span class="hint">(project id, key prefix such as sk_live_AbCd, or account e-mail)</span></label>
<input id="q" name="q" value="${esc(options.query)}" required maxlength="300" autocomplete="off" spellcheck="false"></div>
<div class="field"><button type="submit" class="primary">Find</button></div>
</div></form>
${options.problem ? note("bad", `<p>${esc(options.problem)}</p>`, "alert") : ""}
${found}
<h2>Sender requests waiting</h2>
${requests.length > 0 ? requests.join("\n") : `<p class="muted">None waiting.</p>`}
${pager({ first: "/dashboard/operator", next: options.requests.next ? withQuery("/dashboard/operator", { requests: options.requests.next }) : null, isFirst: options.requestsFirst })}
<h2>Audit log</h2>
<p><a href="/dashboard/operator/audit">Every operator and dashboard action, newest first</a></p>`,
  });
}

export function operatorProjectPage(
  chrome: Chrome,
  options: { described: Described; notice: string; defaultSender: string },
): Response {
  const { project, credits, free_tier: freeTier, keys, messages } = options.described;
  const base = opProject(project.id);
  const keyRows = keys.map((key) =>
    keyCells(
      key,
      withQuery(`/dashboard/operator/keys/${encodeURIComponent(key.id)}/revoke`, { project: project.id }),
    ),
  );
  const counts = messages.map((row) => [
    esc(row.mode),
    statusBadge(row.status),
    number(row.last_24h),
    number(row.last_7d),
  ]);
  const suspension = project.suspended_at
    ? `<form method="post" action="${base}/reinstate" class="panel">${csrfField(chrome)}
<h3>Reinstate</h3>
<div class="field"><label for="reinstate-reason">Reason <span class="hint">(optional; written to the audit log)</span></label><input id="reinstate-reason" name="reason" maxlength="500"></div>
<div class="actions"><button type="submit" class="primary">Reinstate the project</button></div></form>`
    : `<form method="post" action="${base}/suspend" class="panel">${csrfField(chrome)}
<h3>Suspend</h3>
<div class="field"><label for="suspend-reason">Reason <span class="hint">(written to the audit log)</span></label><input id="suspend-reason" name="reason" required maxlength="500"></div>
<div class="actions"><button type="submit" class="danger">Suspend the project</button></div>
<p class="muted">Every key is then answered <code>403 project_suspended</code>.</p></form>`;
  return htmlPage(chrome, {
    title: `Operator: ${project.id}`,
    section: "operator",
    body: `${operatorTitle(`Project ${project.id}`)}
${options.notice}
<div class="cards">
<div class="card"><p class="label">State</p><p class="value">${projectState(project)}</p><p class="sub">${project.suspended_at ? `since ${time(project.suspended_at)}` : project.claimed_at ? `claimed ${time(project.claimed_at)}` : "not claimed"}</p></div>
<div class="card"><p class="label">Account</p><p class="value mono">${project.account_id ? esc(project.account_id) : "—"}</p></div>
<div class="card"><p class="label">Credits</p><p class="value">${number(credits.balance)}</p><p class="sub">${credits.consistent ? "Matches the ledger" : `<span class="state-suspended">Ledger: ${number(credits.ledger_sum)}</span>`}${credits.has_paid_credits ? "; paid credits granted" : ""}</p></div>
<div class="card"><p class="label">Sender</p><p class="value">${esc(project.sender ?? options.defaultSender)}</p><p class="sub">${project.sender ? `uBill brand ${project.sender_brand_id ?? "?"}` : "shared default"}</p></div>
<div class="card"><p class="label">Free tier today</p><p class="value">${freeTier.applies ? `${number(freeTier.used_today)} / ${number(freeTier.limit)}` : "Lifted"}</p>${freeTier.applies ? meter(freeTier.used_today, freeTier.limit, "Free-tier segments used today") : ""}</div>
</div>
<h2>Act</h2>
<div class="grid-2">
${suspension}
<form method="post" action="${base}/credits" class="panel">${csrfField(chrome)}
<h3>Grant paid credits</h3>
<div class="form-grid">
<div class="field"><label for="amount">Credits</label><input id="amount" name="amount" required inputmode="numeric" pattern="[0-9]*" maxlength="7"></div>
<div class="field"><label for="reference">Reference <span class="hint">(invoice or payment id; a repeat is a no-op)</span></label><input id="reference" name="reference" maxlength="200"></div>
</div>
<div class="actions"><button type="submit" class="primary">Grant credits</button></div></form>
<form method="post" action="${base}/keys/live" class="panel">${csrfField(chrome)}
<h3>Live key</h3>
<p class="muted">For a claimed, active project; shown once.</p>
<div class="actions"><button type="submit">Create a live key</button></div></form>
</div>
<h2>Keys</h2>
${keyRows.length > 0 ? table("Keys", ["Key", "Mode", "Created", "Last used", "State", ""], keyRows) : `<p class="muted">No keys.</p>`}
<h2>Messages, last 7 days</h2>
${counts.length > 0 ? table("Message counts", ["Mode", "Status", "Last 24 h", "Last 7 days"], counts, [2, 3]) : `<p class="muted">None.</p>`}
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
    body: `${operatorTitle(`A live key for ${options.projectId}`)}
${note("warn", "<p><strong>This is the only time the whole key is shown.</strong> Hand it over securely now; only its hash is stored.</p>", "alert")}
<div class="panel"><label for="new-key">Live API key <span class="hint">(${esc(options.key.prefix)}…)</span></label>
<div class="secret"><input id="new-key" readonly value="${esc(options.key.api_key)}" data-select-on-focus autocomplete="off" spellcheck="false">
<button type="button" data-copy="new-key" hidden>Copy</button></div></div>
<p><a href="${opProject(options.projectId)}">Back to the project</a></p>`,
  });
}

export function operatorRevokeConfirmPage(
  chrome: Chrome,
  options: { projectId: string; key: { id: string; prefix: string; mode: string } },
): Response {
  return htmlPage(chrome, {
    title: "Revoke a key",
    section: "operator",
    body: `${operatorTitle("Revoke this key?")}
<dl class="facts panel"><dt>Project</dt><dd><code>${esc(options.projectId)}</code></dd><dt>Key</dt><dd><code>${esc(options.key.prefix)}…</code> (${esc(options.key.mode)})</dd></dl>
<p>Every request with it is then answered <code>401 invalid_api_key</code>, within a few seconds on every server.</p>
<form method="post" action="/dashboard/operator/keys/${encodeURIComponent(options.key.id)}/revoke">${csrfField(chrome)}
<input type="hidden" name="project" value="${esc(options.projectId)}">
<div class="actions"><button type="submit" class="danger">Revoke ${esc(options.key.prefix)}…</button><a href="${opProject(options.projectId)}">Cancel</a></div></form>`,
  });
}

export function operatorAuditPage(
  chrome: Chrome,
  options: { audit: AuditPage; projectId: string | null; isFirst: boolean },
): Response {
  const base = "/dashboard/operator/audit";
  const rows = options.audit.entries.map((entry) => [
    time(entry.created_at, "short"),
    `<code>${esc(entry.actor)}</code>`,
    esc(entry.action),
    entry.project_id
      ? `<a href="${opProject(entry.project_id)}"><code>${esc(entry.project_id)}</code></a>`
      : "",
    `<code>${esc(JSON.stringify(entry.details))}</code>`,
  ]);
  return htmlPage(chrome, {
    title: "Audit log",
    section: "operator",
    body: `${operatorTitle("Audit log")}
<form method="get" action="${base}" class="panel" role="search"><div class="form-grid">
<div class="field"><label for="audit-project">Project <span class="hint">(prj_…; empty for all)</span></label><input id="audit-project" name="project" value="${esc(options.projectId ?? "")}" maxlength="40" spellcheck="false"></div>
<div class="field"><button type="submit" class="primary">Show</button></div></div></form>
${rows.length > 0 ? table("Audit log", ["When", "Actor", "Action", "Project", "Details"], rows) : note("info", "<p>No entries.</p>")}
${pager({
  first: withQuery(base, { project: options.projectId }),
  next: options.audit.next
    ? withQuery(base, { project: options.projectId, cursor: options.audit.next })
    : null,
  isFirst: options.isFirst,
})}`,
  });
}
