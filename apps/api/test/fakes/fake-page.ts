// The small HTML consent page both fake identity providers show: one button
// per test user ("Continue as …") and a Cancel button, like the real
// providers' account choosers. Each button submits a GET form.
export type FakeUser = { subject: string; email: string; name: string; login?: string };

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

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
    Object.entries(fields)
      .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
      .join("");
  const userForms = options.users
    .map(
      (user) =>
        `<form method="get" action="${escapeHtml(options.approve.action)}">${hidden(options.approve.fields)}` +
        `<input type="hidden" name="login_hint" value="${escapeHtml(user.subject)}">` +
        `<button type="submit">Continue as ${escapeHtml(user.email)}</button></form>`,
    )
    .join("\n");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in – ${escapeHtml(options.provider)} (fake)</title>
<style>body{font:16px system-ui,sans-serif;background:#eef1f5;margin:0}main{max-width:28rem;margin:4rem auto;background:#fff;padding:2rem;border-radius:10px;border:1px solid #ccd}
button{display:block;width:100%;margin:.5rem 0;padding:.7rem;font:inherit;border-radius:6px;border:1px solid #99a;background:#fafafa;cursor:pointer}</style></head>
<body><main><h1>${escapeHtml(options.provider)} (local fake)</h1>
<p>Application <code>${escapeHtml(options.clientId)}</code> wants to know who you are.</p>
${userForms}
<form method="get" action="${escapeHtml(options.cancel.action)}">${hidden(options.cancel.fields)}<button type="submit">Cancel</button></form>
</main></body></html>`;
}
