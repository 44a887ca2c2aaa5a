import { describe, expect, it } from "vitest";
import { checkVariables, screenValue, type VariableRule, validateVariables } from "./variables.ts";

function failure(result: ReturnType<typeof validateVariables>) {
  if (result.ok) throw new Error("expected a failure");
  return result;
}

describe("validateVariables: accepted values", () => {
  it.each([
    ["verification_code", { code: "0000" }],
    ["verification_code", { code: "12345678" }],
    ["login_code", { code: "004821" }],
    ["password_reset_code", { code: "4821", minutes: "1" }],
    ["password_reset_code", { code: "99999999", minutes: "999" }],
    ["password_reset_code", { minutes: "15", code: "123456" }],
  ] as const)("%s %j", (template, variables) => {
    expect(validateVariables(template, variables)).toEqual({ ok: true, values: variables });
  });

  it("accepts an object without a prototype, as some JSON parsers build", () => {
    const variables = Object.assign(Object.create(null), { code: "1234" });
    expect(validateVariables("login_code", variables)).toEqual({ ok: true, values: { code: "1234" } });
  });
});

describe("validateVariables: `variables` must be a plain object", () => {
  it.each([
    ["null", null, "not null"],
    ["undefined", undefined, "not a non-JSON value"],
    ["an array", ["1234"], "not an array"],
    ["a string", "1234", "not a string"],
    ["a number", 1234, "not a number"],
    ["a boolean", true, "not a boolean"],
    ["a Map", new Map([["code", "1234"]]), "not an object"],
    ["a Date", new Date(0), "not an object"],
  ])("%s is refused", (_name, variables, wording) => {
    const result = failure(validateVariables("login_code", variables));
    expect(result.code).toBe("invalid_variables");
    expect(result.message).toContain("`variables` must be a JSON object");
    expect(result.message).toContain(wording);
    expect(result.message).toContain('{"code":"482913"}');
    expect(result.variable).toBeUndefined();
  });
});

describe("validateVariables: each rule names the variable", () => {
  it.each([
    // missing
    ["missing code", "login_code", {}, "code", "is missing"],
    ["missing minutes", "password_reset_code", { code: "1234" }, "minutes", "is missing"],
    ["undefined counts as missing", "login_code", { code: undefined }, "code", "is missing"],
    // unexpected
    ["extra variable", "login_code", { code: "1234", minutes: "5" }, "minutes", "is not taken by template"],
    ["extra name", "verification_code", { code: "1234", name: "Nino" }, "name", "is not taken by template"],
    [
      "__proto__ key",
      "login_code",
      JSON.parse('{"code":"1234","__proto__":"x"}'),
      "__proto__",
      "is not taken",
    ],
    // not a JSON string
    ["number code", "login_code", { code: 1234 }, "code", "must be a JSON string"],
    ["null code", "login_code", { code: null }, "code", "must be a JSON string"],
    ["array code", "login_code", { code: ["1234"] }, "code", "must be a JSON string"],
    ["object code", "login_code", { code: { value: "1234" } }, "code", "must be a JSON string"],
    ["boolean minutes", "password_reset_code", { code: "1234", minutes: true }, "minutes", "JSON string"],
    ["number minutes", "password_reset_code", { code: "1234", minutes: 15 }, "minutes", "JSON string"],
  ] as const)("%s", (_name, template, variables, variable, wording) => {
    const result = failure(validateVariables(template, variables));
    expect(result).toMatchObject({ ok: false, code: "invalid_variables", variable });
    expect(result.message).toContain(`\`${variable}\``);
    expect(result.message).toContain(wording);
  });

  it.each([
    ["", "empty"],
    ["123", "3 digits"],
    ["123456789", "9 digits"],
    ["12 34", "space"],
    [" 1234", "leading space"],
    ["1234\n", "trailing newline"],
    ["+1234", "sign"],
    ["-1234", "minus sign"],
    ["12.34", "dot"],
    ["1e5", "exponent"],
    ["0x1F", "hex"],
    ["abcd", "letters"],
    ["١٢٣٤", "Arabic-Indic digits"],
    ["１２３４", "full-width digits"],
    ["১২৩৪", "Bengali digits"],
    ["12\u200b34", "zero-width space"],
  ])("code %j (%s) has the wrong shape", (code) => {
    const result = failure(validateVariables("verification_code", { code }));
    expect(result).toMatchObject({ code: "invalid_variables", variable: "code" });
    expect(result.message).toBe(
      'Variable `code` must be 4 to 8 digits 0-9 and nothing else (no spaces, signs or other characters), e.g. "482913".',
    );
  });

  it.each([
    ["", "empty"],
    ["0", "zero"],
    ["00", "zeros"],
    ["05", "leading zero"],
    ["010", "leading zero, 3 digits"],
    ["1000", "above 999"],
    ["-5", "negative"],
    ["+5", "sign"],
    ["1.5", "fraction"],
    ["15.0", "decimal point"],
    ["1e2", "exponent"],
    [" 15", "space"],
    ["٥", "Arabic-Indic digit"],
    ["fifteen", "words"],
  ])("minutes %j (%s) has the wrong shape", (minutes) => {
    const result = failure(validateVariables("password_reset_code", { code: "1234", minutes }));
    expect(result).toMatchObject({ code: "invalid_variables", variable: "minutes" });
    expect(result.message).toBe(
      'Variable `minutes` must be a whole number from 1 to 999 written without leading zeros, e.g. "15".',
    );
  });
});

