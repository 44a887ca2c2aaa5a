// The dashboard's sign-in page: the providers' buttons, the development
// sign-in (outside production), a notice or a problem.
import { html } from "../kit/html.ts";
import { type Chrome, htmlPage, note } from "./layout.ts";

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
  const next = options.next && html`<input type="hidden" name="next" value="${options.next}">`;
  const providers =
    options.providers.length > 0 &&
    html`<form method="post" action="/dashboard/sign-in">${next}
<div class="actions" role="group" aria-label="Sign in with">
${options.providers.map((p) => html`<button type="submit" class="primary" name="provider" value="${p.id}">Sign in with ${p.label}</button>\n`)}</div></form>`;
  const dev =
    options.devSignIn &&
    html`<section class="panel" aria-labelledby="dev-title">
<h2 id="dev-title">Sign in as a local developer</h2>
<p class="muted">This server runs outside production with development sign-in on: type any name and you are signed in as that person. The same name is the same account next time.</p>
<form method="post" action="/dashboard/sign-in">${next}
<input type="hidden" name="provider" value="dev">
<div class="form-grid">
<div class="field"><label for="dev-name">Your name <span class="hint">(Latin letters or digits)</span></label>
<input id="dev-name" name="name" required maxlength="40" autocomplete="name" autocapitalize="words"></div>
<div class="field"><button type="submit" class="primary">Sign in as a local developer</button></div>
</div></form></section>`;
  const none =
    options.providers.length === 0 &&
    !options.devSignIn &&
    note(
      "warn",
      html`<p><strong>Sign-in is not available on this server.</strong> No identity provider (Google or GitHub) is configured.</p>`,
    );
  return htmlPage(chrome, {
    title: "Sign in",
    section: "sign-in",
    status: options.status ?? 200,
    body: html`<h1>Sign in to the dashboard</h1>
${options.notice && note("ok", html`<p>${options.notice}</p>`)}
${options.problem && note("bad", html`<p>${options.problem}</p>`, "alert")}
<p>Manage the projects you claimed: API keys, messages, credits and your sender name. Sign in with the account you claimed them with.</p>
${providers}${dev}${none}
<p class="muted">No project yet? Get a test key (<code>POST /v1/test-keys</code>) and open its <code>claim_url</code> in this browser.</p>`,
  });
}
