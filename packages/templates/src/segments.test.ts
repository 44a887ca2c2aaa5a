import { describe, expect, it } from "vitest";
import { countSegments, GSM7_BASIC_TABLE, GSM7_EXTENSION_TABLE, gsm7Septets } from "./segments.ts";

// The GSM 03.38 default alphabet as Unicode code points, septet 0x00 to 0x7F, entered
// a second time by hand from the 3GPP TS 23.038 table (and the Unicode consortium's
// GSM0338 mapping) so that a slip in either copy fails. null = 0x1B, the escape.
// biome-ignore format: one row of the 3GPP table per line
const GSM7_BASIC_CODE_POINTS: readonly (number | null)[] = [
  0x0040, 0x00a3, 0x0024, 0x00a5, 0x00e8, 0x00e9, 0x00f9, 0x00ec, 0x00f2, 0x00c7, 0x000a, 0x00d8, 0x00f8, 0x000d, 0x00c5, 0x00e5,
  0x0394, 0x005f, 0x03a6, 0x0393, 0x039b, 0x03a9, 0x03a0, 0x03a8, 0x03a3, 0x0398, 0x039e, null, 0x00c6, 0x00e6, 0x00df, 0x00c9,
  0x0020, 0x0021, 0x0022, 0x0023, 0x00a4, 0x0025, 0x0026, 0x0027, 0x0028, 0x0029, 0x002a, 0x002b, 0x002c, 0x002d, 0x002e, 0x002f,
  0x0030, 0x0031, 0x0032, 0x0033, 0x0034, 0x0035, 0x0036, 0x0037, 0x0038, 0x0039, 0x003a, 0x003b, 0x003c, 0x003d, 0x003e, 0x003f,
  0x00a1, 0x0041, 0x0042, 0x0043, 0x0044, 0x0045, 0x0046, 0x0047, 0x0048, 0x0049, 0x004a, 0x004b, 0x004c, 0x004d, 0x004e, 0x004f,
  0x0050, 0x0051, 0x0052, 0x0053, 0x0054, 0x0055, 0x0056, 0x0057, 0x0058, 0x0059, 0x005a, 0x00c4, 0x00d6, 0x00d1, 0x00dc, 0x00a7,
  0x00bf, 0x0061, 0x0062, 0x0063, 0x0064, 0x0065, 0x0066, 0x0067, 0x0068, 0x0069, 0x006a, 0x006b, 0x006c, 0x006d, 0x006e, 0x006f,
  0x0070, 0x0071, 0x0072, 0x0073, 0x0074, 0x0075, 0x0076, 0x0077, 0x0078, 0x0079, 0x007a, 0x00e4, 0x00f6, 0x00f1, 0x00fc, 0x00e0,
];

// Extension table (after ESC): form feed, ^ { } \ [ ~ ] | €.
const GSM7_EXTENSION_CODE_POINTS: readonly (readonly [number, number])[] = [
  [0x0a, 0x000c],
  [0x14, 0x005e],
  [0x28, 0x007b],
  [0x29, 0x007d],
  [0x2f, 0x005c],
  [0x3c, 0x005b],
  [0x3d, 0x007e],
  [0x3e, 0x005d],
  [0x40, 0x007c],
  [0x65, 0x20ac],
];

const GEORGIAN = "ა"; // U+10D0, outside GSM-7: 1 UTF-16 unit
const EMOJI = "😀"; // U+1F600: a surrogate pair, 2 UTF-16 units

