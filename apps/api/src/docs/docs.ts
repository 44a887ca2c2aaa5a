// GET /docs: interactive documentation served entirely from our own origin
// (Scalar's standalone bundle, no CDN, no fonts, no telemetry),
// GET /openapi.json, and GET /llms.txt and /llms-full.txt (the same document
// as Markdown, llms.ts). Static: served even before the database is reached.
//
// The bundle (about 4 MB) is gzipped once at start-up (off the request path,
// and off the main thread), served under a URL that carries its content hash
// (so browsers may keep it for a year) and revalidated by ETag. No brotli:
// Deno's brotli compresses on the main thread, 300 ms for this bundle at
// quality 5 (a sixth of the start-up budget, every request held meanwhile),
// and at the qualities that take a few milliseconds its output is no smaller
// than gzip's (bench/log/2026-11-25.md#start-up-again-2026-11-25).
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import type { OpenAPIObject } from "trpc-to-openapi";
import type { ExtraRoute } from "../http/gateway.ts";
import { buildLlmsTexts, type LlmsSource } from "./llms.ts";
import { serializeDocument } from "./openapi.ts";

async function loadScalarBundle(): Promise<Uint8Array<ArrayBuffer>> {
  // The package does not export its browser bundle; it sits beside the entry.
  const entry = createRequire(import.meta.url).resolve("@scalar/api-reference");
  return new Uint8Array(await readFile(join(dirname(entry), "browser", "standalone.js")));
}

const gzipAsync = promisify(gzip);

type Encoding = "gzip" | "identity";

/** One static body, in each encoding, with its validators. */
type Asset = {
  contentType: string;
  cacheControl: string;
  hash: string;
  bodies: Record<Encoding, Promise<Uint8Array<ArrayBuffer>>>;
};

function asset(body: Uint8Array<ArrayBuffer>, contentType: string, cacheControl: string): Asset {
  const toArray = (buffer: Uint8Array) => new Uint8Array(buffer) as Uint8Array<ArrayBuffer>;
  const gz = gzipAsync(body, { level: 6 }).then(toArray);
  // A failed compression only costs bandwidth: serve the body as it is.
  const orIdentity = (promise: Promise<Uint8Array<ArrayBuffer>>) => promise.catch(() => body);
  return {
    contentType,
    cacheControl,
    hash: createHash("sha256").update(body).digest("base64url").slice(0, 16),
    bodies: { gzip: orIdentity(gz), identity: Promise.resolve(body) },
  };
}

/** The encoding to answer with (RFC 9110 12.5.3): gzip when the client accepts it, else identity. */
function negotiateEncoding(acceptEncoding: string | null): Encoding {
  if (!acceptEncoding) return "identity";
  const weights = new Map<string, number>();
  for (const part of acceptEncoding.split(",")) {
    const [name = "", ...params] = part.trim().toLowerCase().split(";");
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const weight = q ? Number(q.slice(2)) : 1;
    weights.set(name.trim(), Number.isFinite(weight) ? weight : 0);
  }
  const accepts = (name: string) => (weights.get(name) ?? weights.get("*") ?? 0) > 0;
  if (accepts("gzip")) return "gzip";
  return "identity";
}

const etagOf = (asset: Asset, encoding: Encoding) =>
  `"${asset.hash}${encoding === "identity" ? "" : `-${encoding}`}"`;

