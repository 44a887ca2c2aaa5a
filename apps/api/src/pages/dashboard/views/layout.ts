// The dashboard's page frame and the small helpers every view uses. Pages are
// server-rendered HTML: the stylesheet and the one script come from our own
// origin (assets.ts), there is no inline script or style, and every value
// from the database or an identity provider is escaped.
import type { DashboardViewer } from "@sms/domain";
import { escapeHtml } from "../../claim/claim-views.ts";

export const esc = escapeHtml;

/** What every page needs around its body. */
export type Chrome = {
  cssUrl: string;
  jsUrl: string;
  devSignIn: boolean;
  viewer: DashboardViewer | null;
  /** The session's CSRF token, for every form that changes something. */
  csrfToken: string | null;
  /** The identity providers' labels, by id ("Google", "GitHub", "Development sign-in"). */
  providerLabel(provider: string): string;
  /** Origins a form on this page may end up at (the sign-in page's providers). */
  formActionOrigins?: readonly string[];
};

export type Section = "projects" | "operator" | "sign-in" | "none";

export function pageHeaders(formActionOrigins: readonly string[] = []): Record<string, string> {
  const formAction = ["'self'", ...formActionOrigins].join(" ");
  return {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'none'; base-uri 'none'; form-action ${formAction}; frame-ancestors 'none'`,
    "Cache-Control": "no-store",
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "X-Robots-Tag": "noindex, nofollow",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
  };
}

export const DEV_BANNER = `<div class="dev-banner" role="note"><strong>Development sign-in is on:</strong> anyone can sign in here as anyone, by typing a name. Never use this server for real projects.</div>`;

function topBar(chrome: Chrome, section: Section): string {
  const { viewer } = chrome;
  const current = (name: Section) => (section === name ? ' aria-current="page"' : "");
  const links = viewer
    ? `<nav aria-label="Dashboard"><ul>
<li><a href="/dashboard/projects"${current("projects")}>Projects</a></li>
${viewer.operator ? `<li><a href="/dashboard/operator"${current("operator")}>Operator</a></li>` : ""}
</ul></nav>
<div class="who"><span>${esc(viewer.identity.name ?? viewer.identity.subject)} <span class="muted">(${esc(chrome.providerLabel(viewer.identity.provider))})</span></span>
<form method="post" action="/dashboard/sign-out">${csrfField(chrome)}<button type="submit" class="link">Sign out</button></form></div>`
    : "";
  return `<header class="top"><div class="top-inner"><a class="brand" href="/dashboard">SMS API dashboard</a>${links}</div></header>`;
}

export function layout(chrome: Chrome, options: { title: string; section: Section; body: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${esc(options.title)} · SMS API dashboard</title>
<link rel="stylesheet" href="${esc(chrome.cssUrl)}">
<script src="${esc(chrome.jsUrl)}" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
${chrome.devSignIn ? DEV_BANNER : ""}
${topBar(chrome, options.section)}
<main id="main">
${options.body}
</main>
</body>
</html>
`;
}

export function htmlPage(
  chrome: Chrome,
  options: { title: string; section: Section; body: string; status?: number },
): Response {
  return new Response(layout(chrome, options), {
    status: options.status ?? 200,
    headers: pageHeaders(chrome.formActionOrigins),
  });
}

export function csrfField(chrome: Chrome): string {
  return chrome.csrfToken ? `<input type="hidden" name="csrf_token" value="${esc(chrome.csrfToken)}">` : "";
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
export function time(iso: string | null, style: "long" | "short" = "long"): string {
  if (!iso) return `<span class="muted">—</span>`;
  const date = new Date(iso);
  return `<time datetime="${esc(iso)}">${esc((style === "long" ? LONG : SHORT).format(date))} UTC</time>`;
}

export const dayLabel = (isoDay: string) => DAY.format(new Date(`${isoDay}T00:00:00Z`));

export const number = (value: number) => value.toLocaleString("en-US");

/** A key's cells in a keys table; an active key's last cell links to `revokeHref`. */
export function keyCells(
  key: {
    prefix: string;
    mode: string;
    created_at: string;
    last_used_at: string | null;
    revoked_at: string | null;
  },
  revokeHref: string,
): string[] {
  return [
    `<code>${esc(key.prefix)}…</code>`,
    esc(key.mode),
    time(key.created_at, "short"),
    key.last_used_at ? time(key.last_used_at, "short") : `<span class="muted">never</span>`,
    key.revoked_at
      ? `<span class="state-revoked">Revoked ${time(key.revoked_at, "short")}</span>`
      : `<span class="state-active">Active</span>`,
    key.revoked_at
      ? ""
      : `<a href="${revokeHref}">Revoke<span class="sr-only"> ${esc(key.prefix)}…</span></a>`,
  ];
}

export function statusBadge(status: string): string {
  return `<span class="status status-${esc(status)}">${esc(status)}</span>`;
}

export function projectState(project: { suspended_at: string | null }): string {
  return project.suspended_at
    ? `<span class="state-suspended">Suspended</span>`
    : `<span class="state-active">Active</span>`;
}

export function note(
  kind: "ok" | "warn" | "bad" | "info",
  html: string,
  role: "status" | "alert" = "status",
): string {
  return `<div class="note ${kind === "info" ? "" : kind}" role="${role}">${html}</div>`;
}

/** A one-shot notice named in the query (after a redirect): only known names, never free text. */
export function noticeFrom(url: URL, notices: Record<string, string>): string {
  const name = url.searchParams.get("notice");
  const text = name ? notices[name] : undefined;
  return text ? note("ok", `<p>${esc(text)}</p>`) : "";
}

export type Tab = "overview" | "keys" | "messages" | "credits" | "sender";

export function projectHeader(projectId: string, current: Tab, title: string): string {
  const base = `/dashboard/projects/${encodeURIComponent(projectId)}`;
  const tabs: Array<[Tab, string, string]> = [
    ["overview", "Overview", base],
    ["keys", "API keys", `${base}/keys`],
    ["messages", "Messages", `${base}/messages`],
    ["credits", "Credits", `${base}/credits`],
    ["sender", "Sender name", `${base}/sender`],
  ];
  return `<p class="crumbs"><a href="/dashboard/projects">Projects</a> / <code>${esc(projectId)}</code></p>
<h1>${esc(title)}</h1>
<nav aria-label="Project"><ul class="tabs">
${tabs.map(([tab, label, href]) => `<li><a href="${href}"${tab === current ? ' aria-current="page"' : ""}>${label}</a></li>`).join("\n")}
</ul></nav>`;
}

/** A table in a horizontally scrollable frame (narrow screens), with a caption for screen readers. */
export function table(caption: string, head: string[], rows: string[][], numeric: number[] = []): string {
  const cls = (index: number) => (numeric.includes(index) ? ' class="num"' : "");
  return `<div class="table-wrap"><table>
<caption class="sr-only">${esc(caption)}</caption>
<thead><tr>${head.map((cell, index) => `<th scope="col"${cls(index)}>${cell}</th>`).join("")}</tr></thead>
<tbody>
${rows.map((row) => `<tr>${row.map((cell, index) => `<td${cls(index)}>${cell}</td>`).join("")}</tr>`).join("\n")}
</tbody></table></div>`;
}

/** "Newer" (back to the first page) and "Older" links around a keyset-paged list. */
export function pager(options: { first: string; next: string | null; isFirst: boolean }): string {
  if (options.isFirst && options.next === null) return "";
  return `<nav class="pager" aria-label="Pages">
${options.isFirst ? "<span></span>" : `<a href="${esc(options.first)}">← Newest</a>`}
${options.next ? `<a href="${esc(options.next)}" rel="next">Older →</a>` : "<span></span>"}
</nav>`;
}

export function withQuery(path: string, params: Record<string, string | undefined | null>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value) query.set(name, value);
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}