describe("GSM 03.38 tables", () => {
  it("the basic table matches 3GPP TS 23.038 septet for septet", () => {
    expect(GSM7_BASIC_TABLE).toHaveLength(128);
    GSM7_BASIC_CODE_POINTS.forEach((codePoint, septet) => {
      if (codePoint === null) return;
      expect(GSM7_BASIC_TABLE.charCodeAt(septet), `septet 0x${septet.toString(16)}`).toBe(codePoint);
    });
  });

  it("the extension table matches 3GPP TS 23.038", () => {
    expect(GSM7_EXTENSION_TABLE.map(([septet, character]) => [septet, character.charCodeAt(0)])).toEqual(
      GSM7_EXTENSION_CODE_POINTS,
    );
  });

  it("every UTF-16 code unit is 1 septet, 2 septets or not GSM-7, exactly as the tables say", () => {
    const basic = new Set(GSM7_BASIC_CODE_POINTS.filter((codePoint) => codePoint !== null));
    const extension = new Set(GSM7_EXTENSION_CODE_POINTS.map(([, codePoint]) => codePoint));
    expect(basic.size).toBe(127);
    expect(extension.size).toBe(10);
    for (let unit = 0; unit <= 0xffff; unit++) {
      const expected = basic.has(unit) ? 1 : extension.has(unit) ? 2 : 0;
      const actual = gsm7Septets(String.fromCharCode(unit));
      if (actual !== expected) expect(actual, `U+${unit.toString(16).padStart(4, "0")}`).toBe(expected);
    }
  });

  it.each([..."£¥èéùìòÇØøÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ¤¡ÄÖÑÜ§¿äöñüà@$!\"#%&'()*+,-./:;<=>? ", "\n", "\r"])(
    "%j is in the basic table: 1 septet",
    (character) => {
      expect(gsm7Septets(character)).toBe(1);
      expect(countSegments(character)).toEqual({ segments: 1, encoding: "gsm7", units: 1 });
    },
  );

  it.each(["\f", "^", "{", "}", "\\", "[", "~", "]", "|", "€"])(
    "%j is in the extension table: 2 septets",
    (character) => {
      expect(gsm7Septets(character)).toBe(2);
      expect(countSegments(character)).toEqual({ segments: 1, encoding: "gsm7", units: 2 });
    },
  );

  it.each([
    ["backtick", "`"],
    ["tab", "\t"],
    ["ç (only capital Ç is in the table)", "ç"],
    ["Ω as OHM SIGN U+2126 (the table has Greek U+03A9)", "\u2126"],
    ["non-breaking space", "\u00a0"],
    ["curly apostrophe", "\u2019"],
    ["Georgian letter", GEORGIAN],
    ["emoji", EMOJI],
    ["NUL", "\u0000"],
    ["ESC itself", "\u001b"],
  ])("%s is not GSM-7 and switches the message to UCS-2", (_name, character) => {
    expect(gsm7Septets(character)).toBe(0);
    expect(countSegments(`Hello ${character}`).encoding).toBe("ucs2");
  });
});

describe("countSegments: GSM-7", () => {
  it.each([
    ["empty text: billed as one part", 0, 1],
    ["1 septet", 1, 1],
    ["160 septets: one part", 160, 1],
    ["161 septets: two parts of 153 + 8", 161, 2],
    ["306 septets: two full parts of 153", 306, 2],
    ["307 septets: three parts", 307, 3],
    ["459 septets: three full parts", 459, 3],
    ["460 septets: four parts", 460, 4],
  ])("%s", (_name, length, segments) => {
    expect(countSegments("a".repeat(length))).toEqual({ segments, encoding: "gsm7", units: length });
  });

  it("counts an extension character as two septets", () => {
    expect(countSegments("{}").units).toBe(4);
    expect(countSegments(`${"a".repeat(158)}€`)).toEqual({ segments: 1, encoding: "gsm7", units: 160 });
    expect(countSegments(`${"a".repeat(159)}€`)).toEqual({ segments: 2, encoding: "gsm7", units: 161 });
    expect(countSegments("€".repeat(80))).toEqual({ segments: 1, encoding: "gsm7", units: 160 });
    expect(countSegments("€".repeat(81))).toEqual({ segments: 2, encoding: "gsm7", units: 162 });
  });

  it("never splits an extension character across parts", () => {
    // 152 + € would need septets 153–154 of part one: it moves whole to part two.
    const septets306 = `${"a".repeat(152)}€${"a".repeat(152)}`;
    expect(countSegments(septets306)).toEqual({ segments: 3, encoding: "gsm7", units: 306 });
    // 151 + € fills part one to exactly 153.
    const septets305 = `${"a".repeat(151)}€${"a".repeat(152)}`;
    expect(countSegments(septets305)).toEqual({ segments: 2, encoding: "gsm7", units: 305 });
    // 76 € per part (152 septets), never 76.5.
    expect(countSegments("€".repeat(152))).toEqual({ segments: 2, encoding: "gsm7", units: 304 });
    expect(countSegments("€".repeat(153))).toEqual({ segments: 3, encoding: "gsm7", units: 306 });
  });

  it("a message that fits one part is never split, extension characters or not", () => {
    expect(countSegments(`${"a".repeat(152)}€${"a".repeat(6)}`)).toEqual({
      segments: 1,
      encoding: "gsm7",
      units: 160,
    });
  });
});

