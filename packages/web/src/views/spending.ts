// Controlling spending: the daily credit cap (live sends past it are refused
// with 429 daily_limit_reached) and the low-balance warning's threshold.
import type { Spending } from "@sms/contract";
import { type Html, html } from "../kit/html.ts";
import { meter } from "./charts.ts";
import { type Chrome, csrfField, htmlPage, note, number, projectHeader, projectPath } from "./layout.ts";

export function spendingPage(
  chrome: Chrome,
  options: {
    projectId: string;
    spending: Spending;
    notice?: Html | "";
    problem?: string;
    values?: { cap: string; threshold: string };
    status?: number;
  },
): Response {
  const { spending } = options;
  const cap =
    options.values?.cap ?? (spending.daily_credit_cap === null ? "" : String(spending.daily_credit_cap));
  const threshold =
    options.values?.threshold ??
    (spending.low_balance_threshold === null ? "" : String(spending.low_balance_threshold));
  return htmlPage(chrome, {
    title: "Spending limits",
    section: "projects",
    status: options.status ?? 200,
    body: html`${projectHeader(chrome, options.projectId, "credits", "Spending limits")}
<p><a href="${projectPath(options.projectId, "/credits")}">← Credits</a></p>
${options.notice ?? ""}
${options.problem && note("bad", html`<p>${options.problem}</p>`, "alert")}
<div class="cards">
<div class="card"><p class="label">Balance</p><p class="value">${number(spending.credit_balance)}</p><p class="sub">${spending.days_left === null ? "No live credits used in the last 7 days" : html`About ${spending.days_left.toLocaleString("en-US")} days left at ${spending.daily_rate.toLocaleString("en-US", { maximumFractionDigits: 1 })} a day (last 7 days)`}</p></div>
<div class="card"><p class="label">Used today (UTC)</p><p class="value">${spending.daily_credit_cap === null ? number(spending.used_today) : `${number(spending.used_today)} / ${number(spending.daily_credit_cap)}`}</p>
${spending.daily_credit_cap !== null && meter(spending.used_today, spending.daily_credit_cap, "Credits used today against the daily cap")}<p class="sub">${spending.daily_credit_cap === null ? "No daily cap" : "Resets at midnight UTC"}</p></div>
</div>
<form method="post" action="${projectPath(options.projectId, "/spending")}" class="panel" aria-labelledby="limits-title">
<h2 id="limits-title">Limits</h2>${csrfField(chrome)}
<div class="form-grid">
<div class="field"><label for="s-cap">Daily credit cap <span class="hint">(credits a UTC day; empty: no cap)</span></label><input id="s-cap" name="daily_credit_cap" inputmode="numeric" pattern="[0-9]*" value="${cap}" autocomplete="off"></div>
<div class="field"><label for="s-threshold">Warn below <span class="hint">(credits; empty: no warning)</span></label><input id="s-threshold" name="low_balance_threshold" inputmode="numeric" pattern="[0-9]*" value="${threshold}" autocomplete="off"></div>
</div>
<p class="muted">A live send that would take today's credits past the cap is refused with <code>429 daily_limit_reached</code> and nothing is sent, until midnight UTC. Below the warning level every project page shows a banner. Test keys are never limited by either.</p>
<div class="actions"><button type="submit" class="primary">Save limits</button></div>
</form>`,
  });
}
