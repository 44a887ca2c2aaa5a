// The dashboard's page frame and the small helpers every view uses. Pages are
// server-rendered HTML written with the `html` tag (every value escaped): the
// stylesheet and the one script come from our own origin (kit/assets.ts),
// there is no inline script or style.
import type { Viewer } from "@sms/contract";
import { type Child, type Html, html, safeUrl } from "../kit/html.ts";
import { htmlResponse } from "../kit/http.ts";

/** What every page needs around its body. */
export type Chrome = {
  cssUrl: string;
  jsUrl: string;
  devSignIn: boolean;
  viewer: Viewer | null;
  /** The session's CSRF token, for every form that changes something. */
  csrfToken: string | null;
  /** The identity providers' labels, by id ("Google", "GitHub", "Development sign-in"). */
  providerLabel(provider: string): string;
  /** Origins a form on this page may end up at (the sign-in page's providers). */
  formActionOrigins?: readonly string[];
  /** A project page's name for its header (null: not named; absent: not known on this page). */
  projectName?: string | null;
  /** A project page under its owner's low-balance threshold: the banner's facts. */
  lowBalance?: { projectId: string; balance: number; threshold: number; daysLeft: number | null };
};

function lowBalanceBanner(chrome: Chrome): Html | "" {
  const low = chrome.lowBalance;
  if (!low) return "";
  const left =
    low.daysLeft === null
      ? "nothing was spent in the last 7 days"
      : html`about <strong>${low.daysLeft.toLocaleString("en-US")} days</strong> left at the last 7 days' rate`;
  return html`<div class="low-balance" role="status"><p><strong>Low balance:</strong> ${low.balance.toLocaleString("en-US")} credits, under your warning level of ${low.threshold.toLocaleString("en-US")}; ${left}. Live sends stop at zero. <a href="/dashboard/projects/${encodeURIComponent(low.projectId)}/credits">Credits</a></p></div>`;
}

export type Section = "projects" | "operator" | "sign-in" | "none";

const DEV_BANNER = html`<div class="dev-banner" role="note"><strong>Development sign-in is on:</strong> anyone can sign in here as anyone, by typing a name. Never use this server for real projects.</div>`;

/** Where the API's reference and guide are served (apps/api's docs routes). */
export const DOCS_PATH = "/docs";

/**
 * The header of every page (the dashboard's and the claim flow's): the brand,
 * the site's links (the docs always; Projects and Operator for a signed-in
 * viewer) and who is signed in.
 */
export function siteHeader(
  chrome: Pick<Chrome, "viewer" | "csrfToken" | "providerLabel">,
  section: Section,
): Html {
  const { viewer } = chrome;
  const current = (name: Section) => (section === name ? html` aria-current="page"` : "");
  const who =
    viewer &&
    html`<div class="who"><span>${viewer.identity.name ?? viewer.identity.subject} <span class="muted">(${chrome.providerLabel(viewer.identity.provider)})</span></span>
<form method="post" action="/dashboard/sign-out">${csrfField(chrome)}<button type="submit" class="link">Sign out</button></form></div>`;
  return html`<header class="top"><div class="top-inner"><a class="brand" href="/dashboard">SMS API dashboard</a><nav aria-label="Dashboard"><ul>
${viewer && html`<li><a href="/dashboard/projects"${current("projects")}>Projects</a></li>`}
${viewer?.operator && html`<li><a href="/dashboard/operator"${current("operator")}>Operator</a></li>`}
<li><a href="${DOCS_PATH}">API docs</a></li>
</ul></nav>${who}</div></header>`;
}

/**
 * The document around every page: the stylesheet from our own origin, the
 * script where the page may run one (the claim pages run none), the
 * development banner, the header and `main`.
 */