describe("countSegments: UCS-2", () => {
  it.each([
    ["70 units: one part", 70, 1],
    ["71 units: two parts", 71, 2],
    ["134 units: two full parts of 67", 134, 2],
    ["135 units: three parts", 135, 3],
    ["201 units: three full parts", 201, 3],
    ["202 units: four parts", 202, 4],
  ])("%s", (_name, length, segments) => {
    expect(countSegments(GEORGIAN.repeat(length))).toEqual({ segments, encoding: "ucs2", units: length });
  });

  it("one character outside GSM-7 switches the whole message, counting every character as a unit", () => {
    // 69 GSM characters + one Georgian letter = 70 units: still one part, as UCS-2.
    expect(countSegments("a".repeat(69) + GEORGIAN)).toEqual({ segments: 1, encoding: "ucs2", units: 70 });
    // Extension characters are one unit each in UCS-2, not two.
    expect(countSegments("€".repeat(69) + GEORGIAN)).toEqual({ segments: 1, encoding: "ucs2", units: 70 });
    expect(countSegments("a".repeat(70) + GEORGIAN)).toEqual({ segments: 2, encoding: "ucs2", units: 71 });
  });

  it("counts an emoji as two units", () => {
    expect(countSegments(EMOJI)).toEqual({ segments: 1, encoding: "ucs2", units: 2 });
    expect(countSegments(EMOJI.repeat(35))).toEqual({ segments: 1, encoding: "ucs2", units: 70 });
    expect(countSegments(EMOJI.repeat(36))).toEqual({ segments: 2, encoding: "ucs2", units: 72 });
  });

  it("never splits a surrogate pair across parts", () => {
    // 66 + emoji would need units 67–68 of part one: it moves whole to part two.
    const units134 = GEORGIAN.repeat(66) + EMOJI + GEORGIAN.repeat(66);
    expect(countSegments(units134)).toEqual({ segments: 3, encoding: "ucs2", units: 134 });
    // 65 + emoji fills part one to exactly 67.
    const units133 = GEORGIAN.repeat(65) + EMOJI + GEORGIAN.repeat(66);
    expect(countSegments(units133)).toEqual({ segments: 2, encoding: "ucs2", units: 133 });
    // 33 emoji per part (66 units), never 33.5.
    expect(countSegments(EMOJI.repeat(66))).toEqual({ segments: 2, encoding: "ucs2", units: 132 });
    expect(countSegments(EMOJI.repeat(67))).toEqual({ segments: 3, encoding: "ucs2", units: 134 });
  });

  it("counts a lone surrogate as one unit", () => {
    expect(countSegments("\ud83d")).toEqual({ segments: 1, encoding: "ucs2", units: 1 });
    expect(countSegments(`${GEORGIAN.repeat(66)}\ude00${GEORGIAN.repeat(67)}`).segments).toBe(2);
  });
});
