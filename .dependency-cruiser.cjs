// The import boundaries (docs/architecture.md "Boundaries"), checked by
// `npm run lint` (the root `boundaries` task) and by
// apps/api/test/layout/boundaries.test.ts, which also plants violations to prove the
// rules bite. Paths are relative to the repository root.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      comment: "No import cycles anywhere (type-only imports count: they are how circles start).",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "domain-without-http-or-trpc",
      comment: "The domain is the business: no HTTP edge, no tRPC, no pages, no app files.",
      severity: "error",
      from: { path: "^packages/domain/" },
      to: { path: "(@trpc/|trpc-to-openapi|^apps/|^packages/web/)" },
    },
    {
      name: "database-only-from-store",
      comment:
        "In the domain only store/ speaks to the database; no other package but the composition root (apps/api) and the benchmarks opens one.",
      severity: "error",
      from: {
        path: "^(packages|apps)/",
        // Tests may build databases; production code outside these may not.
        pathNot: "(^packages/domain/src/store/|^packages/db/|^apps/api/|^packages/[^/]+/test/|\\.test\\.ts$)",
      },
      to: { path: "(^packages/db/|^@sms/db)" },
    },
    {
      name: "contract-is-a-leaf",
      comment:
        "The API's wording room (what a caller is told, refusals worded, the thrown ApiError) imports nothing of the app.",
      severity: "error",
      from: { path: "^apps/api/src/contract/" },
      to: { path: "^apps/api/src/", pathNot: "^apps/api/src/contract/" },
    },
    {
      name: "wire-shapes-above-nothing-of-ours",
      comment:
        "@sms/contract (the wire shapes: vocabulary, error codes, headers, route metadata, the procedures' schemas) depends on zod, trpc-to-openapi's types and @sms/templates; nothing else of ours.",
      severity: "error",
      from: { path: "^packages/contract/", pathNot: "^packages/contract/test/" },
      to: {
        path: "^(apps|packages|bench)/|^@sms/",
        pathNot: "^(packages/contract|packages/templates)/|^@sms/templates$",
      },
    },
    {
      name: "edge-below-procedures",
      comment:
        "The HTTP edge and the procedure tiers never reach up into procedures, pages, documentation builders or the MCP tools.",
      severity: "error",
      from: { path: "^apps/api/src/(http|trpc)/" },
      to: { path: "^apps/api/src/(routers|pages|docs|mcp)/" },
    },
    {
      name: "trpc-without-http",
      comment: "Procedure tiers do not depend on the HTTP edge (the edge depends on them).",
      severity: "error",
      from: { path: "^apps/api/src/trpc/" },
      to: { path: "^apps/api/src/http/" },
    },
    {
      name: "packages-never-import-apps",
      comment: "Packages (the web pages included) reach the app only through the ports they define.",
      severity: "error",
      from: { path: "^packages/", pathNot: "^packages/[^/]+/test/" },
      to: { path: "^apps/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(node_modules|/generated/|/test-output/|/dist/|\\.turbo/)" },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "types", "default"],
      extensions: [".ts", ".mjs", ".js", ".json"],
      mainFields: ["module", "main", "types"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