describe("validateVariables: check order", () => {
  it("missing comes before unexpected", () => {
    expect(failure(validateVariables("password_reset_code", { code: "1234", extra: "x" })).variable).toBe(
      "minutes",
    );
  });

  it("unexpected comes before not-a-string", () => {
    expect(failure(validateVariables("login_code", { code: 1234, extra: "x" })).variable).toBe("extra");
  });

  it("not-a-string (of any variable) comes before shape", () => {
    expect(failure(validateVariables("password_reset_code", { code: "x", minutes: 5 })).variable).toBe(
      "minutes",
    );
  });

  it("shape (of any variable) comes before the screen", () => {
    const result = failure(validateVariables("password_reset_code", { code: "123456789", minutes: "0" }));
    expect(result.variable).toBe("code");
    expect(result.message).toContain("must be 4 to 8 digits");
  });

  it("within one check, variables are taken in catalogue order (code, then minutes)", () => {
    expect(failure(validateVariables("password_reset_code", {})).variable).toBe("code");
    expect(failure(validateVariables("password_reset_code", { minutes: 1, code: 1 })).variable).toBe("code");
    expect(failure(validateVariables("password_reset_code", { minutes: "0", code: "1" })).variable).toBe(
      "code",
    );
  });

  it("unexpected variables are reported in the object's key order", () => {
    expect(failure(validateVariables("login_code", { code: "1234", zeta: "1", alpha: "2" })).variable).toBe(
      "zeta",
    );
  });
});

describe("error messages never repeat the value", () => {
  const phone = "+995555123456";
  it.each([
    ["wrong shape", { code: phone }],
    ["not a string", { code: 995555123456 }],
    ["variables is a string", phone],
    ["unexpected key that is itself a phone number", { code: "1234", [phone]: "1" }],
    ["unexpected key that looks like a link", { code: "1234", "http://evil.example": "1" }],
    ["unexpected key with a phone number in it", { code: "1234", call_995555123456: "1" }],
    ["unexpected key that is too long", { code: "1234", ["a".repeat(41)]: "1" }],
    ["unexpected key with spaces", { code: "1234", "my secret": "1" }],
  ])("%s", (_name, variables) => {
    const result = failure(validateVariables("login_code", variables));
    expect(result.message).not.toContain("555123456");
    expect(result.message).not.toContain("995555");
    expect(result.message).not.toContain("evil");
    expect(result.message).not.toContain("secret");
    expect(result.message).not.toContain("a".repeat(41));
  });

  it("an unexpected key unsafe to repeat is described, not named, and `variable` is left out", () => {
    const result = failure(validateVariables("login_code", { code: "1234", "+995555123456": "1" }));
    expect(result.variable).toBeUndefined();
    expect(result.message).toBe(
      "`variables` has a variable that template `login_code` does not take (its name is not repeated here); send only code.",
    );
  });
});

