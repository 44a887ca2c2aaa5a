// A project's sender name: what messages go out as, the request form and the
// requests so far (with the operator's refusal reasons).
import type { SenderPage } from "@sms/contract";
import { type Html, html } from "../kit/html.ts";
import { type Chrome, csrfField, htmlPage, note, projectHeader, projectPath, table, time } from "./layout.ts";

export function senderPage(
  chrome: Chrome,
  options: {
    sender: SenderPage;
    defaultSender: string;
    notice: Html | "";
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
    request.name,
    request.purpose,
    request.status,
    request.status === "refused" && request.refusal_reason
      ? request.refusal_reason
      : request.decided_at && time(request.decided_at, "short"),
  ]);
  const form = pending
    ? note(
        "info",
        html`<p><strong>${pending.name}</strong> was requested ${time(pending.created_at)} and is waiting for the operator. One request at a time.</p>`,
      )
    : project.suspended_at
      ? note("warn", html`<p>The project is suspended: no sender name can be requested now.</p>`)
      : html`<form method="post" action="${base}/sender" class="panel" aria-labelledby="request-title">${csrfField(chrome)}
<h2 id="request-title">Request a sender name</h2>
${options.problem && note("bad", html`<p>${options.problem}</p>`, "alert")}
<div class="field"><label for="sender-name">Name <span class="hint">(1–11 characters: letters, digits, space . &amp; _ -; at least one letter)</span></label>
<input id="sender-name" name="name" required maxlength="11" value="${options.values?.name ?? ""}" autocomplete="organization"></div>
<div class="field"><label for="sender-purpose">What it is for <span class="hint">(your brand or service; the operator registers it with the provider)</span></label>
<textarea id="sender-purpose" name="purpose" required maxlength="500">${options.values?.purpose ?? ""}</textarea></div>
<div class="actions"><button type="submit" class="primary">Request this name</button></div>
</form>`;
  return htmlPage(chrome, {
    title: "Sender name",
    section: "projects",
    status: options.status ?? 200,
    body: html`${projectHeader(chrome, project.id, "sender", "Sender name")}
${options.notice}
<div class="cards"><div class="card"><p class="label">Messages go out as</p><p class="value">${project.sender ?? options.defaultSender}</p><p class="sub">${project.sender ? "Approved for this project" : "The shared default sender"}</p></div></div>
<p>Callers never choose the sender: it is set per project by the operator, after the provider has approved the name.</p>
${form}
<h2>Requests</h2>
${history.length > 0 ? table("Sender name requests", ["Requested", "Name", "Purpose", "Status", "Decision"], history) : html`<p class="muted">None yet.</p>`}`,
  });
}
