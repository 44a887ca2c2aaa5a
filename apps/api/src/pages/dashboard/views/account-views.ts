// The account holder's pages: sign-in, projects, a project's overview (with
// the usage charts), keys, messages and one message's timeline, credits and
// the sender name. Each view takes what the procedures returned (the
// internal router's outputs) and nothing else.
import { MESSAGE_STATUSES } from "@sms/domain";
import { TEMPLATE_IDS } from "@sms/templates";
import type { inferRouterOutputs } from "@trpc/server";
import type { InternalRouter } from "../../../internal-router.ts";
import { barChart, meter, percent } from "./charts.ts";
import {
  type Chrome,
  csrfField,
  esc,
  htmlPage,
  keyCells,
  note,
  number,
  pager,
  projectHeader,
  projectState,
  statusBadge,
  table,
  time,
  withQuery,
} from "./layout.ts";

type Out = inferRouterOutputs<InternalRouter>["dashboard"];
export type ProjectsList = Out["projects"]["list"];
export type Overview = Out["projects"]["get"];
export type Usage = Out["projects"]["usage"];
export type KeysList = Out["keys"]["list"];
export type NewKey = Extract<Out["keys"]["createLive"], { ok: true }>["key"];
export type MessagesList = Out["messages"]["list"];
export type MessageFound = Out["messages"]["get"];
export type Credits = Out["credits"]["get"];
export type Sender = Out["sender"]["get"];

const projectPath = (projectId: string, rest = "") =>
  `/dashboard/projects/${encodeURIComponent(projectId)}${rest}`;

// ---------------------------------------------------------------- sign-in

export type SignInChoice = { id: string; label: string };

export function signInPage(
  chrome: Chrome,
  options: {
    providers: SignInChoice[];
    devSignIn: boolean;
    next: string | null;
    problem?: string;
    notice?: string;
    status?: number;
  },
): Response {
  const next = options.next ? `<input type="hidden" name="next" value="${esc(options.next)}">` : "";
  const providers =
    options.providers.length > 0
      ? `<form method="post" action="/dashboard/sign-in">${next}
<div class="actions" role="group" aria-label="Sign in with">
${options.providers.map((p) => `<button type="submit" class="primary" name="provider" value="${esc(p.id)}">Sign in with ${esc(p.label)}</button>`).join("\n")}
</div></form>`
      : "";
  const dev = options.devSignIn
    ? `<section class="panel" aria-labelledby="dev-title">
<h2 id="dev-title">Sign in as a local developer</h2>
<p class="muted">This server runs outside production with development sign-in on: type any name and you are signed in as that person. The same name is the same account next time.</p>
<form method="post" action="/dashboard/sign-in">${next}
<input type="hidden" name="provider" value="dev">
<div class="form-grid">
<div class="field"><label for="dev-name">Your name <span class="hint">(Latin letters or digits)</span></label>
<input id="dev-name" name="name" required maxlength="40" autocomplete="name" autocapitalize="words"></div>
<div class="field"><button type="submit" class="primary">Sign in as a local developer</button></div>
</div></form></section>`
    : "";
  const none =
    options.providers.length === 0 && !options.devSignIn
      ? note(
          "warn",
          "<p><strong>Sign-in is not available on this server.</strong> No identity provider (Google or GitHub) is configured.</p>",
        )
      : "";
  return htmlPage(chrome, {
    title: "Sign in",
    section: "sign-in",
    status: options.status ?? 200,
    body: `<h1>Sign in to the dashboard</h1>
${options.notice ? note("ok", `<p>${esc(options.notice)}</p>`) : ""}
${options.problem ? note("bad", `<p>${esc(options.problem)}</p>`, "alert") : ""}
<p>Manage the projects you claimed: API keys, messages, credits and your sender name. Sign in with the account you claimed them with.</p>
${providers}${dev}${none}
<p class="muted">No project yet? Get a test key (<code>POST /v1/test-keys</code>) and open its <code>claim_url</code> in this browser.</p>`,
  });
}

// ---------------------------------------------------------------- projects