describe("screenValue: the link/phone screen", () => {
  it.each([
    // link markers, any case
    ["http", "link"],
    ["HTTP", "link"],
    ["hTtPs", "link"],
    ["see http", "link"],
    ["www.", "link"],
    ["WWW.", "link"],
    ["://", "link"],
    ["ftp://x", "link"],
    ["mailto://x", "link"],
    // look-alikes folded before matching
    ["ｈｔｔｐ", "link"],
    ["h\u200bttp", "link"],
    ["ht\u00adtp", "link"],
    ["h\u0301ttp", "link"],
    ["ｗｗｗ．", "link"],
    ["www。", "link"],
    ["：／／", "link"],
    // web addresses
    ["example.com", "web_address"],
    ["EXAMPLE.COM", "web_address"],
    ["bit.ly", "web_address"],
    ["x.ge", "web_address"],
    ["sub.domain.co.uk/path", "web_address"],
    ["nino@example.ge", "web_address"],
    ["пример.рф", "web_address"],
    ["საიტი.გე", "web_address"],
    ["xn--p1ai.xn--p1ai", "web_address"],
    ["example．com", "web_address"],
    ["example。com", "web_address"],
    ["example\u200b.com", "web_address"],
    ["10.0.0.1", "web_address"],
    ["1.2.3.4", "web_address"],
    // phone numbers: nine or more digits anywhere, separators ignored
    ["123456789", "phone_number"],
    ["+995555123456", "phone_number"],
    ["555 12 34 56", "phone_number"],
    ["(555) 123-456", "phone_number"],
    ["555.123.456", "phone_number"],
    ["5-5-5-1-2-3-4-5-6", "phone_number"],
    ["call 5551 then 23456", "phone_number"],
    ["１２３４５６７８９", "phone_number"],
    ["١٢٣٤٥٦٧٨٩", "phone_number"],
    ["①②③④⑤⑥⑦⑧⑨", "phone_number"],
    ["¹²³⁴⁵⁶⁷⁸⁹", "phone_number"],
  ])("%j is refused as %s", (value, finding) => {
    expect(screenValue(value)).toBe(finding);
  });

  it.each([
    "1234",
    "12345678",
    "999",
    "1",
    "",
    "Nino",
    "ნინო",
    "12.5",
    "v1.2",
    "e.g",
    "J. Smith",
    "1.2.3",
    "ht tp",
    "12345678 minutes",
    "Sat. 10:00",
  ])("%j passes", (value) => {
    expect(screenValue(value)).toBeUndefined();
  });
});

describe("the screen covers every variable, not only the ones whose shape forbids links", () => {
  // A made-up future variable whose shape allows almost anything.
  const name: VariableRule = {
    accepts: (value) => value.length >= 1 && value.length <= 60,
    requirement: "1 to 60 characters",
    example: "Nino",
  };
  const check = (value: string) =>
    checkVariables({ template: "greeting", rules: [["name", name]], variables: { name: value } });

  it("accepts a harmless value", () => {
    expect(check("Nino Beridze")).toEqual({ ok: true, values: { name: "Nino Beridze" } });
  });

  it.each([
    ["visit http now", "a link"],
    ["go to www.shop", "a link"],
    ["shop.ge", "a web address"],
    ["call +995 555 12 34 56", "a phone number"],
  ])("%j is refused", (value, wording) => {
    const result = check(value);
    expect(result).toMatchObject({ ok: false, code: "invalid_variables", variable: "name" });
    if (result.ok) return;
    expect(result.message).toContain(`Variable \`name\` looks like ${wording}`);
    expect(result.message).not.toContain(value);
  });
});
