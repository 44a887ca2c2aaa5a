import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LOCALES, type Locale, TEMPLATE_IDS, TEMPLATES, type TemplateId } from "./catalogue.ts";
import { renderMessage } from "./render.ts";
import { countSegments, gsm7Septets, SEGMENT_LIMITS } from "./segments.ts";

const VALID_IDS = "verification_code, login_code, password_reset_code";

describe("renderMessage: every template in every locale", () => {
  it.each([
    [
      "verification_code",
      "en",
      { code: "482913" },
      "Your verification code is 482913. Do not share it with anyone.",
      "gsm7",
    ],
    [
      "verification_code",
      "ka",
      { code: "482913" },
      "თქვენი დამადასტურებელი კოდია 482913. არავის გაუზიაროთ.",
      "ucs2",
    ],
    [
      "login_code",
      "en",
      { code: "0042" },
      "Your sign-in code is 0042. If you did not request it, ignore this message.",
      "gsm7",
    ],
    [
      "login_code",
      "ka",
      { code: "0042" },
      "შესვლის კოდი: 0042. თუ არ მოგითხოვიათ, გამოტოვეთ ეს შეტყობინება.",
      "ucs2",
    ],
    [
      "password_reset_code",
      "en",
      { code: "12345678", minutes: "15" },
      "Your password reset code is 12345678. It expires in 15 minutes.",
      "gsm7",
    ],
    [
      "password_reset_code",
      "ka",
      { code: "12345678", minutes: "15" },
      "პაროლის აღდგენის კოდი: 12345678. მოქმედებს 15 წუთი.",
      "ucs2",
    ],
  ] as const)("%s/%s", (template, locale, variables, text, encoding) => {
    expect(renderMessage({ template, variables, locale })).toEqual({
      ok: true,
      template,
      text,
      segments: 1,
      encoding,
    });
  });

  it("renders Georgian when no locale is given", () => {
    const result = renderMessage({ template: "login_code", variables: { code: "1234" } });
    expect(result).toMatchObject({
      ok: true,
      encoding: "ucs2",
      text: "შესვლის კოდი: 1234. თუ არ მოგითხოვიათ, გამოტოვეთ ეს შეტყობინება.",
    });
    expect(renderMessage({ template: "login_code", variables: { code: "1234" }, locale: undefined })).toEqual(
      result,
    );
  });

  it("keeps leading zeros", () => {
    expect(
      renderMessage({ template: "verification_code", variables: { code: "0000" }, locale: "en" }),
    ).toMatchObject({
      text: "Your verification code is 0000. Do not share it with anyone.",
    });
  });
});

describe("renderMessage: refusals", () => {
  it.each([
    ["unknown id", "welcome", `Unknown template: \`template\` must be one of: ${VALID_IDS}.`],
    ["wrong case", "Login_Code", `Unknown template: \`template\` must be one of: ${VALID_IDS}.`],
    ["prototype key", "__proto__", `Unknown template: \`template\` must be one of: ${VALID_IDS}.`],
    ["prototype method", "toString", `Unknown template: \`template\` must be one of: ${VALID_IDS}.`],
    ["empty", "", `Unknown template: \`template\` must be one of: ${VALID_IDS}.`],
    ["number", 1, `\`template\` must be a string, one of: ${VALID_IDS}.`],
    ["null", null, `\`template\` must be a string, one of: ${VALID_IDS}.`],
    ["undefined", undefined, `\`template\` must be a string, one of: ${VALID_IDS}.`],
    ["array", ["login_code"], `\`template\` must be a string, one of: ${VALID_IDS}.`],
  ])("template: %s → invalid_template listing the valid ids", (_name, template, message) => {
    expect(renderMessage({ template, variables: { code: "1234" } })).toEqual({
      ok: false,
      code: "invalid_template",
      message,
    });
  });

  it("never repeats an unknown template id", () => {
    const result = renderMessage({ template: "+995555123456", variables: {} });
    expect(result).toMatchObject({ ok: false, code: "invalid_template" });
    if (!result.ok) expect(result.message).not.toContain("555123456");
  });

  it("checks the template before the variables", () => {
    expect(renderMessage({ template: "nope", variables: null })).toMatchObject({ code: "invalid_template" });
  });

  it.each([
    [null, undefined],
    [[], undefined],
    ["code=1234", undefined],
    [{}, "code"],
    [{ code: "1234", extra: "1" }, "extra"],
    [{ code: 1234 }, "code"],
    [{ code: "12" }, "code"],
    [{ code: "123456789" }, "code"],
  ])("variables %j → invalid_variables", (variables, variable) => {
    const result = renderMessage({ template: "login_code", variables, locale: "en" });
    expect(result).toMatchObject({ ok: false, code: "invalid_variables" });
    if (!result.ok) expect(result.variable).toBe(variable);
  });

  it("throws on a locale outside the catalogue: callers validate it first (API: invalid_request)", () => {
    const locale = "fr" as Locale;
    expect(() => renderMessage({ template: "login_code", variables: { code: "1234" }, locale })).toThrow(
      RangeError,
    );
  });
});