/** Whether If-None-Match names any representation of this asset (weak comparison). */
function notModified(asset: Asset, ifNoneMatch: string | null): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === "*") return true;
  const ours = new Set((["gzip", "identity"] as const).map((e) => etagOf(asset, e)));
  return ifNoneMatch.split(",").some((tag) => ours.has(tag.trim().replace(/^W\//, "")));
}

async function serve(asset: Asset, request: Request, extraHeaders: Record<string, string> = {}) {
  const encoding = negotiateEncoding(request.headers.get("accept-encoding"));
  const headers: Record<string, string> = {
    "Content-Type": asset.contentType,
    "Cache-Control": asset.cacheControl,
    ETag: etagOf(asset, encoding),
    Vary: "Accept-Encoding",
    ...extraHeaders,
  };
  if (notModified(asset, request.headers.get("if-none-match")))
    return new Response(null, { status: 304, headers });
  if (encoding !== "identity") headers["Content-Encoding"] = encoding;
  return new Response(await asset.bodies[encoding], { headers });
}

/** The page's one inline style and one inline script, allowed by their hashes in its CSP. */
const PAGE_STYLE = "body{margin:0}";
const PAGE_SCRIPT = `
Scalar.createApiReference('#app', {
  url: '/openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
  // The samples are the document's own (x-codeSamples, code-samples.ts): each makes a new Idempotency-Key.
  hiddenClients: true,
  authentication: { preferredSecurityScheme: 'ApiKey' },
  showDeveloperTools: 'never',
  agent: { disabled: true },
  mcp: { disabled: true },
});
`;

/** The reference page: Scalar, pointed at /openapi.json. */
function docsPage(scriptPath: string) {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>SMS API reference</title>
<style>${PAGE_STYLE}</style>
</head>
<body>
<div id="app"></div>
<script src="${scriptPath}"></script>
<script>${PAGE_SCRIPT}</script>
</body>
</html>`;
}

const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1d4ed8"/></svg>';

const cspHash = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;

/**
 * The tightest policy the Scalar bundle works under (docs.browser.test.ts
 * renders every part of the reference under it with no violation): scripts
 * only from our origin plus the page's own inline script by its hash (no
 * 'unsafe-inline', no 'unsafe-eval'); styles from our origin and inline,
 * because the bundle injects its styles at run time (they cannot be hashed in
 * advance: with only the page's style by hash, Chromium refuses a dozen of
 * them); no framing by any site; nothing else.
 */
const SECURITY_HEADERS = {
  "Content-Security-Policy": [
    "default-src 'none'",
    `script-src 'self' ${cspHash(PAGE_SCRIPT)}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; "),
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
};

const encoder = new TextEncoder();
const bytes = (text: string) => encoder.encode(text) as Uint8Array<ArrayBuffer>;

export async function docsRoutes(document: OpenAPIObject): Promise<ExtraRoute[]> {
  const bundle = asset(
    await loadScalarBundle(),
    "text/javascript; charset=utf-8",
    "public, max-age=31536000, immutable",
  );
  // The URL changes whenever the bundle does, so it can be cached for good.
  const bundlePath = `/docs/assets/api-reference.${bundle.hash}.js` as const;
  const openapi = asset(bytes(serializeDocument(document)), "application/json", "no-cache");
  const page = asset(bytes(docsPage(bundlePath)), "text/html; charset=utf-8", "no-cache");
  const llms = buildLlmsTexts(document as unknown as LlmsSource);
  const llmsIndex = asset(bytes(llms.index), "text/plain; charset=utf-8", "no-cache");
  const llmsFull = asset(bytes(llms.full), "text/plain; charset=utf-8", "no-cache");
  return [
    {
      method: "GET",
      path: "/openapi.json",
      withoutDatabase: true,
      handle: (request) => serve(openapi, request),
    },
    {
      method: "GET",
      path: "/docs",
      withoutDatabase: true,
      handle: (request) => serve(page, request, SECURITY_HEADERS),
    },
    {
      method: "GET",
      path: "/llms.txt",
      withoutDatabase: true,
      handle: (request) => serve(llmsIndex, request),
    },
    {
      method: "GET",
      path: "/llms-full.txt",
      withoutDatabase: true,
      handle: (request) => serve(llmsFull, request),
    },
    {
      // Browsers ask for it on every page; answer instead of a 404.
      method: "GET",
      path: "/favicon.ico",
      withoutDatabase: true,
      handle: () =>
        new Response(FAVICON, {
          headers: { "Content-Type": "image/svg+xml", "Cache-Control": "public, max-age=86400" },
        }),
    },
    { method: "GET", path: bundlePath, withoutDatabase: true, handle: (request) => serve(bundle, request) },
  ];
}
