import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { countSegments, GSM7_BASIC_TABLE, GSM7_EXTENSION_TABLE } from "./segments.ts";

// A second, independent model of what a carrier does: encode the text for real (septets
// with ESC prefixes, or UTF-16 code units), cut it into parts of the concatenated size,
// and when a cut would separate ESC from its character, or a high surrogate from its
// low surrogate, cut one unit earlier.
const ESC = 0x1b;
const BASIC = [...GSM7_BASIC_TABLE].filter((character) => character.charCodeAt(0) !== ESC);
const EXTENSION = GSM7_EXTENSION_TABLE.map(([, character]) => character);

function carrierParts(text: string): { parts: number; encoding: "gsm7" | "ucs2"; units: number } {
  const septets = encodeGsm7(text);
  if (septets !== undefined) {
    return {
      parts: cutIntoParts(septets, 160, 153, (at) => septets[at - 1] === ESC),
      encoding: "gsm7",
      units: septets.length,
    };
  }
  const units = Array.from({ length: text.length }, (_, index) => text.charCodeAt(index));
  const splitsPair = (at: number) => isHigh(units[at - 1]) && isLow(units[at]);
  return { parts: cutIntoParts(units, 70, 67, splitsPair), encoding: "ucs2", units: units.length };
}

function encodeGsm7(text: string): number[] | undefined {
  const septets: number[] = [];
  for (const character of text) {
    const basic = GSM7_BASIC_TABLE.indexOf(character);
    if (basic !== -1 && basic !== ESC) {
      septets.push(basic);
      continue;
    }
    const extension = GSM7_EXTENSION_TABLE.find(([, candidate]) => candidate === character);
    if (extension === undefined) return undefined;
    septets.push(ESC, extension[0]);
  }
  return septets;
}

function cutIntoParts(
  units: readonly number[],
  single: number,
  concatenated: number,
  cutSplitsCharacter: (at: number) => boolean,
): number {
  if (units.length <= single) return 1;
  let parts = 0;
  let start = 0;
  while (start < units.length) {
    let end = Math.min(start + concatenated, units.length);
    if (end < units.length && cutSplitsCharacter(end)) end--;
    parts++;
    start = end;
  }
  return parts;
}

function isHigh(unit: number | undefined): boolean {
  return unit !== undefined && unit >= 0xd800 && unit <= 0xdbff;
}

function isLow(unit: number | undefined): boolean {
  return unit !== undefined && unit >= 0xdc00 && unit <= 0xdfff;
}

// Texts built from pieces that hit every branch: basic and extension characters,
// Georgian letters, emoji (surrogate pairs) and lone surrogates.
const gsmBasic = fc.constantFrom(...BASIC);
const gsmExtension = fc.constantFrom(...EXTENSION);
const nonGsm = fc.constantFrom("ა", "ქ", "ç", "`", "\u00a0", "😀", "👍🏽", "\ud83d", "\ude00");
const gsmText = (maxLength: number) =>
  fc
    .array(fc.oneof({ arbitrary: gsmBasic, weight: 5 }, { arbitrary: gsmExtension, weight: 2 }), {
      maxLength,
      size: "max",
    })
    .map((characters) => characters.join(""));
const anyText = (maxLength: number) =>
  fc
    .array(
      fc.oneof(
        { arbitrary: gsmBasic, weight: 5 },
        { arbitrary: gsmExtension, weight: 2 },
        { arbitrary: nonGsm, weight: 2 },
        { arbitrary: fc.string({ unit: "binary", maxLength: 3 }), weight: 1 },
      ),
      { maxLength, size: "max" },
    )
    .map((pieces) => pieces.join(""));

const runs = { numRuns: 500 };

// Shrinking a failing text of hundreds of characters can take minutes: cap each
// property (run and shrink) at 20 s, and count an interrupted run as a failure.
// Bounded in time on a loaded machine: an interrupted run keeps the runs it did (a
// counterexample found in them still fails the test).
fc.configureGlobal({ interruptAfterTimeLimit: 20_000, markInterruptAsFailure: false });

/** countSegments says what the carrier model says: parts, encoding and units. */
function expectAgreesWithCarrier(text: string): void {
  const model = carrierParts(text);
  expect(countSegments(text)).toEqual({
    segments: model.parts,
    encoding: model.encoding,
    units: model.units,
  });
}