export function documentShell(options: {
  title: string;
  cssUrl: string;
  jsUrl?: string;
  devSignIn: boolean;
  header: Html;
  body: Html;
  mainClass?: string;
  refreshSeconds?: number;
  /** The claim pages carry their token in the URL: never sent on as a Referer. */
  noReferrer?: boolean;
}): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
${options.noReferrer && html`<meta name="referrer" content="no-referrer">`}
${options.refreshSeconds && html`<meta http-equiv="refresh" content="${String(options.refreshSeconds)}">`}
<title>${options.title}</title>
<link rel="stylesheet" href="${options.cssUrl}">
${options.jsUrl && html`<script src="${options.jsUrl}" defer></script>`}
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
${options.devSignIn && DEV_BANNER}
${options.header}
<main id="main"${options.mainClass && html` class="${options.mainClass}"`}>
${options.body}
</main>
</body>
</html>
`;
}

export function layout(
  chrome: Chrome,
  options: { title: string; section: Section; body: Html; refreshSeconds?: number },
): Html {
  return documentShell({
    title: `${options.title} · SMS API dashboard`,
    cssUrl: chrome.cssUrl,
    jsUrl: chrome.jsUrl,
    devSignIn: chrome.devSignIn,
    header: siteHeader(chrome, options.section),
    body: html`${lowBalanceBanner(chrome)}
${options.body}`,
    ...(options.refreshSeconds ? { refreshSeconds: options.refreshSeconds } : {}),
  });
}

export function htmlPage(
  chrome: Chrome,
  options: { title: string; section: Section; body: Html; status?: number; refreshSeconds?: number },
): Response {
  return htmlResponse(layout(chrome, options), {
    kind: "dashboard",
    status: options.status ?? 200,
    ...(chrome.formActionOrigins ? { formActionOrigins: chrome.formActionOrigins } : {}),
  });
}

export function csrfField(chrome: Pick<Chrome, "csrfToken">): Html | "" {
  return chrome.csrfToken ? html`<input type="hidden" name="csrf_token" value="${chrome.csrfToken}">` : "";
}

const LONG = new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" });
const SHORT = new Intl.DateTimeFormat("en-GB", {
  day: "numeric",
  month: "short",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  timeZone: "UTC",
});
const DAY = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", timeZone: "UTC" });

/** A timestamp (ISO 8601) as `<time>`, in UTC. */
export function time(iso: string | null, style: "long" | "short" = "long"): Html {
  if (!iso) return html`<span class="muted">—</span>`;
  const date = new Date(iso);
  return html`<time datetime="${iso}">${(style === "long" ? LONG : SHORT).format(date)} UTC</time>`;
}

export const dayLabel = (isoDay: string) => DAY.format(new Date(`${isoDay}T00:00:00Z`));

export const number = (value: number) => value.toLocaleString("en-US");

/** A key's cells in a keys table; an active key's last cell links to `revokeHref`. */
export function keyCells(
  key: {
    prefix: string;
    name?: string | null;
    mode: string;
    created_at: string;
    last_used_at: string | null;
    revoked_at: string | null;
  },
  revokeHref: string,
): Child[] {
  return [
    html`<code>${key.prefix}…</code>${key.name && html` <span class="muted">${key.name}</span>`}`,
    key.mode,
    time(key.created_at, "short"),
    key.last_used_at ? time(key.last_used_at, "short") : html`<span class="muted">never</span>`,
    key.revoked_at
      ? html`<span class="state-revoked">Revoked ${time(key.revoked_at, "short")}</span>`
      : html`<span class="state-active">Active</span>`,
    !key.revoked_at && html`<a href="${revokeHref}">Revoke<span class="sr-only"> ${key.prefix}…</span></a>`,
  ];
}

export function statusBadge(status: string): Html {
  return html`<span class="status status-${status}">${status}</span>`;
}

export function projectState(project: { suspended_at: string | null }): Html {
  return project.suspended_at
    ? html`<span class="state-suspended">Suspended</span>`
    : html`<span class="state-active">Active</span>`;
}

export function note(
  kind: "ok" | "warn" | "bad" | "info",
  body: Html,
  role: "status" | "alert" = "status",
): Html {
  return html`<div class="note ${kind === "info" ? "" : kind}" role="${role}">${body}</div>`;
}

/** A one-shot notice named in the query (after a redirect): only known names, never free text. */
export function noticeFrom(url: URL, notices: Record<string, string>): Html | "" {
  const name = url.searchParams.get("notice");
  const text = name ? notices[name] : undefined;
  return text ? note("ok", html`<p>${text}</p>`) : "";
}

export type Tab =
  | "overview"
  | "keys"
  | "messages"
  | "verifications"
  | "requests"
  | "credits"
  | "sender"
  | "settings";

export const projectPath = (projectId: string, rest = "") =>
  `/dashboard/projects/${encodeURIComponent(projectId)}${rest}`;

/**
 * The project's crumbs, search box and tabs. The search is a POST (CSRF-checked like every dashboard
 * form): what was searched for, perhaps a pasted key, never sits in a URL, the history or an access log.
 */
export function projectHeader(
  chrome: Pick<Chrome, "csrfToken" | "projectName">,
  projectId: string,
  current: Tab,
  title: string,
  query = "",
): Html {
  const base = projectPath(projectId);
  const tabs: Array<[Tab, string, string]> = [
    ["overview", "Overview", base],
    ["keys", "API keys", `${base}/keys`],
    ["messages", "Messages", `${base}/messages`],
    ["verifications", "Verifications", `${base}/verifications`],
    ["requests", "Requests", `${base}/requests`],
    ["credits", "Credits", `${base}/credits`],
    ["sender", "Sender name", `${base}/sender`],
    ["settings", "Settings", `${base}/settings`],
  ];
  const name = chrome.projectName && html`<strong class="project-name">${chrome.projectName}</strong> `;
  return html`<div class="project-top"><p class="crumbs"><a href="/dashboard/projects">Projects</a> / ${name}<code class="id">${projectId}</code></p>
