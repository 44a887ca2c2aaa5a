// "Send a test message" from the project page: template, locale, variables and
// a simulator recipient (each with what it does), sent in test mode; then the
// message and the same request as a curl line (a placeholder for the key, and
// for the code: codes are never repeated in a page).
import { countSegments, LOCALES, TEMPLATE_IDS, TEMPLATES, type TemplateId } from "@sms/templates";
import { type Html, html } from "../kit/html.ts";
import {
  type Chrome,
  csrfField,
  htmlPage,
  inlineCode,
  note,
  projectHeader,
  projectPath,
  statusBadge,
  table,
} from "./layout.ts";

/**
 * The longest value each variable takes (the most segments a text can come to), never a typed value;
 * views.test.ts checks each against the variable rules of @sms/templates.
 */
export const LONGEST: Record<string, string> = { code: "00000000", minutes: "999" };

/** A template's text with its `{placeholders}`, and its segments with the longest values. */
export function templateText(template: TemplateId, locale: (typeof LOCALES)[number]) {
  const text = TEMPLATES[template].text[locale];
  const filled = text.replace(/\{(\w+)\}/g, (_, name: string) => LONGEST[name] ?? "");
  const { segments, encoding } = countSegments(filled);
  return { text, segments, encoding: encoding === "gsm7" ? "GSM-7" : "UCS-2" };
}

const segmentsText = (count: { segments: number; encoding: string }) =>
  `${count.segments} segment${count.segments === 1 ? "" : "s"} (${count.encoding})`;

/** Every template's text in every locale, with its placeholders and segment count. */
function templatesTable(): Html {
  const rows = TEMPLATE_IDS.flatMap((template) =>
    LOCALES.map((locale) => {
      const found = templateText(template, locale);
      return [
        html`<code>${template}</code>`,
        locale,
        html`<span class="said">${found.text}</span>`,
        segmentsText(found),
      ];
    }),
  );
  return html`<section id="templates" aria-labelledby="templates-title"><h2 id="templates-title">What each template sends</h2>
<p class="muted">The text with its placeholders: the values you give fill them. Segments are counted with the longest values (an 8-digit code, 999 minutes); live sends cost one credit a segment.</p>
${table("The templates' texts", ["Template", "Locale", "Text", "Segments"], rows)}</section>`;
}

export type TryValues = { template: string; locale: string; code: string; minutes: string; to: string };
export type Recipient = { number: string; what: string };

function options(values: readonly string[], current: string): Html[] {
  return values.map(
    (value) => html`<option value="${value}"${value === current && " selected"}>${value}</option>`,
  );
}

export function tryPage(
  chrome: Chrome,
  options_: {
    projectId: string;
    recipients: readonly Recipient[];
    idempotencyKey: string;
    values?: TryValues;
    problem?: { code: string; message: string };
    status?: number;
  },
): Response {
  const values = options_.values ?? {
    template: "verification_code",
    locale: "en",
    code: "",
    minutes: "",
    to: "",
  };
  return htmlPage(chrome, {
    title: "Send a test message",
    section: "projects",
    status: options_.status ?? 200,
    body: html`${projectHeader(chrome, options_.projectId, "overview", "Send a test message")}
<p>Sent with this project's <strong>test</strong> mode: free, never reaches a phone. The simulator answers as the provider would; each number below behaves its own way.</p>
<p class="muted">Live keys send at most 2 messages a minute and 10 a day to one number by default (codes of verifications included); test sends are never limited per number, but each result says what a live key would have left for it, so try the same phone repeatedly here before relying on it in production.</p>
${options_.problem && note("bad", html`<p><code>${options_.problem.code}</code> ${inlineCode(options_.problem.message)}</p>`, "alert")}
<form method="post" action="${projectPath(options_.projectId, "/try")}" class="panel" aria-label="Send a test message">
${csrfField(chrome)}<input type="hidden" name="idempotency_key" value="${options_.idempotencyKey}">
<div class="form-grid">
<div class="field"><label for="t-template">Template</label><select id="t-template" name="template">${options(TEMPLATE_IDS, values.template)}</select></div>
<div class="field"><label for="t-locale">Locale</label><select id="t-locale" name="locale">${options(LOCALES, values.locale)}</select></div>
<div class="field"><label for="t-code">code <span class="hint">(4–8 digits)</span></label><input id="t-code" name="code" inputmode="numeric" autocomplete="off" value=""></div>
<div class="field"><label for="t-minutes">minutes <span class="hint">(password_reset_code only)</span></label><input id="t-minutes" name="minutes" inputmode="numeric" autocomplete="off" value="${values.minutes}"></div>
</div>
<fieldset class="recipients"><legend>Recipient</legend>
${options_.recipients.map(
  (recipient, i) =>
    html`<div class="choice"><input type="radio" id="t-to-${i}" name="to" value="${recipient.number}"${(values.to === recipient.number || (values.to === "" && i === 0)) && " checked"}><label for="t-to-${i}"><code>${recipient.number}</code> <span class="hint">${recipient.what}</span></label></div>`,
)}
</fieldset>
<div class="actions"><button type="submit" class="primary">Send test message</button></div>
</form>
${templatesTable()}`,
  });
}

