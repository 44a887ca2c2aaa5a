// The developer console's request log: every API request made with the
// project's keys, newest first, filtered and paged; one request; what the
// search box found. Never a body value, a number, a code or a key: the rows
// hold the request's shape and outcome only.
import type { RequestFilters, RequestRow, RequestsList } from "@sms/contract";
import { type Child, html } from "../kit/html.ts";
import {
  breakable,
  type Chrome,
  htmlPage,
  note,
  number,
  pager,
  projectHeader,
  projectPath,
  table,
  time,
  withQuery,
} from "./layout.ts";
import { verificationHref } from "./verifications.ts";

export const REQUEST_ROUTES = [
  "/v1/messages",
  "/v1/messages/{message_id}",
  "/v1/verifications",
  "/v1/verifications/{verification_id}",
  "/v1/verifications/{verification_id}/check",
] as const;

function statusText(row: RequestRow): Child {
  const cls = row.status >= 500 ? "bad" : row.status >= 400 ? "warn" : "ok";
  return html`<span class="http http-${cls}">${row.status}</span>`;
}

function keyText(row: RequestRow): Child {
  if (!row.key_prefix) return html`<span class="muted">—</span>`;
  return html`<code>${row.key_prefix}…</code>${row.key_name && html` <span class="muted key-name">${row.key_name}</span>`}`;
}

function producedLink(projectId: string, row: RequestRow): Child {
  if (row.message_id)
    return html`<a href="${projectPath(projectId, `/messages/${encodeURIComponent(row.message_id)}`)}"><code>${row.message_id}</code></a>`;
  if (row.verification_id)
    return html`<a href="${verificationHref(projectId, row.verification_id)}"><code>${row.verification_id}</code></a>`;
  return "";
}

/** The rows of a request table (the log, a message's requests, an Idempotency-Key's). */
export function requestRows(projectId: string, rows: RequestRow[]): Child[][] {
  const base = projectPath(projectId, "/requests");
  return rows.map((row) => [
    time(row.created_at, "short"),
    html`<a href="${base}/${encodeURIComponent(row.id)}"><code>${row.id}</code></a>`,
    html`<code>${row.method} ${breakable(row.route)}</code>`,
    statusText(row),
    row.error_code && html`<code>${breakable(row.error_code)}</code>`,
    // A key is up to 200 characters: clipped to its start here (whole in the title and on the request's page).
    row.idempotency_key &&
      html`<code class="clip" title="${row.idempotency_key}">${row.idempotency_key}</code>${row.replayed && html` <span class="tag">replay</span>`}`,
    number(row.duration_ms),
    row.mode ?? "",
    keyText(row),
    producedLink(projectId, row),
  ]);
}

export const REQUEST_HEAD = [
  "Time",
  "Request",
  "Route",
  "Status",
  "Error",
  "Idempotency-Key",
  "ms",
  "Mode",
  "Key",
  "Produced",
];

export function requestTable(caption: string, projectId: string, rows: RequestRow[]) {
  return table(caption, REQUEST_HEAD, requestRows(projectId, rows), [6]);
}

function select(name: string, label: string, values: readonly string[], current: string | undefined) {
  return html`<div class="field"><label for="r-${name}">${label}</label><select id="r-${name}" name="${name}">
<option value="">Any</option>
${values.map((value) => html`<option value="${value}"${value === current && " selected"}>${value}</option>`)}
</select></div>`;
}

