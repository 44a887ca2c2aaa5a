// The one way a page writes HTML: the `html` tagged template. Every
// interpolated value is escaped unless it is itself an `Html` (made by this
// tag, or by `raw()` for text the code wrote, never for data). So a view
// cannot forget to escape a name, a purpose or a reason: there is nothing to
// remember. See the package README for why this is our own 40 lines and not a
// library.

/** Markup that is safe to write as it is: made by `html` or `raw`. */
export class Html {
  readonly #markup: string;
  constructor(markup: string) {
    this.#markup = markup;
  }
  toString(): string {
    return this.#markup;
  }
}

/** What a template may interpolate. null, undefined and false write nothing (for `${cond && html`…`}`). */
export type Child = Html | string | number | null | undefined | false | readonly Child[];

const ENTITIES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
  "`": "&#96;",
};

/** Text as HTML text or a quoted attribute value. */
export function escapeText(text: string): string {
  return text.replace(/[&<>"'`]/g, (char) => ENTITIES[char] ?? char);
}

function write(child: Child, out: string[]): void {
  if (child === null || child === undefined || child === false) return;
  if (child instanceof Html) out.push(child.toString());
  else if (Array.isArray(child)) for (const item of child as readonly Child[]) write(item, out);
  else if (typeof child === "number") out.push(String(child));
  else out.push(escapeText(String(child)));
}

export function html(strings: TemplateStringsArray, ...values: Child[]): Html {
  const out: string[] = [strings[0] ?? ""];
  values.forEach((value, index) => {
    write(value, out);
    out.push(strings[index + 1] ?? "");
  });
  return new Html(out.join(""));
}

/** Markup the code itself wrote (a constant, never data): written as it is. */
export function raw(markup: string): Html {
  return new Html(markup);
}

/** Items joined by `separator` (escaped like any child). */
export function join(items: readonly Child[], separator: Child = ""): Html {
  return html`${items.flatMap((item, index) => (index === 0 ? [item] : [separator, item]))}`;
}

/**
 * An href or action built from data: a path on this site ("/…", not "//…") or
 * an http(s) URL; anything else (javascript:, data:, //evil) becomes "#".
 * Escaped like any other value where it is written.
 */
export function safeUrl(url: string): string {
  if (/^\/(?![/\\])/.test(url)) return url;
  try {
    const parsed = new URL(url);
    return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.href : "#";
  } catch {
    return "#";
  }
}