export function projectsPage(chrome: Chrome, list: ProjectsList, options: { isFirst: boolean }): Response {
  const rows = list.projects.map((project) => [
    `<a href="${projectPath(project.id)}"><code>${esc(project.id)}</code></a>`,
    time(project.claimed_at),
    projectState(project),
    project.sender
      ? esc(project.sender)
      : `<span class="muted">shared default</span>${project.pending_sender ? ` <span class="muted">(${esc(project.pending_sender)} requested)</span>` : ""}`,
    number(project.credit_balance),
    number(project.messages_today),
  ]);
  const body =
    list.projects.length === 0 && options.isFirst
      ? `${note(
          "info",
          `<p><strong>No projects yet.</strong> Projects appear here once you claim them: get a test key with <code>POST /v1/test-keys</code> and open its <code>claim_url</code> in this browser, signed in as you are now.</p>`,
        )}`
      : `${table(
          "Your projects",
          ["Project", "Claimed", "State", "Sender", "Credits", "Messages today"],
          rows,
          [4, 5],
        )}
${pager({ first: "/dashboard/projects", next: list.next ? withQuery("/dashboard/projects", { cursor: list.next }) : null, isFirst: options.isFirst })}`;
  return htmlPage(chrome, {
    title: "Your projects",
    section: "projects",
    body: `<h1>Your projects</h1>\n${body}`,
  });
}

// ---------------------------------------------------------------- overview

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
  options: { mode: "live" | "test" | null; defaultSender: string },
): Response {
  const { project, credits, free_tier: freeTier } = overview;
  const base = projectPath(project.id);
  const pending = overview.pending_sender_request;
  const modeLink = (mode: "live" | "test" | null, label: string) =>
    `<a href="${mode ? `${base}?mode=${mode}` : base}"${options.mode === mode ? ' aria-current="true"' : ""}>${label}</a>`;
  const byStatus = usage.days.map((day) => ({ day: day.day, values: day.by_status }));
  const segments = usage.days.map((day) => ({ day: day.day, values: { segments: day.segments } }));
  const suspended = project.suspended_at
    ? note(
        "bad",
        `<p><strong>This project is suspended</strong> since ${time(project.suspended_at)}: every key is answered with <code>403 project_suspended</code>. Contact the operator.</p>`,
        "alert",
      )
    : "";
  return htmlPage(chrome, {
    title: `Project ${project.id}`,
    section: "projects",
    body: `${projectHeader(project.id, "overview", "Overview")}
${suspended}
<div class="cards">
<div class="card"><p class="label">State</p><p class="value">${projectState(project)}</p><p class="sub">Claimed ${time(project.claimed_at)}</p></div>
<div class="card"><p class="label">Credit balance</p><p class="value">${number(credits.balance)}</p><p class="sub">${credits.consistent ? "Matches the ledger" : `<span class="state-suspended">Ledger says ${number(credits.ledger_sum)}</span>`}</p></div>
<div class="card"><p class="label">Messages today</p><p class="value">${number(overview.messages_today)}</p><p class="sub">Since midnight UTC</p></div>
<div class="card"><p class="label">Sender name</p><p class="value">${esc(project.sender ?? options.defaultSender)}</p><p class="sub">${project.sender ? "Approved for this project" : "Shared default"}${pending ? `; <a href="${base}/sender">${esc(pending.name)}</a> requested` : ""}</p></div>
<div class="card"><p class="label">Free tier today</p><p class="value">${freeTier.applies ? `${number(freeTier.used_today)} / ${number(freeTier.limit)}` : "Not applicable"}</p>
${freeTier.applies ? meter(freeTier.used_today, freeTier.limit, "Free-tier segments used today") : ""}<p class="sub">${freeTier.applies ? "Live segments; resets at midnight UTC" : "Paid credits lift the daily allowance"}</p></div>
</div>
<h2 id="usage">Usage, last ${usage.days.length} days</h2>
<p class="muted">Show: ${modeLink(null, "all keys")} · ${modeLink("live", "live keys")} · ${modeLink("test", "test keys")}</p>
<div class="cards">
<div class="card"><p class="label">Messages</p><p class="value">${number(usage.totals.messages)}</p></div>
<div class="card"><p class="label">Segments</p><p class="value">${number(usage.totals.segments)}</p></div>
<div class="card"><p class="label">Delivery rate</p><p class="value">${percent(usage.delivery_rate)}</p><p class="sub">Delivered, of the messages in a final status</p></div>
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
<p class="muted">Days are UTC. Live segments cost one credit each; test keys never send real SMS.</p>`,
  });
}

