// Rendering: template id + variables + locale in, the SMS text and its segment count out.

import {
  DEFAULT_LOCALE,
  isLocale,
  isTemplateId,
  LOCALES,
  type Locale,
  TEMPLATE_ID_LIST,
  TEMPLATES,
  type TemplateId,
} from "./catalogue.ts";
import { countSegments, type MessageEncoding } from "./segments.ts";
import { validateVariables } from "./variables.ts";

export type RenderInput = { template: unknown; variables: unknown; locale?: Locale };

export type RenderResult =
  | { ok: true; template: TemplateId; text: string; segments: number; encoding: MessageEncoding }
  | { ok: false; code: "invalid_template" | "invalid_variables"; message: string; variable?: string };

const PLACEHOLDER = /\{([a-z_]+)\}/g;

/**
 * Checks the template id, then the variables (see `variables.ts` for the order), then
 * fills the placeholders of the locale's text and counts its segments. Expected
 * failures come back as values. `locale` is typed, so callers validate it first (the
 * API answers `invalid_request` for a bad one); an unknown locale here is a programming
 * error and throws a RangeError. `undefined` means the default, `ka`.
 */
export function renderMessage({ template, variables, locale = DEFAULT_LOCALE }: RenderInput): RenderResult {
  if (!isLocale(locale)) {
    throw new RangeError(`renderMessage: locale must be one of ${LOCALES.join(", ")}`);
  }
  if (typeof template !== "string") {
    return {
      ok: false,
      code: "invalid_template",
      message: `\`template\` must be a string, one of: ${TEMPLATE_ID_LIST}.`,
    };
  }
  if (!isTemplateId(template)) {
    return {
      ok: false,
      code: "invalid_template",
      message: `Unknown template: \`template\` must be one of: ${TEMPLATE_ID_LIST}.`,
    };
  }

  const check = validateVariables(template, variables);
  if (!check.ok) return check;

  const text = fillPlaceholders(TEMPLATES[template].text[locale], check.values);
  const { segments, encoding } = countSegments(text);
  return { ok: true, template, text, segments, encoding };
}

function fillPlaceholders(text: string, values: Readonly<Record<string, string>>): string {
  return text.replace(PLACEHOLDER, (_placeholder, name: string) => {
    const value = values[name];
    // The catalogue tests prove every placeholder is a declared, validated variable.
    if (value === undefined) throw new Error(`template placeholder {${name}} has no value`);
    return value;
  });
}
