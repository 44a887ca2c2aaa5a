import { describe, expect, it } from "vitest";
import {
  DEFAULT_LOCALE,
  LOCALES,
  TEMPLATE_IDS,
  TEMPLATES,
  type TemplateId,
  VARIABLE_NAMES,
} from "./catalogue.ts";
import { VARIABLE_RULES } from "./variables.ts";

// Spec section 2.6, entered a second time with every non-ASCII character escaped, so
// that a Georgian letter swapped for a look-alike, or a stray normalization, fails.
const SPEC_2_6: Record<TemplateId, { variables: string[]; en: string; ka: string }> = {
  verification_code: {
    variables: ["code"],
    en: "Your verification code is {code}. Do not share it with anyone.",
    ka: "\u10D7\u10E5\u10D5\u10D4\u10DC\u10D8 \u10D3\u10D0\u10DB\u10D0\u10D3\u10D0\u10E1\u10E2\u10E3\u10E0\u10D4\u10D1\u10D4\u10DA\u10D8 \u10D9\u10DD\u10D3\u10D8\u10D0 {code}. \u10D0\u10E0\u10D0\u10D5\u10D8\u10E1 \u10D2\u10D0\u10E3\u10D6\u10D8\u10D0\u10E0\u10DD\u10D7.",
  },
  login_code: {
    variables: ["code"],
    en: "Your sign-in code is {code}. If you did not request it, ignore this message.",
    ka: "\u10E8\u10D4\u10E1\u10D5\u10DA\u10D8\u10E1 \u10D9\u10DD\u10D3\u10D8: {code}. \u10D7\u10E3 \u10D0\u10E0 \u10DB\u10DD\u10D2\u10D8\u10D7\u10EE\u10DD\u10D5\u10D8\u10D0\u10D7, \u10D2\u10D0\u10DB\u10DD\u10E2\u10DD\u10D5\u10D4\u10D7 \u10D4\u10E1 \u10E8\u10D4\u10E2\u10E7\u10DD\u10D1\u10D8\u10DC\u10D4\u10D1\u10D0.",
  },
  password_reset_code: {
    variables: ["code", "minutes"],
    en: "Your password reset code is {code}. It expires in {minutes} minutes.",
    ka: "\u10DE\u10D0\u10E0\u10DD\u10DA\u10D8\u10E1 \u10D0\u10E6\u10D3\u10D2\u10D4\u10DC\u10D8\u10E1 \u10D9\u10DD\u10D3\u10D8: {code}. \u10DB\u10DD\u10E5\u10DB\u10D4\u10D3\u10D4\u10D1\u10E1 {minutes} \u10EC\u10E3\u10D7\u10D8.",
  },
};

describe("catalogue", () => {
  it("has exactly the three built-in templates, the two locales and ka as default", () => {
    expect(TEMPLATE_IDS).toEqual(["verification_code", "login_code", "password_reset_code"]);
    expect(Object.keys(TEMPLATES)).toEqual([...TEMPLATE_IDS]);
    expect(LOCALES).toEqual(["ka", "en"]);
    expect(DEFAULT_LOCALE).toBe("ka");
  });

  it.each(TEMPLATE_IDS)("%s matches spec 2.6 character for character", (template) => {
    const spec = SPEC_2_6[template];
    expect(TEMPLATES[template].variables).toEqual(spec.variables);
    expect(TEMPLATES[template].text.en).toBe(spec.en);
    expect(TEMPLATES[template].text.ka).toBe(spec.ka);
  });

  it.each(TEMPLATE_IDS.flatMap((template) => LOCALES.map((locale) => [template, locale] as const)))(
    "%s/%s uses each of its variables exactly once and no other placeholder",
    (template, locale) => {
      const placeholders = [...TEMPLATES[template].text[locale].matchAll(/\{([^}]*)\}/g)].map(
        (match) => match[1],
      );
      expect(placeholders).toEqual([...TEMPLATES[template].variables]);
    },
  );

  it.each(TEMPLATE_IDS)(
    "%s Georgian text is Mkhedruli letters, spaces and ASCII punctuation only",
    (template) => {
      const text = TEMPLATES[template].text.ka.replace(/\{[a-z]+\}/g, "");
      expect(text).toMatch(/^[\u10D0-\u10FA .,:]+$/);
    },
  );

  it("every variable a template uses has a rule", () => {
    expect(Object.keys(VARIABLE_RULES).sort()).toEqual([...VARIABLE_NAMES].sort());
    for (const template of TEMPLATE_IDS) {
      for (const name of TEMPLATES[template].variables) expect(VARIABLE_RULES[name]).toBeDefined();
    }
  });

  it("is frozen: no other package can change the text at run time", () => {
    expect(Object.isFrozen(TEMPLATES)).toBe(true);
    expect(Object.isFrozen(TEMPLATES.login_code)).toBe(true);
    expect(Object.isFrozen(TEMPLATES.login_code.text)).toBe(true);
    expect(Object.isFrozen(TEMPLATES.login_code.variables)).toBe(true);
    expect(() => {
      (TEMPLATES.login_code.text as { en: string }).en = "Click http://evil.example";
    }).toThrow(TypeError);
  });
});