/** `value` as one shell word: single-quoted, a quote inside it closed, escaped and reopened. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * The request as a curl line. Every value from the form is shell-quoted (the form's fields are the
 * caller's to change), and the number is shown only when it is one of the simulator's published
 * numbers: any other is a phone, shown as `<TO>` (numbers are masked on every page), as the code is
 * `<CODE>`.
 */
export function curlLine(options: {
  baseUrl: string;
  idempotencyKey: string;
  values: TryValues;
  /** The simulator's numbers, the only ones the line may spell out. */
  publicNumbers: readonly string[];
}): string {
  const variables: Record<string, string> = { code: "<CODE>" };
  if (options.values.template === "password_reset_code") variables.minutes = options.values.minutes;
  const body = JSON.stringify({
    to: options.publicNumbers.includes(options.values.to) ? options.values.to : "<TO>",
    template: options.values.template,
    variables,
    locale: options.values.locale,
  });
  return [
    `curl -X POST ${shellQuote(`${options.baseUrl}/v1/messages`)}`,
    `-H "Authorization: Bearer $SMS_API_KEY"`,
    `-H ${shellQuote(`Idempotency-Key: ${options.idempotencyKey}`)}`,
    `-H "Content-Type: application/json"`,
    `-d ${shellQuote(body)}`,
  ].join(" \\\n  ");
}

export function triedPage(
  chrome: Chrome,
  options: {
    projectId: string;
    messageId: string;
    status: string;
    replayed: boolean;
    /** The number's per-number allowance as a live key would have it (null: a replay). */
    liveRecipient: {
      limit: { minute: number; day: number };
      remaining: { minute: number; day: number };
    } | null;
    curl: string;
    /** The template sent and its locale, when they are the catalogue's (the text shown with its placeholders). */
    sent?: { template: TemplateId; locale: (typeof LOCALES)[number] };
  },
): Response {
  const sent = options.sent && templateText(options.sent.template, options.sent.locale);
  const live = options.liveRecipient;
  const message = projectPath(options.projectId, `/messages/${encodeURIComponent(options.messageId)}`);
  return htmlPage(chrome, {
    title: "Test message sent",
    section: "projects",
    body: html`${projectHeader(chrome, options.projectId, "overview", "Test message sent")}
${note("ok", html`<p>${options.replayed ? "Sent before with this form: the first answer was replayed." : "Accepted."} <a href="${message}?watch=1"><code>${options.messageId}</code></a> is ${statusBadge(options.status)}. <a href="${message}?watch=1">Watch its timeline settle</a>.</p>`)}
${live && html`<p id="live-recipient">On a live key this number would have ${live.remaining.minute} of ${live.limit.minute} messages left this minute and ${live.remaining.day} of ${live.limit.day} today <span class="muted">(messages and verification codes together; test sends are never refused for it)</span>.</p>`}
${sent && html`<p>It says: <q>${sent.text}</q> <span class="muted">(${segmentsText(sent)} at most; the code is never shown)</span></p>`}
<h2>The same request from your code</h2>
<p class="muted">Put your test key in <code>SMS_API_KEY</code> and the code in place of <code>&lt;CODE&gt;</code> (codes are never repeated on a page).</p>
<div class="secret"><textarea id="curl" readonly rows="6" aria-label="curl command" data-select-on-focus>${options.curl}</textarea><button type="button" data-copy="curl" hidden>Copy</button></div>
<p><a href="${projectPath(options.projectId, "/try")}">Send another</a></p>`,
  });
}