export function requestsPage(
  chrome: Chrome,
  options: {
    projectId: string;
    list: RequestsList;
    filters: RequestFilters;
    isFirst: boolean;
    retentionDays: number;
  },
): Response {
  const base = projectPath(options.projectId, "/requests");
  const { filters } = options;
  const filtered = Object.values(filters).some(Boolean);
  const rows = options.list.requests;
  return htmlPage(chrome, {
    title: "Requests",
    section: "projects",
    body: html`${projectHeader(chrome, options.projectId, "requests", "Requests")}
<form method="get" action="${base}" class="panel" aria-label="Filter requests">
<div class="form-grid">
${select("status_class", "Status", ["2xx", "4xx", "5xx"], filters.status_class)}
<div class="field"><label for="r-error_code">Error code</label><input id="r-error_code" name="error_code" value="${filters.error_code ?? ""}" placeholder="invalid_variables" autocomplete="off"></div>
${select("route", "Route", REQUEST_ROUTES, filters.route)}
${select("mode", "Mode", ["live", "test"], filters.mode)}
<div class="field"><label for="r-from">From <span class="hint">(UTC day)</span></label><input id="r-from" type="date" name="from" value="${filters.from ?? ""}"></div>
<div class="field"><label for="r-to">To <span class="hint">(UTC day, included)</span></label><input id="r-to" type="date" name="to" value="${filters.to ?? ""}"></div>
<div class="field"><div class="actions"><button type="submit" class="primary">Filter</button>${filtered && html`<a href="${base}">Clear</a>`}</div></div>
</div></form>
<p class="muted">Every API request made with this project's keys, newest first, kept ${options.retentionDays} days. A request id is the <code>X-Request-Id</code> header and the <code>request_id</code> of an error: paste it in the search box. Bodies, numbers and keys are never recorded.</p>
${
  rows.length === 0
    ? note(
        "info",
        html`<p>${filtered ? "No request matches these filters." : "No requests yet: they appear here a moment after your code calls the API."}</p>`,
      )
    : requestTable("API requests", options.projectId, rows)
}
${pager({
  first: withQuery(base, { ...filters }),
  next: options.list.next ? withQuery(base, { ...filters, cursor: options.list.next }) : null,
  isFirst: options.isFirst,
})}`,
  });
}

export function requestPage(chrome: Chrome, options: { projectId: string; request: RequestRow }): Response {
  const { request } = options;
  return htmlPage(chrome, {
    title: `Request ${request.id}`,
    section: "projects",
    body: html`${projectHeader(chrome, options.projectId, "requests", "Request")}
<p><a href="${projectPath(options.projectId, "/requests")}">← All requests</a></p>
<section class="panel" aria-labelledby="request-title"><h2 id="request-title">What happened</h2>
<dl class="facts">
<dt>Request id</dt><dd><code class="id">${request.id}</code></dd>
<dt>When</dt><dd>${time(request.created_at)}</dd>
<dt>Route</dt><dd><code>${request.method} ${request.route}</code></dd>
<dt>Status</dt><dd>${statusText(request)}</dd>
<dt>Error code</dt><dd>${request.error_code ? html`<code>${request.error_code}</code> <a href="/docs">what it means</a>` : "none"}</dd>
<dt>Idempotency-Key</dt><dd>${request.idempotency_key ? html`<code>${request.idempotency_key}</code>` : "none"}</dd>
<dt>Replay</dt><dd>${request.replayed ? "yes: the answer of the first request with this key was returned again, nothing was sent" : "no"}</dd>
<dt>Duration</dt><dd>${number(request.duration_ms)} ms</dd>
<dt>Key</dt><dd>${keyText(request)} ${request.mode && html`(${request.mode})`}</dd>
<dt>Produced</dt><dd>${producedLink(options.projectId, request) || "nothing"}</dd>
</dl></section>`,
  });
}

export function searchResultsPage(
  chrome: Chrome,
  options: { projectId: string; query: string; requests: RequestRow[] | null },
): Response {
  const found = options.requests;
  return htmlPage(chrome, {
    title: "Search",
    section: "projects",
    status: found ? 200 : 404,
    body: html`${projectHeader(chrome, options.projectId, "requests", "Search", options.query)}
${
  found
    ? html`<p>Requests made with the Idempotency-Key <code>${options.query}</code>, newest first:</p>${requestTable("Requests with this Idempotency-Key", options.projectId, found)}`
    : note(
        "info",
        html`<p>Nothing in this project matches <code>${options.query}</code>. Search by a message id (<code>msg_…</code>), a request id (<code>req_…</code>), a verification id (<code>vrf_…</code>) or an Idempotency-Key. Requests are kept for a limited time.</p>`,
      )
}`,
  });
}

/** A search for what looks like a whole API key: refused, and the key written nowhere in the page. */
export function searchWholeKeyPage(chrome: Chrome, options: { projectId: string }): Response {
  return htmlPage(chrome, {
    title: "Search",
    section: "projects",
    status: 400,
    body: html`${projectHeader(chrome, options.projectId, "requests", "Search")}
${note(
  "bad",
  html`<p>That looks like a whole API key, so it was not searched for and is not shown here. Never paste a key anywhere but your own server's configuration. Search by a message id (<code>msg_…</code>), a request id (<code>req_…</code>), a verification id (<code>vrf_…</code>) or an Idempotency-Key. If someone else may have seen the key, revoke it on the <a href="${projectPath(options.projectId, "/keys")}">API keys</a> page.</p>`,
  "alert",
)}`,
  });
}
