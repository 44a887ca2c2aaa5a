// Template variables: the strict rules of spec section 2.6.
//
// Checks run in this fixed order and the first failure is reported; within one check
// the template's variables are taken in catalogue order:
//   1. `variables` is a plain JSON object;
//   2. missing: every variable the template takes is present;
//   3. unexpected: no other variable is present (in the object's key order);
//   4. type: every value is a JSON string;
//   5. shape: every value matches its variable's rule (`code`, `minutes`);
//   6. screen: no value looks like a link, a web address or a phone number.
// The screen runs on every variable, whatever its shape rule already forbids, so a
// future variable with a looser shape is screened too.
//
// Messages are for API callers: they say what to change and name the variable, and
// never contain the offending value (it may be a phone number or a secret).

import { TEMPLATES, type TemplateId, type VariableName } from "./catalogue.ts";

export type VariablesCheck =
  | { ok: true; values: Readonly<Record<string, string>> }
  | { ok: false; code: "invalid_variables"; message: string; variable?: string };

export type VariableRule = {
  /** Whether a string value has the variable's shape. */
  accepts: (value: string) => boolean;
  /** What the value must look like, completing "Variable `x` must be …". */
  requirement: string;
  /** A valid value to show callers. */
  example: string;
};

/**
 * The shape rule of each variable as a regular expression (anchored, ASCII
 * digits only): the rules below use them, and the OpenAPI document publishes
 * them as `pattern`s.
 */
export const VARIABLE_PATTERNS: { readonly [N in VariableName]: RegExp } = {
  code: /^[0-9]{4,8}$/,
  minutes: /^[1-9][0-9]{0,2}$/,
};

export const VARIABLE_RULES: { readonly [N in VariableName]: VariableRule } = {
  code: {
    accepts: (value) => VARIABLE_PATTERNS.code.test(value),
    requirement: "4 to 8 digits 0-9 and nothing else (no spaces, signs or other characters)",
    example: "482913",
  },
  minutes: {
    accepts: (value) => VARIABLE_PATTERNS.minutes.test(value),
    requirement: "a whole number from 1 to 999 written without leading zeros",
    example: "15",
  },
};

export function validateVariables(template: TemplateId, variables: unknown): VariablesCheck {
  const rules = TEMPLATES[template].variables.map((name) => [name, VARIABLE_RULES[name]] as const);
  return checkVariables({ template, rules, variables });
}

/**
 * The checks themselves, over any list of variable rules: `validateVariables` feeds it
 * the catalogue; tests feed it made-up variables to show the screen covers them too.
 */
export function checkVariables({
  template,
  rules,
  variables,
}: {
  template: string;
  rules: readonly (readonly [name: string, rule: VariableRule])[];
  variables: unknown;
}): VariablesCheck {
  const names = rules.map(([name]) => name);
  // For the refusals' wording only (a send that passes never builds them).
  const expected = () => (names.length === 0 ? "no variables" : names.join(", "));
  const example = () => JSON.stringify(Object.fromEntries(rules.map(([name, rule]) => [name, rule.example])));

  if (!isPlainObject(variables)) {
    return invalid(
      `\`variables\` must be a JSON object of strings, not ${describeJsonType(variables)}; ` +
        `template \`${template}\` takes ${expected()}, e.g. ${example()}.`,
    );
  }

  for (const name of names) {
    if (isPresent(variables, name)) continue;
    return invalid(
      `Variable \`${name}\` is missing: template \`${template}\` takes exactly ${expected()}, e.g. ${example()}.`,
      name,
    );
  }

  for (const key of Object.keys(variables)) {
    if (names.includes(key)) continue;
    if (!isPresent(variables, key)) continue;
    if (!isSafeToRepeat(key)) {
      return invalid(
        `\`variables\` has a variable that template \`${template}\` does not take (its name is not repeated here); ` +
          `send only ${expected()}.`,
      );
    }
    return invalid(
      `Variable \`${key}\` is not taken by template \`${template}\`: remove it and send only ${expected()}.`,
      key,
    );
  }

  for (const [name, rule] of rules) {
    const value = variables[name];
    if (typeof value === "string") continue;
    return invalid(
      `Variable \`${name}\` must be a JSON string such as "${rule.example}", not ${describeJsonType(value)}; ` +
        "quote the value so leading zeros survive.",
      name,
    );
  }

  const values: Record<string, string> = {};
  for (const [name, rule] of rules) {
    const value = variables[name] as string;
    if (!rule.accepts(value)) {
      return invalid(`Variable \`${name}\` must be ${rule.requirement}, e.g. "${rule.example}".`, name);
    }
    values[name] = value;
  }

  for (const [name, value] of Object.entries(values)) {
    const finding = screenValue(value);
    if (finding === undefined) continue;
    return invalid(
      `Variable \`${name}\` looks like ${SCREEN_FINDING_TEXT[finding]}; template variables never carry ` +
        "links, web addresses or phone numbers. Send only the value the template needs.",
      name,
    );
  }

  return { ok: true, values: Object.freeze(values) };
}

