import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TEMPLATE_IDS } from "./catalogue.ts";
import { checkVariables, screenValue, type VariableRule, validateVariables } from "./variables.ts";

const digit = fc.constantFrom(..."0123456789");
const digits = (minLength: number, maxLength: number) =>
  fc.array(digit, { minLength, maxLength }).map((characters) => characters.join(""));

/** Every valid `code`: 4 to 8 ASCII digits. */
const validCode = digits(4, 8);
/** Every valid `minutes`: 1 to 999, no leading zeros. */
const validMinutes = fc.integer({ min: 1, max: 999 }).map(String);

const anyCase = (word: string) =>
  fc
    .array(fc.boolean(), { minLength: word.length, maxLength: word.length })
    .map((upper) =>
      [...word].map((character, index) => (upper[index] ? character.toUpperCase() : character)).join(""),
    );
const filler = fc.string({ unit: "grapheme", maxLength: 12 });
const around = (core: fc.Arbitrary<string>) =>
  fc.tuple(filler, core, filler).map(([before, middle, after]) => before + middle + after);

/** Anything containing http, www. or :// in any case. */
const linkLike = around(fc.oneof(anyCase("http"), anyCase("www."), fc.constant("://")));
/** name.tld web addresses. */
const label = fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,10}$/);
const tld = fc.stringMatching(/^[a-z]{2,6}$/);
const webAddressLike = around(fc.tuple(label, tld).map(([name, top]) => `${name}.${top}`));
/** Nine or more digits with any separators between them. */
const separator = fc.constantFrom("", "", " ", ".", "-", "(", ")", "/", "+", " - ");
const phoneLike = around(
  fc
    .array(fc.tuple(digit, separator), { minLength: 9, maxLength: 15 })
    .map((pairs) => pairs.map(([d, s]) => d + s).join("")),
);
const linkOrPhoneLike = fc.oneof(linkLike, webAddressLike, phoneLike);

/** A permissive future variable: the screen alone must keep links and phones out. */
const freeText: VariableRule = { accepts: () => true, requirement: "any text", example: "Nino" };

describe("variable validators, properties", () => {
  it("never reject a valid code in any template", () => {
    fc.assert(
      fc.property(validCode, validMinutes, (code, minutes) => {
        expect(validateVariables("verification_code", { code }).ok).toBe(true);
        expect(validateVariables("login_code", { code }).ok).toBe(true);
        expect(validateVariables("password_reset_code", { code, minutes }).ok).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it("accept exactly the spec's shapes: whatever passes is 4-8 ASCII digits / 1-999 without leading zeros", () => {
    const candidate = fc.oneof(
      digits(0, 10),
      fc.string({ unit: "grapheme", maxLength: 10 }),
      fc.string({ unit: "binary", maxLength: 10 }),
      fc.integer({ min: -2000, max: 2000 }).map(String),
      fc.double().map(String),
    );
    fc.assert(
      fc.property(candidate, candidate, (code, minutes) => {
        const result = validateVariables("password_reset_code", { code, minutes });
        const codeIsValid = /^[0-9]{4,8}$/.test(code);
        const minutesIsValid =
          /^[0-9]+$/.test(minutes) &&
          String(Number(minutes)) === minutes &&
          Number(minutes) >= 1 &&
          Number(minutes) <= 999;
        expect(result.ok).toBe(codeIsValid && minutesIsValid);
      }),
      { numRuns: 2000 },
    );
  });

  it("never accept a link- or phone-like value, in any template, in any variable", () => {
    fc.assert(
      fc.property(
        linkOrPhoneLike,
        fc.constantFrom(...TEMPLATE_IDS),
        validCode,
        validMinutes,
        (value, template, code, minutes) => {
          expect(validateVariables(template, { code: value }).ok).toBe(false);
          expect(validateVariables("password_reset_code", { code, minutes: value }).ok).toBe(false);
          expect(validateVariables(template, { code, minutes, extra: value }).ok).toBe(false);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("the screen refuses every link- or phone-like value, even where the shape allows any text", () => {
    fc.assert(
      fc.property(linkOrPhoneLike, (value) => {
        expect(screenValue(value)).toBeDefined();
        const result = checkVariables({
          template: "future",
          rules: [["note", freeText]],
          variables: { note: value },
        });
        expect(result).toMatchObject({ ok: false, code: "invalid_variables", variable: "note" });
      }),
      { numRuns: 1000 },
    );
  });

  it("the screen passes every valid code and minutes value", () => {
    fc.assert(
      fc.property(fc.oneof(validCode, validMinutes), (value) => {
        expect(screenValue(value)).toBeUndefined();
      }),
      { numRuns: 1000 },
    );
  });

  it("error messages never contain the offending value", () => {
    const marked = fc.string({ unit: "grapheme", maxLength: 20 }).map((text) => `Zq#7${text}`);
    const wrongType = fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string()));
    fc.assert(
      fc.property(marked, wrongType, fc.constantFrom(...TEMPLATE_IDS), (value, notString, template) => {
        for (const variables of [
          { code: value },
          { code: notString },
          { code: "1234", [value]: "1" },
          value,
        ]) {
          const result = validateVariables(template, variables);
          expect(result.ok).toBe(false);
          if (result.ok) return;
          expect(result.message).not.toContain("Zq#7");
        }
      }),
      { numRuns: 500 },
    );
  });
});
