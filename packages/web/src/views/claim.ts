// The claim flow's pages: server-rendered HTML in the dashboard's frame (its
// stylesheet, header, brand and docs link), no scripts. Each page's action
// comes first, so that it is in view without scrolling on a phone. Written with the `html` tag, so every value from the
// database or a provider is escaped. The claim token itself is only ever
// written into this project's own form actions and links.
import type { ClaimSummary } from "@sms/contract";
import { type Html, html } from "../kit/html.ts";
import { htmlResponse } from "../kit/http.ts";
import { documentShell, siteHeader } from "./layout.ts";

/** What every claim page needs around its body. */
export type ClaimChrome = {
  /** Development sign-in is on: every page says anyone can sign in as anyone. */
  devSignIn: boolean;
  /** The dashboard's stylesheet: the claim pages look like the dashboard (issue 23). */
  cssUrl: string;
  /** Origins the sign-in form's redirect may continue to (the landing page). */
  formActionOrigins?: readonly string[];
};

/** Nobody is signed in to the dashboard on a claim page: the header shows the brand and the docs. */
const CLAIM_HEADER = siteHeader({ viewer: null, csrfToken: null, providerLabel: (id) => id }, "none");

function page(chrome: ClaimChrome, title: string, body: Html, status: number): Response {
  const document = documentShell({
    title: `${title} · SMS API`,
    cssUrl: chrome.cssUrl,
    devSignIn: chrome.devSignIn,
    header: CLAIM_HEADER,
    body,
    mainClass: "narrow",
    noReferrer: true,
  });
  return htmlResponse(document, {
    kind: "claim",
    status,
    ...(chrome.formActionOrigins ? { formActionOrigins: chrome.formActionOrigins } : {}),
  });
}

const DATE_FORMAT = new Intl.DateTimeFormat("en-GB", {
  dateStyle: "long",
  timeStyle: "short",
  timeZone: "UTC",
});
const time = (iso: string) => html`<time datetime="${iso}">${DATE_FORMAT.format(new Date(iso))} UTC</time>`;
const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;
const claimPath = (token: string) => `/claim/${encodeURIComponent(token)}`;

function summaryList(summary: ClaimSummary): Html {
  return html`<dl class="facts panel">
<dt>Project</dt><dd><code>${summary.project_id}</code></dd>
<dt>Created</dt><dd>${time(summary.project_created_at)}</dd>
<dt>Messages sent so far</dt><dd>${summary.messages_sent}</dd>
<dt>Test key</dt><dd>${summary.key_prefix ? html`<code>${summary.key_prefix}…</code> <span class="muted">(first characters only)</span>` : "none"}</dd>
<dt>Link valid until</dt><dd>${time(summary.expires_at)}</dd>
</dl>`;
}

export type ProviderChoice = { id: string; label: string };

export function landingPage(
  chrome: ClaimChrome,
  options: { token: string; summary: ClaimSummary; providers: ProviderChoice[]; freeCredits: number },
): Response {
  const { providers, token } = options;
  const credits =
    options.freeCredits > 0 &&
    html`<li><strong>${plural(options.freeCredits, "free credit is", "free credits are")} added</strong>, for real SMS once a live key is issued (one credit per SMS segment).</li>`;
  const development =
    chrome.devSignIn &&
    html`<form method="post" action="${claimPath(token)}/sign-in">
<input type="hidden" name="provider" value="dev">
<h3 id="dev-sign-in">Sign in as a local developer</h3>
<p class="muted">Development only: the name you type is who you are.</p>
<label for="dev-name">Your name (Latin letters or digits)</label>
<input id="dev-name" name="name" required maxlength="40" autocomplete="name">
<div class="actions"><button type="submit">Sign in as a local developer</button></div>
</form>`;
  const buttons =
    providers.length > 0 &&
    html`<form method="post" action="${claimPath(token)}/sign-in">
<div class="actions" role="group" aria-labelledby="sign-in">
${providers.map((p) => html`<button type="submit" name="provider" value="${p.id}">Sign in with ${p.label}</button>\n`)}</div>
</form>`;
  const signIn =
    providers.length > 0 || chrome.devSignIn
      ? html`<section class="panel" aria-labelledby="sign-in"><h2 id="sign-in">Sign in to claim it</h2>
${buttons}
${development}
<p class="muted">Signing in only tells us who you are; nothing is claimed until you confirm on the next page.</p></section>`
      : html`<div class="note warn" role="status"><p><strong>Sign-in is not available on this server right now.</strong> Keep this link: it stays valid until it expires, and opening it claimed nothing.</p></div>`;
  return page(
    chrome,
    "Claim your test project",
    html`<h1>Claim your test project</h1>
<p>Someone (perhaps a program working for you) created a test project with an instant API key and sent you this link so that a person can take ownership of it.</p>
${signIn}
${summaryList(options.summary)}
<h2>What claiming does</h2>
<ul>
<li>The project is attached to the account you sign in with.</li>
${credits}
<li>The test key keeps working exactly as before, and messages sent earlier stay readable.</li>
<li>This link works once.</li>
</ul>
<p>If nobody claims the project, its messages are deleted 30 days after they were sent.</p>
<p class="muted">Anyone holding this link can claim the project: do not share it, or the API key, in public places.</p>`,
    200,
  );
}

