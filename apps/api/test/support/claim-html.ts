// What a claim page may load (its token is in its URL): no script, nothing
// from another origin; one stylesheet, the dashboard's own (the page sends no
// Referer with its request).
import { expect } from "vitest";

export function expectOnlyOwnStylesheet(html: string): void {
  expect(html).not.toMatch(/<script|@import|src="http/i);
  expect(html.match(/<link\b[^>]*>/g)).toEqual([
    expect.stringMatching(
      /^<link rel="stylesheet" href="\/dashboard\/assets\/dashboard\.css\?v=[0-9a-f]{12}">$/,
    ),
  ]);
  expect(html).toContain('<meta name="referrer" content="no-referrer">');
}
