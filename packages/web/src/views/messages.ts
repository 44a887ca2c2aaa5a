// A project's messages: the filtered list and one message's timeline. Numbers
// arrive masked and texts never arrive at all.
import type { MessageFilters, MessageFound, MessagesList, RequestRow } from "@sms/contract";
import { MESSAGE_STATUSES } from "@sms/domain";
import { TEMPLATE_IDS } from "@sms/templates";
import { html } from "../kit/html.ts";
import {
  breakable,
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
import { requestTable } from "./requests.ts";

function select(name: string, label: string, values: readonly string[], current: string | undefined) {
  return html`<div class="field"><label for="f-${name}">${label}</label><select id="f-${name}" name="${name}">
<option value="">Any</option>
${values.map((value) => html`<option value="${value}"${value === current && " selected"}>${value}</option>`)}
</select></div>`;
}

export function messagesPage(
  chrome: Chrome,
  options: { projectId: string; list: MessagesList; filters: MessageFilters; isFirst: boolean },
): Response {
  const base = projectPath(options.projectId, "/messages");
  const { filters } = options;
  const rows = options.list.messages.map((message) => [
    html`<a href="${base}/${encodeURIComponent(message.id)}"><code>${message.id}</code></a>`,
    html`<span class="mono">${message.to}</span>`,
    statusBadge(message.status),
    message.mode,
    message.template,
    message.segments === null ? "—" : number(message.segments),
    message.error_code && html`<code>${breakable(message.error_code)}</code>`,
    time(message.created_at, "short"),
    time(message.updated_at, "short"),
  ]);
  const filtered = Object.values(filters).some(Boolean);
  return htmlPage(chrome, {
    title: "Messages",
    section: "projects",
    body: html`${projectHeader(chrome, options.projectId, "messages", "Messages")}
<form method="get" action="${base}" class="panel" aria-label="Filter messages">
<div class="form-grid">
${select("status", "Status", MESSAGE_STATUSES, filters.status)}
${select("mode", "Mode", ["live", "test"], filters.mode)}
${select("template", "Template", TEMPLATE_IDS, filters.template)}
<div class="field"><label for="f-from">From <span class="hint">(UTC day)</span></label><input id="f-from" type="date" name="from" value="${filters.from ?? ""}"></div>
<div class="field"><label for="f-to">To <span class="hint">(UTC day, included)</span></label><input id="f-to" type="date" name="to" value="${filters.to ?? ""}"></div>
<div class="field"><div class="actions"><button type="submit" class="primary">Filter</button>${filtered && html`<a href="${base}">Clear</a>`}</div></div>
</div></form>
<p><a href="${withQuery(`${base}.csv`, { ...filters })}" download>Download these messages as CSV</a> <span class="muted">(every page, numbers masked)</span></p>
<p class="muted">Newest first. Numbers are masked and message texts are never shown: the service keeps them encrypted and deletes them after the retention period.</p>
${
  rows.length === 0
    ? note("info", html`<p>${filtered ? "No message matches these filters." : "No messages yet."}</p>`)
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

export function messagePage(
  chrome: Chrome,
  options: { projectId: string; found: MessageFound; requests: RequestRow[]; watch?: boolean },
): Response {
  const { message, timeline, ledger } = options.found;
  const events = timeline.map(
    (event, i) =>
      html`${i > 0 && "\n"}<li>${statusBadge(event.status)} ${time(event.at)}${event.error_code && html` <code>${event.error_code}</code>`}</li>`,
  );
  const entries = ledger.map((entry) => [
    entry.kind,
    `${entry.amount > 0 ? "+" : ""}${number(entry.amount)}`,
    time(entry.created_at, "short"),
    entry.note ?? "",
  ]);
  const settling = options.watch === true && (message.status === "queued" || message.status === "submitted");
  return htmlPage(chrome, {
    title: `Message ${message.id}`,
    section: "projects",
    ...(settling ? { refreshSeconds: 2 } : {}),
    body: html`${projectHeader(chrome, options.projectId, "messages", "Message")}
<p><a href="${projectPath(options.projectId, "/messages")}">← All messages</a></p>
${settling && note("info", html`<p>Watching: this page reloads every 2 seconds until the message settles.</p>`)}
<div class="grid-2">
<section class="panel" aria-labelledby="facts-title"><h2 id="facts-title">Details</h2>
<dl class="facts">
<dt>Id</dt><dd><code>${message.id}</code></dd>
<dt>To</dt><dd class="mono">${message.to}</dd>
<dt>Status</dt><dd>${statusBadge(message.status)}</dd>
<dt>Error</dt><dd>${message.error_code ? html`<code>${message.error_code}</code> ${message.error_message ?? ""}` : "none"}</dd>
<dt>Mode</dt><dd>${message.mode}</dd>
<dt>Template</dt><dd>${message.template} (${message.locale})</dd>
<dt>Sender</dt><dd>${message.sender}</dd>
<dt>Segments</dt><dd>${message.segments === null ? "—" : number(message.segments)}${message.encoding && ` (${message.encoding})`}</dd>
<dt>Credits reserved</dt><dd>${number(message.credits_reserved)}</dd>
<dt>Created</dt><dd>${time(message.created_at)}</dd>
<dt>Updated</dt><dd>${time(message.updated_at)}</dd>
<dt>Text</dt><dd>${message.text_purged_at ? html`deleted ${time(message.text_purged_at)} (retention)` : "kept encrypted until the retention period ends; never shown"}</dd>
</dl></section>
<section class="panel" aria-labelledby="timeline-title"><h2 id="timeline-title">Timeline</h2>
${events.length > 0 ? html`<ol class="timeline">${events}</ol>` : html`<p class="muted">No status changes recorded.</p>`}
<h3>Credits</h3>
${entries.length > 0 ? table("Ledger entries of this message", ["Entry", "Amount", "When", "Note"], entries, [1]) : html`<p class="muted">None: ${message.mode === "test" ? "test messages are free" : "nothing was charged"}.</p>`}
</section>
</div>
<section aria-labelledby="requests-title"><h2 id="requests-title">API requests</h2>
${options.requests.length > 0 ? requestTable("The API requests that created, replayed or read this message", options.projectId, options.requests) : html`<p class="muted">No request of this message is in the request log (it keeps requests for a limited time).</p>`}
</section>`,
  });
}