// Proof that every built-in template renders to exactly one segment in both locales
// for every valid variable value:
//  1. Every valid value is made of the ASCII digits 0-9 only (the shapes: `code` 4-8,
//     `minutes` 1-3 of them; tested exhaustively in variables tests and below).
//  2. Each ASCII digit is one basic GSM-7 septet and one UTF-16 code unit (checked
//     below for all ten), so digits never change a message's encoding and add exactly
//     one unit each.
//  3. So a rendered message has the encoding of its template text, and its units are
//     the template's fixed units plus the lengths of the values: largest with an
//     8-digit code and 3-digit minutes.
//  4. That largest message fits the single-part limit of its encoding (table below),
//     hence so does every other.
// The rendered results are also checked directly: exhaustively for every minutes value
// and every 4-digit code, over all lengths, and by property over the whole space.
describe("every built-in template is 1 segment for every valid value", () => {
  const cases = TEMPLATE_IDS.flatMap((template) => LOCALES.map((locale) => [template, locale] as const));
  const fixedPart = (template: TemplateId, locale: Locale) =>
    countSegments(TEMPLATES[template].text[locale].replace(/\{[a-z]+\}/g, ""));

  it("each digit 0-9 is one GSM-7 septet and one UTF-16 unit", () => {
    for (const digit of "0123456789") {
      expect(gsm7Septets(digit)).toBe(1);
      expect(digit.length).toBe(1);
    }
  });

  it.each([
    // template, locale, encoding, fixed units, units with the longest values, single-part limit
    ["verification_code", "en", "gsm7", 56, 64, 160],
    ["verification_code", "ka", "ucs2", 48, 56, 70],
    ["login_code", "en", "gsm7", 70, 78, 160],
    ["login_code", "ka", "ucs2", 60, 68, 70],
    ["password_reset_code", "en", "gsm7", 53, 64, 160],
    ["password_reset_code", "ka", "ucs2", 41, 52, 70],
  ] as const)(
    "%s/%s: %s, %i fixed units, %i at most, limit %i",
    (template, locale, encoding, fixed, longest, limit) => {
      expect(fixedPart(template, locale)).toEqual({ segments: 1, encoding, units: fixed });
      expect(SEGMENT_LIMITS[encoding].single).toBe(limit);
      const result = renderMessage({ template, locale, variables: longestValues(template) });
      expect(result).toMatchObject({ ok: true, segments: 1, encoding });
      if (result.ok) expect(countSegments(result.text).units).toBe(longest);
      expect(longest).toBeLessThanOrEqual(limit);
    },
  );

  it.each(cases)("%s/%s: every code length 4-8 with every minutes value 1-999", (template, locale) => {
    const { encoding, units: fixed } = fixedPart(template, locale);
    for (let length = 4; length <= 8; length++) {
      for (let minutes = 1; minutes <= 999; minutes++) {
        const variables = variablesFor(template, "9".repeat(length), String(minutes));
        const result = renderMessage({ template, locale, variables });
        if (!result.ok || result.segments !== 1 || result.encoding !== encoding) {
          expect(result).toMatchObject({ ok: true, segments: 1, encoding });
        }
        const expectedUnits =
          fixed + length + (template === "password_reset_code" ? String(minutes).length : 0);
        if (result.ok) expect(countSegments(result.text).units).toBe(expectedUnits);
        if (template !== "password_reset_code") break;
      }
    }
  });

  it.each(cases)("%s/%s: every 4-digit code", (template, locale) => {
    for (let code = 0; code <= 9999; code++) {
      const variables = variablesFor(template, String(code).padStart(4, "0"), "999");
      const result = renderMessage({ template, locale, variables });
      if (!result.ok || result.segments !== 1) expect(result).toMatchObject({ ok: true, segments: 1 });
    }
  });

  it("any valid code and minutes, any template and locale: 1 segment, units = fixed + value lengths", () => {
    const code = fc
      .array(fc.constantFrom(..."0123456789"), { minLength: 4, maxLength: 8 })
      .map((d) => d.join(""));
    const minutes = fc.integer({ min: 1, max: 999 }).map(String);
    fc.assert(
      fc.property(fc.constantFrom(...cases), code, minutes, ([template, locale], c, m) => {
        const result = renderMessage({ template, locale, variables: variablesFor(template, c, m) });
        const fixed = fixedPart(template, locale);
        expect(result).toMatchObject({ ok: true, segments: 1, encoding: fixed.encoding });
        if (!result.ok) return;
        const extra = c.length + (template === "password_reset_code" ? m.length : 0);
        expect(countSegments(result.text).units).toBe(fixed.units + extra);
      }),
      { numRuns: 2000 },
    );
  });
});

function variablesFor(template: TemplateId, code: string, minutes: string): Record<string, string> {
  return template === "password_reset_code" ? { code, minutes } : { code };
}

function longestValues(template: TemplateId): Record<string, string> {
  return variablesFor(template, "99999999", "999");
}