// ---------------------------------------------------------------- keys

export function keysPage(
  chrome: Chrome,
  list: KeysList,
  options: { isFirst: boolean; notice: string },
): Response {
  const { project } = list;
  const base = projectPath(project.id);
  const rows = list.keys.map((key) => keyCells(key, `${base}/keys/${encodeURIComponent(key.id)}/revoke`));
  const create = project.suspended_at
    ? note(
        "warn",
        "<p>The project is suspended: no live key can be created until the operator reinstates it.</p>",
      )
    : `<form method="post" action="${base}/keys/live">${csrfField(chrome)}
<div class="actions"><button type="submit" class="primary">Create a live key</button>
<span class="muted">Shown once; live keys send real SMS and spend credits.</span></div></form>`;
  return htmlPage(chrome, {
    title: "API keys",
    section: "projects",
    body: `${projectHeader(project.id, "keys", "API keys")}
${options.notice}
<p>Only the first characters of each key are kept for display: the whole key is shown once, when it is created. A revoked key stops working on every server within a few seconds.</p>
${create}
${table("API keys", ["Key", "Mode", "Created", "Last used", "State", ""], rows)}
${pager({ first: `${base}/keys`, next: list.next ? withQuery(`${base}/keys`, { cursor: list.next }) : null, isFirst: options.isFirst })}
<h2>Roll the test key</h2>
<p>A new test key replaces the current one, which stops working. Do it if the test key was exposed.</p>
<p><a class="button" href="${base}/keys/roll-test">Roll the test key…</a></p>`,
  });
}

export function newKeyPage(
  chrome: Chrome,
  options: { projectId: string; key: NewKey; revoked: Array<{ prefix: string }> },
): Response {
  const { key } = options;
  const revoked =
    options.revoked.length > 0
      ? `<p>Revoked: ${options.revoked.map((old) => `<code>${esc(old.prefix)}…</code>`).join(", ")}.</p>`
      : "";
  return htmlPage(chrome, {
    title: key.mode === "live" ? "New live key" : "New test key",
    section: "projects",
    body: `${projectHeader(options.projectId, "keys", key.mode === "live" ? "Your new live key" : "Your new test key")}
${note("warn", `<p><strong>Copy it now: this is the only time the whole key is shown.</strong> Only its hash is stored; if you lose it, create another and revoke this one.</p>${revoked}`, "alert")}
<div class="panel">
<label for="new-key">${key.mode === "live" ? "Live" : "Test"} API key <span class="hint">(${esc(key.prefix)}…)</span></label>
<div class="secret"><input id="new-key" readonly value="${esc(key.api_key)}" data-select-on-focus autocomplete="off" spellcheck="false">
<button type="button" data-copy="new-key" hidden>Copy</button></div>
</div>
<p>Use it as <code>Authorization: Bearer &lt;key&gt;</code>. ${key.mode === "live" ? "Live keys send real SMS through the provider and spend one credit per segment." : "Test keys never send real SMS."}</p>
<p><a href="${projectPath(options.projectId, "/keys")}">Back to the keys</a></p>`,
  });
}

export function revokeConfirmPage(
  chrome: Chrome,
  options: {
    projectId: string;
    key: { id: string; prefix: string; mode: string; last_used_at: string | null };
  },
): Response {
  const base = projectPath(options.projectId);
  return htmlPage(chrome, {
    title: "Revoke a key",
    section: "projects",
    body: `${projectHeader(options.projectId, "keys", "Revoke this key?")}
<dl class="facts panel"><dt>Key</dt><dd><code>${esc(options.key.prefix)}…</code> (${esc(options.key.mode)})</dd><dt>Last used</dt><dd>${options.key.last_used_at ? time(options.key.last_used_at) : "never"}</dd></dl>
<p>Every request with this key will be answered <code>401 invalid_api_key</code> within a few seconds, on every server. This cannot be undone.</p>
<form method="post" action="${base}/keys/${encodeURIComponent(options.key.id)}/revoke">${csrfField(chrome)}
<div class="actions"><button type="submit" class="danger">Revoke ${esc(options.key.prefix)}…</button><a href="${base}/keys">Cancel</a></div></form>`,
  });
}

