// GET /docs: interactive documentation served entirely from our own origin
// (Scalar's standalone bundle, no CDN, no fonts, no telemetry), and
// GET /openapi.json.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { OpenAPIObject } from "trpc-to-openapi";
import type { ExtraRoute } from "./gateway.ts";

const SCALAR_PATH = "/docs/assets/api-reference.js";

async function loadScalarBundle(): Promise<Uint8Array<ArrayBuffer>> {
  // The package does not export its browser bundle; it sits beside the entry.
  const entry = createRequire(import.meta.url).resolve("@scalar/api-reference");
  return new Uint8Array(await readFile(join(dirname(entry), "browser", "standalone.js")));
}

const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>SMS API reference</title>
<style>body{margin:0}</style>
</head>
<body>
<div id="app"></div>
<script src="${SCALAR_PATH}"></script>
<script>
Scalar.createApiReference('#app', {
  url: '/openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
  showDeveloperTools: 'never',
  agent: { disabled: true },
  mcp: { disabled: true },
});
</script>
</body>
</html>`;

const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1d4ed8"/></svg>';

const SECURITY_HEADERS = {
  "Content-Security-Policy":
    "default-src 'self'; script-src 'self' 'unsafe-inline' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
};

export async function docsRoutes(document: OpenAPIObject): Promise<ExtraRoute[]> {
  const bundle = await loadScalarBundle();
  const json = JSON.stringify(document);
  return [
    {
      method: "GET",
      path: "/openapi.json",
      handle: () => new Response(json, { headers: { "Content-Type": "application/json" } }),
    },
    {
      method: "GET",
      path: "/docs",
      handle: () =>
        new Response(DOCS_HTML, {
          headers: { "Content-Type": "text/html; charset=utf-8", ...SECURITY_HEADERS },
        }),
    },
    {
      // Browsers ask for it on every page; answer instead of a 404.
      method: "GET",
      path: "/favicon.ico",
      handle: () =>
        new Response(FAVICON, {
          headers: { "Content-Type": "image/svg+xml", "Cache-Control": "public, max-age=86400" },
        }),
    },
    {
      method: "GET",
      path: SCALAR_PATH,
      handle: () =>
        new Response(bundle, {
          headers: {
            "Content-Type": "text/javascript; charset=utf-8",
            "Cache-Control": "public, max-age=3600",
          },
        }),
    },
  ];
}