export function confirmPage(
  chrome: ClaimChrome,
  options: {
    token: string;
    summary: ClaimSummary;
    providerLabel: string;
    who: string;
    csrfToken: string;
    freeCredits: number;
  },
): Response {
  const credits =
    options.freeCredits > 0 ? ` and add ${plural(options.freeCredits, "free credit", "free credits")}` : "";
  return page(
    chrome,
    "Confirm the claim",
    html`<h1>Confirm the claim</h1>
<p>You are signed in with <strong>${options.providerLabel}</strong> as <strong>${options.who}</strong>.</p>
<p>Confirming will attach this project to your account${credits}.</p>
<form method="post" action="${claimPath(options.token)}/confirm">
<input type="hidden" name="csrf_token" value="${options.csrfToken}">
<div class="actions"><button class="primary" type="submit">Claim this project</button></div>
</form>
<p class="muted">Not you? <a href="${claimPath(options.token)}">Go back and sign in with another account</a>.</p>
${summaryList(options.summary)}`,
    200,
  );
}

const openProject = (projectId: string) =>
  html`<p class="actions"><a class="button primary" href="/dashboard/projects/${encodeURIComponent(projectId)}">Open the project in the dashboard</a></p>`;

const nextSteps = html`<h2>What happens next</h2>
<ul>
<li>Your test key keeps working, and every message sent with it so far stays readable with it.</li>
<li>Test keys never send real SMS. Create a live key (<code>sk_live_…</code>) on the dashboard, where you also see your messages, credits and usage, and can request your own sender name.</li>
<li>This claim link is now used up; you do not need it any more.</li>
</ul>`;

export function claimedPage(
  chrome: ClaimChrome,
  options: {
    projectId: string;
    creditsGranted: number;
    providerLabel: string;
    who: string;
    already: boolean;
  },
): Response {
  const what = options.already
    ? html`<div class="note ok" role="status"><p><strong>You have already claimed this project.</strong> It is attached to your account; nothing was changed and no credits were added again.</p></div>`
    : html`<div class="note ok" role="status"><p><strong>The project is now yours.</strong> It is attached to the account you signed in with (${options.providerLabel}: ${options.who})${
        options.creditsGranted > 0 &&
        `, and ${plural(options.creditsGranted, "free credit was", "free credits were")} added to it`
      }.</p></div>`;
  return page(
    chrome,
    options.already ? "Project already claimed by you" : "Project claimed",
    html`<h1>${options.already ? "You already claimed this project" : "Project claimed"}</h1>
${what}
${openProject(options.projectId)}
<dl class="facts panel"><dt>Project</dt><dd><code>${options.projectId}</code></dd></dl>
${nextSteps}`,
    200,
  );
}

export function gonePage(chrome: ClaimChrome, reason: "used" | "expired"): Response {
  const body =
    reason === "used"
      ? html`<h1>This claim link has already been used</h1>
<p>The project it belonged to has been claimed. A claim link works only once, so nothing was claimed now.</p>`
      : html`<h1>This claim link has expired</h1>
<p>Claim links stop working 30 days after the test key is issued, so nothing was claimed.</p>`;
  return page(
    chrome,
    reason === "used" ? "Claim link already used" : "Claim link expired",
    html`${body}
<p>The API key keeps working either way. If the project is yours, there is nothing more to do here; otherwise, request a new test key, which comes with a new claim link.</p>`,
    410,
  );
}

export function notFoundPage(chrome: ClaimChrome): Response {
  return page(
    chrome,
    "Claim link not found",
    html`<h1>Claim link not found</h1>
<p>This link does not match any project. Check that it was copied completely: claim links are long and easy to cut short.</p>`,
    404,
  );
}

