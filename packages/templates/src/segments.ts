// SMS segment counting as a carrier does it (3GPP TS 23.038 and TS 23.040).
//
// - GSM-7: every character is in the GSM 03.38 default alphabet (1 septet) or its
//   extension table (2 septets: ESC + the character). One part holds 160 septets; a
//   concatenated message spends 7 septets per part on the user data header, leaving
//   153, and an extension character is never split across two parts.
// - UCS-2: any other character switches the whole message to UCS-2, counted in UTF-16
//   code units (an emoji is a surrogate pair: 2 units). One part holds 70 units; a
//   concatenated part 67, and a surrogate pair is never split across two parts.
// - The empty text is 1 segment: a carrier bills an empty SMS as one part.

export type MessageEncoding = "gsm7" | "ucs2";

export type SegmentCount = {
  segments: number;
  encoding: MessageEncoding;
  /** Septets for `gsm7` (an extension character counts 2), UTF-16 code units for `ucs2`. */
  units: number;
};

export const SEGMENT_LIMITS = {
  gsm7: { single: 160, concatenated: 153 },
  ucs2: { single: 70, concatenated: 67 },
} as const;

/**
 * The GSM 03.38 default alphabet, indexed by septet value 0x00–0x7F (one row of 16 per
 * line). 0x1B is the escape to the extension table, not a character: it is skipped.
 */
export const GSM7_BASIC_TABLE =
  "@£$¥èéùìòÇ\nØø\rÅå" +
  "Δ_ΦΓΛΩΠΨΣΘΞ\u001BÆæßÉ" +
  " !\"#¤%&'()*+,-./" +
  "0123456789:;<=>?" +
  "¡ABCDEFGHIJKLMNO" +
  "PQRSTUVWXYZÄÖÑÜ§" +
  "¿abcdefghijklmno" +
  "pqrstuvwxyzäöñüà";

const GSM7_ESCAPE = 0x1b;

/** The GSM 03.38 extension table: septet value after ESC, and the character. */
export const GSM7_EXTENSION_TABLE: readonly (readonly [septet: number, character: string])[] = [
  [0x0a, "\f"],
  [0x14, "^"],
  [0x28, "{"],
  [0x29, "}"],
  [0x2f, "\\"],
  [0x3c, "["],
  [0x3d, "~"],
  [0x3e, "]"],
  [0x40, "|"],
  [0x65, "€"],
];

/** Septets per UTF-16 code unit: 0 = not in GSM-7, 1 = basic table, 2 = extension table. */
const SEPTETS_BY_CODE_UNIT = buildSeptetLookup();

function buildSeptetLookup(): Uint8Array {
  const lookup = new Uint8Array(0x10000);
  for (let septet = 0; septet < GSM7_BASIC_TABLE.length; septet++) {
    if (septet === GSM7_ESCAPE) continue;
    lookup[GSM7_BASIC_TABLE.charCodeAt(septet)] = 1;
  }
  for (const [, character] of GSM7_EXTENSION_TABLE) lookup[character.charCodeAt(0)] = 2;
  return lookup;
}

/** Septets one character takes in GSM-7 (1 or 2), or 0 when it is not in GSM-7 at all. */
export function gsm7Septets(character: string): 0 | 1 | 2 {
  if (character.length !== 1) return 0;
  return (SEPTETS_BY_CODE_UNIT[character.charCodeAt(0)] ?? 0) as 0 | 1 | 2;
}

export function countSegments(text: string): SegmentCount {
  const septets = countGsm7Septets(text);
  if (septets === undefined) return countUcs2Segments(text);
  return countGsm7Segments(text, septets);
}

/** Total septets, or undefined as soon as one character is outside GSM-7. */
function countGsm7Septets(text: string): number | undefined {
  let septets = 0;
  for (let i = 0; i < text.length; i++) {
    const size = SEPTETS_BY_CODE_UNIT[text.charCodeAt(i)] ?? 0;
    if (size === 0) return undefined;
    septets += size;
  }
  return septets;
}

function countGsm7Segments(text: string, septets: number): SegmentCount {
  const { single, concatenated } = SEGMENT_LIMITS.gsm7;
  if (septets <= single) return { segments: 1, encoding: "gsm7", units: septets };
  let segments = 1;
  let used = 0;
  for (let i = 0; i < text.length; i++) {
    const size = SEPTETS_BY_CODE_UNIT[text.charCodeAt(i)] ?? 0;
    if (used + size > concatenated) {
      segments++;
      used = 0;
    }
    used += size;
  }
  return { segments, encoding: "gsm7", units: septets };
}

function countUcs2Segments(text: string): SegmentCount {
  const { single, concatenated } = SEGMENT_LIMITS.ucs2;
  const units = text.length;
  if (units <= single) return { segments: 1, encoding: "ucs2", units };
  let segments = 1;
  let used = 0;
  for (let i = 0; i < units; i++) {
    const size = isSurrogatePairAt(text, i) ? 2 : 1;
    if (used + size > concatenated) {
      segments++;
      used = 0;
    }
    used += size;
    i += size - 1;
  }
  return { segments, encoding: "ucs2", units };
}

/** A high surrogate followed by a low one. A lone surrogate is one unit like any other. */
function isSurrogatePairAt(text: string, index: number): boolean {
  const unit = text.charCodeAt(index);
  if (unit < 0xd800 || unit > 0xdbff) return false;
  const next = text.charCodeAt(index + 1);
  return next >= 0xdc00 && next <= 0xdfff;
}