export function rollConfirmPage(
  chrome: Chrome,
  options: { projectId: string; testKeys: Array<{ prefix: string }> },
): Response {
  const base = projectPath(options.projectId);
  return htmlPage(chrome, {
    title: "Roll the test key",
    section: "projects",
    body: `${projectHeader(options.projectId, "keys", "Roll the test key?")}
<p>A new test key will be created and shown once. ${
      options.testKeys.length > 0
        ? `These test keys stop working: ${options.testKeys.map((key) => `<code>${esc(key.prefix)}…</code>`).join(", ")}.`
        : "There is no active test key now."
    } Messages sent with them stay readable on this dashboard.</p>
<form method="post" action="${base}/keys/roll-test">${csrfField(chrome)}
<div class="actions"><button type="submit" class="danger">Roll the test key</button><a href="${base}/keys">Cancel</a></div></form>`,
  });
}

// ---------------------------------------------------------------- messages

export type MessageFilters = {
  status?: string;
  mode?: string;
  template?: string;
  from?: string;
  to?: string;
};

function select(name: string, label: string, values: readonly string[], current: string | undefined): string {
  return `<div class="field"><label for="f-${name}">${label}</label><select id="f-${name}" name="${name}">
<option value="">Any</option>
${values.map((value) => `<option value="${esc(value)}"${value === current ? " selected" : ""}>${esc(value)}</option>`).join("")}
</select></div>`;
}

export function messagesPage(
  chrome: Chrome,
  options: { projectId: string; list: MessagesList; filters: MessageFilters; isFirst: boolean },
): Response {
  const base = projectPath(options.projectId, "/messages");
  const { filters } = options;
  const rows = options.list.messages.map((message) => [
    `<a href="${base}/${encodeURIComponent(message.id)}"><code>${esc(message.id)}</code></a>`,
    `<span class="mono">${esc(message.to)}</span>`,
    statusBadge(message.status),
    esc(message.mode),
    esc(message.template),
    message.segments === null ? "—" : number(message.segments),
    message.error_code ? `<code>${esc(message.error_code)}</code>` : "",
    time(message.created_at, "short"),
    time(message.updated_at, "short"),
  ]);
  const filtered = Object.values(filters).some(Boolean);
  return htmlPage(chrome, {
    title: "Messages",
    section: "projects",
    body: `${projectHeader(options.projectId, "messages", "Messages")}
<form method="get" action="${base}" class="panel" aria-label="Filter messages">
<div class="form-grid">
${select("status", "Status", MESSAGE_STATUSES, filters.status)}
${select("mode", "Mode", ["live", "test"], filters.mode)}
${select("template", "Template", TEMPLATE_IDS, filters.template)}
<div class="field"><label for="f-from">From <span class="hint">(UTC day)</span></label><input id="f-from" type="date" name="from" value="${esc(filters.from ?? "")}"></div>
<div class="field"><label for="f-to">To <span class="hint">(UTC day, included)</span></label><input id="f-to" type="date" name="to" value="${esc(filters.to ?? "")}"></div>
<div class="field"><div class="actions"><button type="submit" class="primary">Filter</button>${filtered ? `<a href="${base}">Clear</a>` : ""}</div></div>
</div></form>
<p class="muted">Newest first. Numbers are masked and message texts are never shown: the service keeps them encrypted and deletes them after the retention period.</p>
${
  rows.length === 0
    ? note("info", `<p>${filtered ? "No message matches these filters." : "No messages yet."}</p>`)
    : table(
        "Messages",
        ["Message", "To", "Status", "Mode", "Template", "Segments", "Error", "Created", "Updated"],
        rows,
        [5],
      )
}
${pager({
  first: withQuery(base, { ...filters }),
  next: options.list.next ? withQuery(base, { ...filters, cursor: options.list.next }) : null,
  isFirst: options.isFirst,
})}`,
  });
}

