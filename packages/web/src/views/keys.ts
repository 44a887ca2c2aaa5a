// A project's API keys: the list, a new key (shown once), revoking and rolling.
import type { KeysList, NewKey } from "@sms/contract";
import { type Html, html } from "../kit/html.ts";
import {
  type Chrome,
  csrfField,
  htmlPage,
  keyCells,
  note,
  pager,
  projectHeader,
  projectPath,
  table,
  time,
  withQuery,
} from "./layout.ts";

export function keysPage(
  chrome: Chrome,
  list: KeysList,
  options: { isFirst: boolean; notice: Html | "" },
): Response {
  const { project } = list;
  const base = projectPath(project.id);
  const rows = list.keys.map((key) => keyCells(key, `${base}/keys/${encodeURIComponent(key.id)}/revoke`));
  const create = project.suspended_at
    ? note(
        "warn",
        html`<p>The project is suspended: no live key can be created until the operator reinstates it.</p>`,
      )
    : html`<form method="post" action="${base}/keys/live">${csrfField(chrome)}
<div class="field"><label for="key-name">Name <span class="hint">(optional, e.g. “production web”; shown in lists and the request log)</span></label><input id="key-name" name="name" maxlength="64" autocomplete="off"></div>
<div class="actions"><button type="submit" class="primary">Create a live key</button>
<span class="muted">Shown once; live keys send real SMS and spend credits.</span></div></form>`;
  return htmlPage(chrome, {
    title: "API keys",
    section: "projects",
    body: html`${projectHeader(chrome, project.id, "keys", "API keys")}
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
  const live = key.mode === "live";
  const revoked =
    options.revoked.length > 0 &&
    html`<p>Revoked: ${options.revoked.map((old, i) => html`${i > 0 && ", "}<code>${old.prefix}…</code>`)}.</p>`;
  return htmlPage(chrome, {
    title: live ? "New live key" : "New test key",
    section: "projects",
    body: html`${projectHeader(chrome, options.projectId, "keys", live ? "Your new live key" : "Your new test key")}
${note("warn", html`<p><strong>Copy it now: this is the only time the whole key is shown.</strong> Only its hash is stored; if you lose it, create another and revoke this one.</p>${revoked}`, "alert")}
<div class="panel">
<label for="new-key">${live ? "Live" : "Test"} API key <span class="hint">(${key.prefix}…)</span></label>
<div class="secret"><input id="new-key" readonly value="${key.api_key}" data-select-on-focus autocomplete="off" spellcheck="false">
<button type="button" data-copy="new-key" hidden>Copy</button></div>
</div>
<p>Use it as <code>Authorization: Bearer &lt;key&gt;</code>. ${live ? "Live keys send real SMS through the provider and spend one credit per segment." : "Test keys never send real SMS."}</p>
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
    body: html`${projectHeader(chrome, options.projectId, "keys", "Revoke this key?")}
<dl class="facts panel"><dt>Key</dt><dd><code>${options.key.prefix}…</code> (${options.key.mode})</dd><dt>Last used</dt><dd>${options.key.last_used_at ? time(options.key.last_used_at) : "never"}</dd></dl>
<p>Every request with this key will be answered <code>401 invalid_api_key</code> within a few seconds, on every server. This cannot be undone.</p>
<form method="post" action="${base}/keys/${encodeURIComponent(options.key.id)}/revoke">${csrfField(chrome)}
<div class="actions"><button type="submit" class="danger">Revoke ${options.key.prefix}…</button><a href="${base}/keys">Cancel</a></div></form>`,
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
    body: html`${projectHeader(chrome, options.projectId, "keys", "Roll the test key?")}
<p>A new test key will be created and shown once. ${
      options.testKeys.length > 0
        ? html`These test keys stop working: ${options.testKeys.map((key, i) => html`${i > 0 && ", "}<code>${key.prefix}…</code>`)}.`
        : "There is no active test key now."
    } Messages sent with them stay readable on this dashboard.</p>
<form method="post" action="${base}/keys/roll-test">${csrfField(chrome)}
<div class="actions"><button type="submit" class="danger">Roll the test key</button><a href="${base}/keys">Cancel</a></div></form>`,
  });
}
