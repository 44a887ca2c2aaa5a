// The dashboard's answers when a page cannot be shown or an action was not
// taken: each says what happened and where to go, with the right status.
import { type Child, html, safeUrl } from "../kit/html.ts";
import { type Chrome, htmlPage, note } from "./layout.ts";

function problem(
  chrome: Chrome,
  status: number,
  title: string,
  text: Child,
  back: { href: string; label: string } = { href: "/dashboard", label: "Back to the dashboard" },
): Response {
  return htmlPage(chrome, {
    title,
    section: "none",
    status,
    body: html`<h1>${title}</h1>\n<p>${text}</p>\n<p><a href="${safeUrl(back.href)}">${back.label}</a></p>`,
  });
}

export const notFoundPage = (chrome: Chrome) =>
  problem(
    chrome,
    404,
    "Not found",
    "There is nothing here for the account you are signed in with. Projects are shown only to the account that claimed them.",
  );

/** An address under /dashboard that no page has. */
export const noSuchPage = (chrome: Chrome) =>
  problem(chrome, 404, "Page not found", "There is no dashboard page at this address.");

export const forbiddenPage = (chrome: Chrome) =>
  problem(chrome, 403, "Operators only", "This page is for the service's operators.");

/** A change that did not come from this dashboard in this browser (cross-site, or no matching CSRF token). */
export const refusedPage = (chrome: Chrome) =>
  problem(
    chrome,
    403,
    "Request refused",
    "The form did not come from this dashboard in this browser, so nothing was changed. Reload the page and try again.",
  );

/** A change sent after the session ended (signed out, idle too long, or expired). */
export const sessionEndedPage = (chrome: Chrome) =>
  problem(
    chrome,
    401,
    "Your session has ended",
    "You were signed out (after a while without use, or from another tab), so nothing was changed. Sign in and try again.",
    { href: "/dashboard/sign-in", label: "Sign in" },
  );

export const badRequestPage = (chrome: Chrome, text: string, status = 400) =>
  problem(chrome, status, "That did not work", text);

export const errorPage = (chrome: Chrome, requestId: string) =>
  problem(
    chrome,
    500,
    "Something went wrong",
    html`An unexpected error occurred; nothing more is known here. Please try again in a moment. <span class="muted">Reference: <code>${requestId}</code></span>`,
  );

/** An action the domain refused (a suspended project, a pending request…): its sentence, and the way back. */
export function actionRefusedPage(
  chrome: Chrome,
  options: { title: string; message: string; back: { href: string; label: string }; status?: number },
): Response {
  return htmlPage(chrome, {
    title: options.title,
    section: "none",
    status: options.status ?? 409,
    body: html`<h1>${options.title}</h1>
${note("bad", html`<p>${options.message}</p>`, "alert")}
<p><a href="${safeUrl(options.back.href)}">${options.back.label}</a></p>`,
  });
}