describe("countSegments properties", () => {
  it("agrees with an encode-and-cut model of the carrier on GSM-7 texts", () => {
    fc.assert(
      fc.property(gsmText(500), (text) => {
        expectAgreesWithCarrier(text);
      }),
      runs,
    );
  });

  it("agrees with an encode-and-cut model of the carrier on any text", () => {
    fc.assert(
      fc.property(anyText(250), (text) => {
        expectAgreesWithCarrier(text);
      }),
      runs,
    );
  });

  it("agrees with the model on texts dense with 2-unit characters, sized to straddle part limits", () => {
    // Random characters padded to a total just around two full parts, so the cut at
    // 153 septets / 67 units often falls on an extension character or surrogate pair.
    const padTo = (pieces: string[], unitsOf: (text: string) => number, pad: string, target: number) => {
      let text = pieces.join("");
      while (unitsOf(text) < target) text += pad;
      return text;
    };
    const septetsOf = (text: string) => countSegments(text).units;
    const dense = fc.oneof(
      fc
        .tuple(
          fc.array(fc.oneof(gsmBasic, gsmExtension), { minLength: 60, maxLength: 160, size: "max" }),
          fc.integer({ min: 296, max: 316 }),
        )
        .map(([pieces, target]) => padTo(pieces, septetsOf, "a", target)),
      fc
        .tuple(
          fc.array(fc.constantFrom("ა", "😀", "👍🏽"), { minLength: 20, maxLength: 70, size: "max" }),
          fc.integer({ min: 128, max: 140 }),
        )
        .map(([pieces, target]) => padTo(pieces, (text) => text.length, "ა", target)),
    );
    fc.assert(
      fc.property(dense, (text) => {
        expectAgreesWithCarrier(text);
      }),
      { numRuns: 1000 },
    );
  });

  it("is monotone in length: appending anything never lowers the count", () => {
    fc.assert(
      fc.property(anyText(250), anyText(20), (text, more) => {
        expect(countSegments(text + more).segments).toBeGreaterThanOrEqual(countSegments(text).segments);
      }),
      runs,
    );
  });

  it("is monotone on prefixes: every prefix costs at most the whole", () => {
    fc.assert(
      fc.property(anyText(250), fc.nat(), (text, cut) => {
        const prefix = text.slice(0, text.length === 0 ? 0 : cut % (text.length + 1));
        expect(countSegments(prefix).segments).toBeLessThanOrEqual(countSegments(text).segments);
      }),
      runs,
    );
  });

  it("GSM-7 boundaries 160/161 and 306/307 are exact for any basic characters", () => {
    const exactly = (length: number) =>
      fc.array(gsmBasic, { minLength: length, maxLength: length }).map((characters) => characters.join(""));
    fc.assert(
      fc.property(exactly(160), exactly(161), exactly(306), exactly(307), (s160, s161, s306, s307) => {
        expect(countSegments(s160)).toEqual({ segments: 1, encoding: "gsm7", units: 160 });
        expect(countSegments(s161)).toEqual({ segments: 2, encoding: "gsm7", units: 161 });
        expect(countSegments(s306)).toEqual({ segments: 2, encoding: "gsm7", units: 306 });
        expect(countSegments(s307)).toEqual({ segments: 3, encoding: "gsm7", units: 307 });
      }),
      { numRuns: 200 },
    );
  });

  it("UCS-2 boundaries 70/71 and 134/135 are exact for any BMP text with one non-GSM character", () => {
    const bmp = fc.oneof(gsmBasic, gsmExtension, fc.constantFrom("ა", "ბ", "ç", "`"));
    const exactly = (length: number) =>
      fc
        .tuple(fc.array(bmp, { minLength: length - 1, maxLength: length - 1 }), fc.nat({ max: length - 1 }))
        .map(([characters, at]) => {
          characters.splice(at, 0, "ა");
          return characters.join("");
        });
    fc.assert(
      fc.property(exactly(70), exactly(71), exactly(134), exactly(135), (s70, s71, s134, s135) => {
        expect(countSegments(s70)).toEqual({ segments: 1, encoding: "ucs2", units: 70 });
        expect(countSegments(s71)).toEqual({ segments: 2, encoding: "ucs2", units: 71 });
        expect(countSegments(s134)).toEqual({ segments: 2, encoding: "ucs2", units: 134 });
        expect(countSegments(s135)).toEqual({ segments: 3, encoding: "ucs2", units: 135 });
      }),
      { numRuns: 200 },
    );
  });

  it("an extension character at a part boundary moves whole to the next part", () => {
    fc.assert(
      fc.property(gsmExtension, fc.integer({ min: 8, max: 300 }), (extension, after) => {
        // 152 basic septets, then the extension character would straddle septets 153/154.
        const text = "a".repeat(152) + extension + "a".repeat(after);
        const expected = 1 + Math.ceil((2 + after) / 153);
        expect(countSegments(text)).toEqual({ segments: expected, encoding: "gsm7", units: 154 + after });
      }),
    );
  });

  it("a surrogate pair at a part boundary moves whole to the next part", () => {
    fc.assert(
      fc.property(fc.constantFrom("😀", "𝄞", "🇬"), fc.integer({ min: 3, max: 300 }), (pair, after) => {
        const text = "ა".repeat(66) + pair + "ა".repeat(after);
        const expected = 1 + Math.ceil((2 + after) / 67);
        expect(countSegments(text)).toEqual({ segments: expected, encoding: "ucs2", units: 68 + after });
      }),
    );
  });
});