export function messagePage(chrome: Chrome, options: { projectId: string; found: MessageFound }): Response {
  const { message, timeline, ledger } = options.found;
  const events = timeline
    .map(
      (event) =>
        `<li>${statusBadge(event.status)} ${time(event.at)}${event.error_code ? ` <code>${esc(event.error_code)}</code>` : ""}</li>`,
    )
    .join("\n");
  const entries = ledger.map((entry) => [
    esc(entry.kind),
    `${entry.amount > 0 ? "+" : ""}${number(entry.amount)}`,
    time(entry.created_at, "short"),
    entry.note ? esc(entry.note) : "",
  ]);
  return htmlPage(chrome, {
    title: `Message ${message.id}`,
    section: "projects",
    body: `${projectHeader(options.projectId, "messages", "Message")}
<p><a href="${projectPath(options.projectId, "/messages")}">← All messages</a></p>
<div class="grid-2">
<section class="panel" aria-labelledby="facts-title"><h2 id="facts-title">Details</h2>
<dl class="facts">
<dt>Id</dt><dd><code>${esc(message.id)}</code></dd>
<dt>To</dt><dd class="mono">${esc(message.to)}</dd>
<dt>Status</dt><dd>${statusBadge(message.status)}</dd>
<dt>Error</dt><dd>${message.error_code ? `<code>${esc(message.error_code)}</code> ${esc(message.error_message ?? "")}` : "none"}</dd>
<dt>Mode</dt><dd>${esc(message.mode)}</dd>
<dt>Template</dt><dd>${esc(message.template)} (${esc(message.locale)})</dd>
<dt>Sender</dt><dd>${esc(message.sender)}</dd>
<dt>Segments</dt><dd>${message.segments === null ? "—" : number(message.segments)}${message.encoding ? ` (${esc(message.encoding)})` : ""}</dd>
<dt>Credits reserved</dt><dd>${number(message.credits_reserved)}</dd>
<dt>Created</dt><dd>${time(message.created_at)}</dd>
<dt>Updated</dt><dd>${time(message.updated_at)}</dd>
<dt>Text</dt><dd>${message.text_purged_at ? `deleted ${time(message.text_purged_at)} (retention)` : "kept encrypted until the retention period ends; never shown"}</dd>
</dl></section>
<section class="panel" aria-labelledby="timeline-title"><h2 id="timeline-title">Timeline</h2>
${events ? `<ol class="timeline">${events}</ol>` : `<p class="muted">No status changes recorded.</p>`}
<h3>Credits</h3>
${entries.length > 0 ? table("Ledger entries of this message", ["Entry", "Amount", "When", "Note"], entries, [1]) : `<p class="muted">None: ${message.mode === "test" ? "test messages are free" : "nothing was charged"}.</p>`}
</section>
</div>`,
  });
}

// ---------------------------------------------------------------- credits

const KIND_LABEL: Record<string, string> = {
  grant_paid: "Paid credits",
  grant_free: "Free credits",
  reservation: "Message",
  refund: "Refund",
};

