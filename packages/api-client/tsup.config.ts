import { defineConfig } from "tsup";

// ESM for Node 20+ and browsers, with one bundled .d.ts (the generated
// OpenAPI types included): what `npm pack` ships.
export default defineConfig({
  entry: ["src/index.ts"],
  format: ["esm"],
  target: "es2022",
  platform: "neutral",
  dts: { compilerOptions: { allowImportingTsExtensions: true, types: [] } },
  clean: true,
  sourcemap: false,
});
