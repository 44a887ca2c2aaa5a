// A project's settings: its name (shown in the project list and the header
// of every project page), and where its other controls live.
import { PROJECT_NAME_MAX_LENGTH } from "@sms/domain";
import { type Html, html } from "../kit/html.ts";
import { type Chrome, csrfField, htmlPage, note, projectHeader, projectPath } from "./layout.ts";

export function settingsPage(
  chrome: Chrome,
  options: {
    projectId: string;
    name: string | null;
    notice?: Html | "";
    problem?: string;
    /** What was typed, when it was refused. */
    typed?: string;
    status?: number;
  },
): Response {
  const base = projectPath(options.projectId);
  return htmlPage(chrome, {
    title: "Settings",
    section: "projects",
    status: options.status ?? 200,
    body: html`${projectHeader(chrome, options.projectId, "settings", "Settings")}
${options.notice ?? ""}
${options.problem && note("bad", html`<p>${options.problem}</p>`, "alert")}
<form method="post" action="${base}/settings" class="panel" aria-labelledby="name-title">
<h2 id="name-title">Name</h2>${csrfField(chrome)}
<div class="form-grid">
<div class="field"><label for="p-name">Project name <span class="hint">(1–${PROJECT_NAME_MAX_LENGTH} characters; empty: no name)</span></label><input id="p-name" name="name" value="${options.typed ?? options.name ?? ""}" autocomplete="off" spellcheck="false"></div>
<div class="field"><div class="actions"><button type="submit" class="primary">Save the name</button></div></div>
</div>
<p class="muted">Only you see it: in your project list and at the top of this project's pages. The API and its keys do not change.</p>
</form>
<section class="panel" aria-labelledby="more-title"><h2 id="more-title">More settings</h2>
<ul>
<li><a href="${base}/spending">Spending limits</a>: a daily credit cap, and a warning when the balance runs low.</li>
<li><a href="${base}/keys">API keys</a>: create a live key, revoke a key, roll the test key.</li>
<li><a href="${base}/sender">Sender name</a>: request the name your messages come from.</li>
</ul></section>`,
  });
}
