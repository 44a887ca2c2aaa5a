// The developer console's part of the overview, in its own component: the
// onboarding checklist (until every item is done) and "Send a test message".
import type { Onboarding } from "@sms/contract";
import { type Html, html } from "../kit/html.ts";
import { projectPath } from "./layout.ts";

export function consoleOverview(projectId: string, onboarding: Onboarding): Html {
  const base = projectPath(projectId);
  const items: Array<[boolean, Html]> = [
    [onboarding.test_sent, html`Send a test message (<a href="${base}/try">from this page</a> or your code)`],
    [
      onboarding.delivered,
      html`See a message <strong>delivered</strong> (<a href="${base}/messages?status=delivered">messages</a>)`,
    ],
    [onboarding.live_key, html`Create a live key (<a href="${base}/keys">API keys</a>)`],
    [onboarding.live_sent, html`Send your first live message`],
  ];
  const checklist =
    !onboarding.done &&
    html`<section class="panel" aria-labelledby="onboarding-title"><h2 id="onboarding-title">Getting started</h2>
<ol class="checklist">${items.map(
      ([done, label]) =>
        html`<li class="${done ? "done" : "todo"}"><span class="tick" aria-hidden="true">${done ? "✓" : "○"}</span> ${label} <span class="sr-only">${done ? "(done)" : "(to do)"}</span></li>`,
    )}</ol></section>`;
  return html`${checklist}
<p class="actions"><a class="button" href="${base}/try">Send a test message</a> <a class="button" href="${base}/requests">Request log</a></p>`;
}
