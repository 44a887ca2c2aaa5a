// Recognisable values and the scan for them (privacy issue, points 3 and 4):
// the privacy suites put these values through the service and then search
// every response, log line and raw row for them.

export type Needle = { label: string; value: string };
export type Haystack = { where: string; text: string };

/** A full number in every form it could leak in: +995…, 995… (uBill's form), the nine national digits. */
export function numberNeedles(label: string, number: string): Needle[] {
  return [
    { label, value: number },
    { label: `${label} (digits)`, value: number.slice(1) },
    { label: `${label} (national)`, value: number.slice(4) },
  ];
}

/** Every occurrence of a needle in a haystack, with a little context, for a readable failure. */
export function findLeaks(haystacks: Haystack[], needles: Needle[]): string[] {
  const found: string[] = [];
  for (const { where, text } of haystacks) {
    for (const { label, value } of needles) {
      if (value.length < 4) throw new Error(`needle "${label}" is too short to be recognisable`);
      const index = text.indexOf(value);
      if (index >= 0) {
        const context = text.slice(Math.max(0, index - 60), index + value.length + 60).replace(/\s+/g, " ");
        found.push(`${label} in ${where}: …${context}…`);
      }
    }
  }
  return found;
}

/** Bytes as every text a reader could see them as. */
export function bytesAsText(bytes: Uint8Array): string {
  const buffer = Buffer.from(bytes);
  return [
    buffer.toString("utf8"),
    buffer.toString("latin1"),
    buffer.toString("hex"),
    buffer.toString("base64"),
  ].join("\n");
}