export function creditsPage(
  chrome: Chrome,
  options: { projectId: string; credits: Credits; isFirst: boolean },
): Response {
  const { credits, free_tier: freeTier, ledger } = options.credits;
  const base = projectPath(options.projectId);
  const rows = ledger.map((entry) => [
    time(entry.created_at, "short"),
    esc(KIND_LABEL[entry.kind] ?? entry.kind),
    `${entry.amount > 0 ? "+" : ""}${number(entry.amount)}`,
    entry.message_id
      ? `<a href="${base}/messages/${encodeURIComponent(entry.message_id)}"><code>${esc(entry.message_id)}</code></a>`
      : "",
    entry.note ? esc(entry.note) : "",
  ]);
  return htmlPage(chrome, {
    title: "Credits",
    section: "projects",
    body: `${projectHeader(options.projectId, "credits", "Credits")}
<div class="cards">
<div class="card"><p class="label">Balance</p><p class="value">${number(credits.balance)}</p><p class="sub">One credit per live SMS segment</p></div>
<div class="card"><p class="label">Ledger total</p><p class="value">${number(credits.ledger_sum)}</p><p class="sub">${credits.consistent ? `<span class="state-active">Matches the balance</span>` : `<span class="state-suspended">Differs from the balance: tell the operator</span>`}</p></div>
<div class="card"><p class="label">Free tier today</p><p class="value">${freeTier.applies ? `${number(freeTier.used_today)} / ${number(freeTier.limit)}` : "Lifted"}</p>
${freeTier.applies ? meter(freeTier.used_today, freeTier.limit, "Free-tier segments used today") : ""}<p class="sub">${freeTier.applies ? `Live segments a day until paid credits are added; resets ${time(freeTier.reset_at)}` : "Paid credits were added: no daily allowance applies"}</p></div>
</div>
<p>Credits are added by the operator (paid credits, with an invoice reference) or when a project is claimed (free credits). Each live message reserves one credit per segment; a message the provider rejects gets its credits back.</p>
<h2>Ledger</h2>
${rows.length > 0 ? table("Credit ledger", ["When", "Entry", "Amount", "Message", "Note"], rows, [2]) : note("info", "<p>No entries yet.</p>")}
${pager({ first: `${base}/credits`, next: options.credits.next ? withQuery(`${base}/credits`, { cursor: options.credits.next }) : null, isFirst: options.isFirst })}`,
  });
}

// ---------------------------------------------------------------- sender

export function senderPage(
  chrome: Chrome,
  options: {
    sender: Sender;
    defaultSender: string;
    notice: string;
    problem?: string;
    values?: { name: string; purpose: string };
    status?: number;
  },
): Response {
  const { project, requests } = options.sender;
  const base = projectPath(project.id);
  const pending = requests.find((request) => request.status === "pending");
  const history = requests.map((request) => [
    time(request.created_at, "short"),
    esc(request.name),
    esc(request.purpose),
    esc(request.status),
    request.status === "refused" && request.refusal_reason
      ? esc(request.refusal_reason)
      : request.decided_at
        ? time(request.decided_at, "short")
        : "",
  ]);
  const form = pending
    ? note(
        "info",
        `<p><strong>${esc(pending.name)}</strong> was requested ${time(pending.created_at)} and is waiting for the operator. One request at a time.</p>`,
      )
    : project.suspended_at
      ? note("warn", "<p>The project is suspended: no sender name can be requested now.</p>")
      : `<form method="post" action="${base}/sender" class="panel" aria-labelledby="request-title">${csrfField(chrome)}
<h2 id="request-title">Request a sender name</h2>
${options.problem ? note("bad", `<p>${esc(options.problem)}</p>`, "alert") : ""}
<div class="field"><label for="sender-name">Name <span class="hint">(1–11 characters: letters, digits, space . &amp; _ -; at least one letter)</span></label>
<input id="sender-name" name="name" required maxlength="11" value="${esc(options.values?.name ?? "")}" autocomplete="organization"></div>
<div class="field"><label for="sender-purpose">What it is for <span class="hint">(your brand or service; the operator registers it with the provider)</span></label>
<textarea id="sender-purpose" name="purpose" required maxlength="500">${esc(options.values?.purpose ?? "")}</textarea></div>
<div class="actions"><button type="submit" class="primary">Request this name</button></div>
</form>`;
  return htmlPage(chrome, {
    title: "Sender name",
    section: "projects",
    status: options.status ?? 200,
    body: `${projectHeader(project.id, "sender", "Sender name")}
${options.notice}
<div class="cards"><div class="card"><p class="label">Messages go out as</p><p class="value">${esc(project.sender ?? options.defaultSender)}</p><p class="sub">${project.sender ? "Approved for this project" : "The shared default sender"}</p></div></div>
<p>Callers never choose the sender: it is set per project by the operator, after the provider has approved the name.</p>
${form}
<h2>Requests</h2>
${history.length > 0 ? table("Sender name requests", ["Requested", "Name", "Purpose", "Status", "Decision"], history) : `<p class="muted">None yet.</p>`}`,
  });
}