export type ScreenFinding = "link" | "web_address" | "phone_number";

const SCREEN_FINDING_TEXT: { readonly [F in ScreenFinding]: string } = {
  link: "a link (it contains `http`, `www.` or `://`)",
  web_address: "a web address",
  phone_number: "a phone number (it has nine or more digits)",
};

/** Marks a phone or mail app turns into a link, matched case-insensitively. */
const LINK_MARKERS = ["http", "www.", "://"] as const;

/**
 * `name.tld`: a letter, digit, `_` or `-`, a dot, then a letter followed by one more
 * letter, digit or hyphen (`example.com`, `bit.ly`, `пример.рф`, `xn--p1ai`). IPv4 addresses
 * are caught separately, since their last label is numeric.
 */
const WEB_ADDRESS = /[\p{L}\p{N}_-]\.\p{L}[\p{L}\p{N}-]/u;
const IPV4_ADDRESS = /\p{Nd}{1,3}\.\p{Nd}{1,3}\.\p{Nd}{1,3}\.\p{Nd}{1,3}/u;
const NON_ASCII_DIGIT = /^\p{Nd}$/u;
const PHONE_NUMBER_DIGITS = 9;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * The link/phone screen. Before matching, the value is folded so look-alikes cannot slip
 * through: compatibility decomposition (NFKD: full-width `ｈｔｔｐ` becomes `http`,
 * `①` becomes `1`), combining marks and invisible format characters (zero-width space,
 * soft hyphen, direction marks) removed, the ideographic full stop `。` read as `.`, and
 * lower case. Then, in this order:
 * - `link`: contains `http`, `www.` or `://`;
 * - `web_address`: contains `name.tld` (see WEB_ADDRESS) or a dotted IPv4 address;
 * - `phone_number`: nine or more decimal digits (any script) anywhere in the value; every
 *   other character, separators included (spaces, dots, dashes, parentheses, slashes,
 *   letters), is ignored.
 */
export function screenValue(value: string): ScreenFinding | undefined {
  const folded = foldForScreen(value);
  if (LINK_MARKERS.some((marker) => folded.includes(marker))) return "link";
  if (WEB_ADDRESS.test(folded) || IPV4_ADDRESS.test(folded)) return "web_address";
  if (countDigits(folded) >= PHONE_NUMBER_DIGITS) return "phone_number";
  return undefined;
}

function foldForScreen(value: string): string {
  // Printable ASCII has nothing to decompose, no marks and no format characters.
  if (PRINTABLE_ASCII.test(value)) return value.toLowerCase();
  return value
    .normalize("NFKD")
    .replace(/[\p{M}\p{Cf}]/gu, "")
    .replace(/\u3002/g, ".")
    .toLowerCase();
}

/** Decimal digits of any script (Unicode category Nd). */
function countDigits(text: string): number {
  let digits = 0;
  for (const character of text) {
    if (character >= "0" && character <= "9") digits++;
    else if (character > "\u007f" && NON_ASCII_DIGIT.test(character)) digits++;
  }
  return digits;
}

function invalid(message: string, variable?: string): VariablesCheck {
  if (variable === undefined) return { ok: false, code: "invalid_variables", message };
  return { ok: false, code: "invalid_variables", message, variable };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** Own property with a value: `{ code: undefined }` is what JSON would send as `{}`. */
function isPresent(variables: Record<string, unknown>, name: string): boolean {
  return Object.hasOwn(variables, name) && variables[name] !== undefined;
}

/** An unexpected key is repeated in messages only if it is a plain, harmless identifier. */
function isSafeToRepeat(key: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]{0,39}$/.test(key) && screenValue(key) === undefined;
}

function describeJsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "number") return "a number";
  if (typeof value === "boolean") return "a boolean";
  if (typeof value === "string") return "a string";
  return "a non-JSON value";
}
