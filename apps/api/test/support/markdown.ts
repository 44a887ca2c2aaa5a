// Reading Markdown the way GitHub renders it, for the tests that check links and
// citations (readme.test, bench-anchors.test): the lines outside fenced code
// blocks, and the headings with the ids GitHub gives them.

/** Lines outside fenced code blocks, with their 1-based numbers. */
export function proseLines(text: string): Array<{ line: string; number: number }> {
  const out: Array<{ line: string; number: number }> = [];
  let fence: string | undefined;
  text.split("\n").forEach((line, index) => {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      return;
    }
    if (fence === undefined) out.push({ line, number: index + 1 });
  });
  return out;
}

export type Heading = { id: string; level: number; text: string };

/**
 * Every heading with GitHub's id: lower case, links and emphasis reduced to
 * their text, punctuation dropped (letters, digits, '_', '-' and spaces
 * stay), spaces to hyphens, and -1, -2 … for repeats.
 */
export function headings(text: string): Heading[] {
  const out: Heading[] = [];
  const seen = new Map<string, number>();
  for (const { line } of proseLines(text)) {
    const match = /^(#{1,6})\s+(.+?)\s*#*\s*$/.exec(line);
    if (!match) continue;
    const heading = match[2] ?? "";
    const plain = heading
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .replace(/[`*]/g, "")
      .toLowerCase();
    const base = plain.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.push({ id: count === 0 ? base : `${base}-${count}`, level: match[1]?.length ?? 0, text: heading });
  }
  return out;
}

/** GitHub's heading ids of a Markdown text. */
export function headingIds(text: string): Set<string> {
  return new Set(headings(text).map((heading) => heading.id));
}