const backLink = (token: string | null, text = "Back to the claim page") =>
  token
    ? html`<p><a href="${claimPath(token)}">${text}</a></p>`
    : html`<p>Open the claim link again to start over, or <a href="/dashboard/sign-in">sign in to the dashboard</a> again.</p>`;

export function cancelledPage(
  chrome: ClaimChrome,
  options: { token: string; providerLabel: string },
): Response {
  return page(
    chrome,
    "Sign-in cancelled",
    html`<h1>Sign-in was cancelled</h1>
<p>You cancelled signing in with ${options.providerLabel}, so nothing was claimed. The link still works until it expires.</p>
${backLink(options.token)}`,
    200,
  );
}

export type SignInProblem =
  | "session_missing"
  | "state_mismatch"
  | "rejected"
  | "unavailable"
  | "provider_error";

export function signInProblemPage(
  chrome: ClaimChrome,
  options: { problem: SignInProblem; token: string | null; providerLabel?: string },
): Response {
  const provider = options.providerLabel ?? "the provider";
  const texts: Record<SignInProblem, { status: number; title: string; text: string }> = {
    session_missing: {
      status: 400,
      title: "Sign-in expired",
      text: "This sign-in could not be matched to a sign-in started in this browser: it took longer than 10 minutes, was already completed, or was started elsewhere. Nothing was claimed.",
    },
    state_mismatch: {
      status: 400,
      title: "Sign-in could not be verified",
      text: "The answer from the sign-in provider does not belong to the sign-in started in this browser, so it was refused. Nothing was claimed.",
    },
    rejected: {
      status: 400,
      title: "Sign-in failed",
      text: `${provider} did not confirm this sign-in (the sign-in may have been completed already). Nothing was claimed; please sign in again.`,
    },
    unavailable: {
      status: 502,
      title: "Sign-in provider unreachable",
      text: `${provider} could not be reached. Nothing was claimed; please try again in a moment.`,
    },
    provider_error: {
      status: 400,
      title: "Sign-in failed",
      text: `${provider} reported an error and did not sign you in. Nothing was claimed; please try again.`,
    },
  };
  const { status, title, text } = texts[options.problem];
  return page(
    chrome,
    title,
    html`<h1>${title}</h1>\n<p>${text}</p>\n${backLink(options.token, "Start again from the claim page")}`,
    status,
  );
}

/** 429: too many sign-in starts from this address; the caller waits `retryAfterSeconds`. */
export function tooManySignInsPage(chrome: ClaimChrome, token: string, retryAfterSeconds: number): Response {
  const response = page(
    chrome,
    "Too many sign-in attempts",
    html`<h1>Too many sign-in attempts</h1>\n<p>Too many sign-ins were started from your network in the last minute. Nothing was claimed; please wait a minute and try again.</p>\n${backLink(token, "Back to the claim page")}`,
    429,
  );
  response.headers.set("Retry-After", String(retryAfterSeconds));
  return response;
}

export function signInRequiredPage(chrome: ClaimChrome, token: string): Response {
  return page(
    chrome,
    "Sign in again",
    html`<h1>Please sign in again</h1>
<p>Your sign-in for this claim is missing or has expired (it lasts 15 minutes). Nothing was claimed.</p>
${backLink(token, "Back to the claim page")}`,
    400,
  );
}

export function refusedPage(chrome: ClaimChrome, token: string | null): Response {
  return page(
    chrome,
    "Request refused",
    html`<h1>This request was refused</h1>
<p>The form did not come from this claim page in this browser, so it was not accepted. Nothing was claimed. Reload the claim page and try again.</p>
${backLink(token)}`,
    403,
  );
}

export function badRequestPage(
  chrome: ClaimChrome,
  options: { status: number; title: string; text: string; token: string | null },
): Response {
  return page(
    chrome,
    options.title,
    html`<h1>${options.title}</h1>\n<p>${options.text}</p>\n${backLink(options.token)}`,
    options.status,
  );
}

export function errorPage(chrome: ClaimChrome, requestId: string): Response {
  return page(
    chrome,
    "Something went wrong",
    html`<h1>Something went wrong</h1>
<p>An unexpected error occurred and nothing was claimed. Please try again in a moment.</p>
<p class="muted">Reference: <code>${requestId}</code></p>`,
    500,
  );
}