<form method="post" action="${base}/search" class="search" role="search" aria-label="Search this project">${csrfField(chrome)}
<label for="project-search" class="sr-only">Find a message, verification or request by id, or an Idempotency-Key</label>
<input id="project-search" name="q" value="${query}" placeholder="msg_…, vrf_…, req_… or Idempotency-Key" autocomplete="off" spellcheck="false" maxlength="255">
<button type="submit">Find</button>
</form></div>
<h1>${title}</h1>
<nav aria-label="Project"><ul class="tabs">
${tabs.map(([tab, label, href]) => html`<li><a href="${href}"${tab === current && html` aria-current="page"`}>${label}</a></li>\n`)}</ul></nav>`;
}

/** Text that may break after each "/" and "_" (a route, an error code) in a narrow column; escaped like any text. */
export function breakable(text: string): Html {
  return html`${text.split(/(?<=[/_])/).map((part, index) => (index === 0 ? part : html`<wbr>${part}`))}`;
}

/**
 * A sentence whose `backticked` parts are code (the API's messages are
 * written that way): each part escaped like any text, the backticked ones
 * in <code>, so no literal backtick reaches the page.
 */
export function inlineCode(text: string): Html {
  const parts = text.split("`");
  // An unmatched backtick leaves its tail as text.
  const closed = parts.length % 2 === 1;
  return html`${parts.map((part, index) =>
    index % 2 === 1 && (closed || index < parts.length - 1) ? html`<code>${part}</code>` : part,
  )}`;
}

/**
 * A table in a horizontally scrollable frame (narrow screens), with a caption
 * for screen readers; the frame is focusable so that a keyboard can scroll it.
 */
export function table(caption: string, head: Child[], rows: Child[][], numeric: number[] = []): Html {
  const cls = (index: number) => numeric.includes(index) && html` class="num"`;
  // A frame that may scroll is a named region a keyboard can reach (and scroll with the arrow keys).
  return html`<div class="table-wrap" role="region" aria-label="${caption}" tabindex="0"><table>
<caption class="sr-only">${caption}</caption>
<thead><tr>${head.map((cell, index) => html`<th scope="col"${cls(index)}>${cell}</th>`)}</tr></thead>
<tbody>
${rows.map((row, i) => html`${i > 0 && "\n"}<tr>${row.map((cell, index) => html`<td${cls(index)}>${cell}</td>`)}</tr>`)}
</tbody></table></div>`;
}

/** "Newer" (back to the first page) and "Older" links around a keyset-paged list. */
export function pager(options: { first: string; next: string | null; isFirst: boolean }): Html | "" {
  if (options.isFirst && options.next === null) return "";
  return html`<nav class="pager" aria-label="Pages">
${options.isFirst ? html`<span></span>` : html`<a href="${safeUrl(options.first)}">← Newest</a>`}
${options.next ? html`<a href="${safeUrl(options.next)}" rel="next">Older →</a>` : html`<span></span>`}
</nav>`;
}

export function withQuery(path: string, params: Record<string, string | undefined | null>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value) query.set(name, value);
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}
