// A project's credits: balance, ledger total, free tier and the ledger.
import type { CreditsPage } from "@sms/contract";
import { html } from "../kit/html.ts";
import { meter } from "./charts.ts";
import {
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

const KIND_LABEL: Record<string, string> = {
  grant_paid: "Paid credits",
  grant_free: "Free credits",
  reservation: "Message",
  refund: "Refund",
};

export function creditsPage(
  chrome: Chrome,
  options: { projectId: string; credits: CreditsPage; isFirst: boolean },
): Response {
  const { credits, free_tier: freeTier, ledger } = options.credits;
  const base = projectPath(options.projectId);
  const rows = ledger.map((entry) => [
    time(entry.created_at, "short"),
    KIND_LABEL[entry.kind] ?? entry.kind,
    `${entry.amount > 0 ? "+" : ""}${number(entry.amount)}`,
    entry.message_id &&
      (entry.message_kept === false
        ? html`<span class="muted">not sent — refunded</span>`
        : html`<a href="${base}/messages/${encodeURIComponent(entry.message_id)}"><code>${entry.message_id}</code></a>`),
    entry.note ?? "",
  ]);
  return htmlPage(chrome, {
    title: "Credits",
    section: "projects",
    body: html`${projectHeader(chrome, options.projectId, "credits", "Credits")}
<div class="cards">
<div class="card"><p class="label">Balance</p><p class="value">${number(credits.balance)}</p><p class="sub">One credit per live SMS segment</p></div>
<div class="card"><p class="label">Ledger total</p><p class="value">${number(credits.ledger_sum)}</p><p class="sub">${credits.consistent ? html`<span class="state-active">Matches the balance</span>` : html`<span class="state-suspended">Differs from the balance: tell the operator</span>`}</p></div>
<div class="card"><p class="label">Free tier today</p><p class="value">${freeTier.applies ? `${number(freeTier.used_today)} / ${number(freeTier.limit)}` : "Lifted"}</p>
${freeTier.applies && meter(freeTier.used_today, freeTier.limit, "Free-tier segments used today")}<p class="sub">${freeTier.applies ? html`Live segments a day until paid credits are added; resets ${time(freeTier.reset_at)}` : "Paid credits were added: no daily allowance applies"}</p></div>
</div>
<p><a href="${base}/spending">Spending limits</a>: a daily credit cap, and a warning when the balance runs low.</p>
<p>Credits are added by the operator (paid credits, with an invoice reference) or when a project is claimed (free credits). Each live message reserves one credit per segment; a message the provider rejects gets its credits back.</p>
<h2>Ledger</h2>
<p><a href="${base}/credits.csv" download>Download the ledger as CSV</a></p>
${rows.length > 0 ? table("Credit ledger", ["When", "Entry", "Amount", "Message", "Note"], rows, [2]) : note("info", html`<p>No entries yet.</p>`)}
${pager({ first: `${base}/credits`, next: options.credits.next ? withQuery(`${base}/credits`, { cursor: options.credits.next }) : null, isFirst: options.isFirst })}`,
  });
}
