// GET /llms.txt and /llms-full.txt: built from the OpenAPI document /docs
// renders (guide pages, operations, responses) and the MCP tools, served like
// the other documents (ETag, no-cache, gzip, before the database).
import { gunzipSync } from "node:zlib";
import { API_ERROR_CODES } from "@sms/contract";
import { availableBackends } from "@sms/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOLS } from "../../src/mcp/tools.ts";
import { startTestApp, type TestApp } from "../harness.ts";

const [backend] = await availableBackends();

type Doc = {
  info: { title: string; description: string };
  tags: Array<{ name: string; description: string }>;
  paths: Record<string, Record<string, { summary: string; description: string }>>;
  "x-tagGroups": Array<{ name: string; tags: string[] }>;
};

describe("llms.txt", () => {
  let t: TestApp;
  let document: Doc;
  let index: string;
  let full: string;

  beforeAll(async () => {
    t = await startTestApp({ backend: backend ?? "pglite" });
    document = (await (await t.request("/openapi.json")).json()) as Doc;
    index = await (await t.request("/llms.txt")).text();
    full = await (await t.request("/llms-full.txt")).text();
  });
  afterAll(async () => {
    await t?.close();
  });

  const guides = () => document["x-tagGroups"].find((group) => group.name === "Guide")?.tags ?? [];
  const operations = () =>
    Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
    );

  it("the index names the API, links the full text, /docs and /openapi.json, every guide page, route and tool", () => {
    expect(index.startsWith(`# ${document.info.title}\n\n> `)).toBe(true);
    for (const link of ["/llms-full.txt", "/docs", "/openapi.json"]) {
      expect(index).toContain(`](${t.baseUrl}${link}`);
    }
    expect(guides().length).toBeGreaterThan(3);
    // The clients and how to install them (issue 54, item 1), in the index's list of pages too.
    expect(guides()).toContain("Client libraries");
    for (const name of guides()) expect(index).toContain(`- [${name}](${t.baseUrl}/llms-full.txt#`);
    for (const { path, method } of operations()) expect(index).toContain(`\`${method} ${path}\``);
    for (const tool of TOOLS) expect(index).toContain(`\`${tool.name}\``);
    expect(index).toContain(`${t.baseUrl}/mcp`);
  });

  it("every link of the index into the full text lands on one of its headings", () => {
    const slug = (heading: string) =>
      heading
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s-]/gu, "")
        .replace(/\s/g, "-");
    const headings = new Set(
      full
        .split("\n")
        .filter((line) => /^#{1,3} /.test(line))
        .map((line) => slug(line.replace(/^#+ /, ""))),
    );
    const anchors = [...index.matchAll(/llms-full\.txt#([^)]+)\)/g)].map((match) => match[1]);
    expect(anchors.length).toBe(guides().length + operations().length);
    for (const anchor of anchors) expect(headings, anchor).toContain(anchor);
  });

  it("the full text holds every guide page and every operation of /docs, word for word, and every error code", () => {
    for (const name of guides()) {
      const page = document.tags.find((tag) => tag.name === name)?.description ?? "";
      expect(page.length).toBeGreaterThan(100);
      expect(full).toContain(`## ${name}\n\n${page}`);
    }
    for (const { operation } of operations()) expect(full).toContain(operation.description);
    for (const code of API_ERROR_CODES) expect(full).toContain(`\`${code}\``);
    for (const tool of TOOLS) expect(full).toContain(tool.description);
  });

  it("is served like the other documents: text, ETag and no-cache, 304, gzip", async () => {
    for (const path of ["/llms.txt", "/llms-full.txt"]) {
      const response = await t.request(path);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("text/plain; charset=utf-8");
      expect(response.headers.get("cache-control")).toBe("no-cache");
      const etag = response.headers.get("etag") ?? "";
      expect(etag).toMatch(/^"[\w-]+"$/);
      const again = await t.request(path, { headers: { "If-None-Match": etag } });
      expect(again.status).toBe(304);
      const zipped = await t.request(path, { headers: { "Accept-Encoding": "gzip" } });
      expect(zipped.headers.get("content-encoding")).toBe("gzip");
      expect(gunzipSync(Buffer.from(await zipped.arrayBuffer())).toString("utf8")).toBe(
        path === "/llms.txt" ? index : full,
      );
    }
  });
});
