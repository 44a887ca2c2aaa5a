// The small HTML consent page both fake identity providers show: one button
// per test user ("Continue as …") and a Cancel button, like the real
// providers' account choosers. Each button submits a GET form.
import { html } from "@sms/web/testing";

export type FakeUser = { subject: string; email: string; name: string; login?: string };

export function consentPage(options: {
  provider: string;
  clientId: string;
  users: FakeUser[];
  /** Where "Continue as" submits, and the fields it carries (plus `login_hint`). */
  approve: { action: string; fields: Record<string, string> };
  /** Where "Cancel" submits, and the fields it carries. */
  cancel: { action: string; fields: Record<string, string> };
}): string {
  const hidden = (fields: Record<string, string>) =>
    Object.entries(fields).map(
      ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
    );
  const userForms = options.users.map(
    (user) =>
      html`<form method="get" action="${options.approve.action}">${hidden(options.approve.fields)}<input type="hidden" name="login_hint" value="${user.subject}"><button type="submit">Continue as ${user.email}</button></form>\n`,
  );
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in – ${options.provider} (fake)</title>
<style>body{font:16px system-ui,sans-serif;background:#eef1f5;margin:0}main{max-width:28rem;margin:4rem auto;background:#fff;padding:2rem;border-radius:10px;border:1px solid #ccd}
button{display:block;width:100%;margin:.5rem 0;padding:.7rem;font:inherit;border-radius:6px;border:1px solid #99a;background:#fafafa;cursor:pointer}</style></head>
<body><main><h1>${options.provider} (local fake)</h1>
<p>Application <code>${options.clientId}</code> wants to know who you are.</p>
${userForms}
<form method="get" action="${options.cancel.action}">${hidden(options.cancel.fields)}<button type="submit">Cancel</button></form>
</main></body></html>`.toString();
}
