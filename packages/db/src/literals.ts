// A parameterised statement ($1, $2, …) written out with its parameters as SQL
// literals, for the one place a statement must go by the simple query
// protocol: with COMMIT in one message (database.ts, queryAndCommit). The
// quoting is pg's own (escapeLiteral); what is here is finding the
// placeholders outside quoted text, comments and identifiers, and turning the
// few kinds of value the store passes into text as pg would send them.
import pg from "pg";

/** `sql` with each `$n` outside quotes and comments replaced by `params[n - 1]` as a literal. */
export function withLiterals(sql: string, params: readonly unknown[]): string {
  const { texts, placeholders } = templateOf(sql);
  let out = texts[0] as string;
  for (let at = 0; at < placeholders.length; at++) {
    const index = placeholders[at] as number;
    if (index < 1 || index > params.length) {
      throw new RangeError(`withLiterals: $${index} has no parameter (${params.length} given)`);
    }
    out += literal(params[index - 1]) + (texts[at + 1] as string);
  }
  return out;
}

/** A statement's text split around its placeholders: texts[0] $n texts[1] $m texts[2] … */
type Template = { texts: string[]; placeholders: number[] };

/** Each text is split once (a service has a few dozen statements; beyond this many, none is kept). */
const templates = new Map<string, Template>();
const MAX_TEMPLATES = 500;

function templateOf(sql: string): Template {
  let template = templates.get(sql);
  if (!template) {
    template = split(sql);
    if (templates.size < MAX_TEMPLATES) templates.set(sql, template);
  }
  return template;
}

function split(sql: string): Template {
  const texts: string[] = [];
  const placeholders: number[] = [];
  let text = "";
  let at = 0;
  while (at < sql.length) {
    const char = sql[at] as string;
    const next = sql[at + 1];
    let end: number;
    if (char === "'") end = quotedEnd(sql, at, /[eE]/.test(sql[at - 1] ?? "") && !isWordChar(sql[at - 2]));
    else if (char === '"') end = quotedEnd(sql, at, false);
    else if (char === "-" && next === "-") end = lineEnd(sql, at);
    else if (char === "/" && next === "*") end = commentEnd(sql, at);
    else if (char === "$" && !isWordChar(sql[at - 1])) {
      const placeholder = /^\$(\d+)/.exec(sql.slice(at, at + 12));
      if (!placeholder) throw new TypeError("withLiterals: dollar-quoted text is not supported");
      texts.push(text);
      text = "";
      placeholders.push(Number(placeholder[1]));
      at += placeholder[0].length;
      continue;
    } else end = at + 1;
    text += sql.slice(at, end);
    at = end;
  }
  texts.push(text);
  return { texts, placeholders };
}

/** One parameter as the literal pg would have sent as its text; NULL for null. */
export function literal(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "string") return pg.escapeLiteral(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value))
      throw new RangeError(`withLiterals: ${value} is not a number PostgreSQL takes`);
    return pg.escapeLiteral(String(value));
  }
  if (typeof value === "bigint" || typeof value === "boolean") return pg.escapeLiteral(String(value));
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new RangeError("withLiterals: an invalid Date");
    return pg.escapeLiteral(value.toISOString());
  }
  throw new TypeError(`withLiterals: a parameter of type ${typeof value} is not supported`);
}

function isWordChar(char: string | undefined): boolean {
  return char !== undefined && /[\p{L}\p{N}_$]/u.test(char);
}

/** The index after a quoted string or identifier opened at `start` ('' and "" escape the quote). */
function quotedEnd(sql: string, start: number, backslashes: boolean): number {
  const quote = sql[start];
  for (let at = start + 1; at < sql.length; at++) {
    if (backslashes && sql[at] === "\\") {
      at++;
      continue;
    }
    if (sql[at] !== quote) continue;
    if (sql[at + 1] === quote) {
      at++;
      continue;
    }
    return at + 1;
  }
  throw new SyntaxError("withLiterals: an unterminated quote");
}

function lineEnd(sql: string, start: number): number {
  const end = sql.indexOf("\n", start);
  return end === -1 ? sql.length : end + 1;
}

function commentEnd(sql: string, start: number): number {
  const end = sql.indexOf("*/", start + 2);
  if (end === -1) throw new SyntaxError("withLiterals: an unterminated comment");
  return end + 2;
}
