import { describe, expect, it } from "vitest";
import { escapeText, Html, html, join, raw, safeUrl } from "./html.ts";

describe("the html tag", () => {
  it("escapes every interpolated string, in text and in attributes", () => {
    const hostile = `<script>alert("x")</script>' & \`y\``;
    const out = html`<p title="${hostile}">${hostile}</p>`.toString();
    const escaped = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; &amp; &#96;y&#96;";
    expect(out).toBe(`<p title="${escaped}">${escaped}</p>`);
  });

  it("writes markup made by the tag or by raw() as it is, and nests", () => {
    const inner = html`<b>${"<i>"}</b>`;
    expect(html`<p>${inner}</p>`.toString()).toBe("<p><b>&lt;i&gt;</b></p>");
    expect(html`${raw("<hr>")}`.toString()).toBe("<hr>");
  });

  it("flattens arrays, writes numbers, and writes nothing for null, undefined and false", () => {
    const items = ["<a>", html`<br>`, [1, ["&"]]];
    expect(html`${items}|${null}|${undefined}|${false}|${0}`.toString()).toBe("&lt;a&gt;<br>1&amp;||||0");
    expect(join(["a", "<b>", html`<c>`], ", ").toString()).toBe("a, &lt;b&gt;, <c>");
  });

  it("cannot be fooled by an object that merely looks like markup", () => {
    const forged = { toString: () => "<script>" } as unknown as string;
    expect(html`${forged}`.toString()).toBe("&lt;script&gt;");
    expect(html`x` instanceof Html).toBe(true);
  });

  it("escapes the five HTML specials and the backtick, nothing else", () => {
    expect(escapeText(`&<>"'\`ა€`)).toBe("&amp;&lt;&gt;&quot;&#39;&#96;ა€");
  });

  it("lets only site paths and http(s) URLs through as URLs", () => {
    expect(safeUrl("/dashboard/projects")).toBe("/dashboard/projects");
    expect(safeUrl("https://github.example/login")).toBe("https://github.example/login");
    for (const bad of [
      "javascript:alert(1)",
      " javascript:alert(1)",
      "JaVaScRiPt:x",
      "data:text/html,x",
      "//evil.example",
      "/\\evil.example",
      "vbscript:x",
    ]) {
      expect(safeUrl(bad), bad).toBe("#");
    }
  });
});
