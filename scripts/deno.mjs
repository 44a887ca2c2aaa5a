// The real Deno executable from the `deno` npm package (a devDependency of
// apps/api). node_modules/.bin/deno is a Node wrapper that does not forward
// signals, so anything that must stop Deno gracefully (SIGTERM) runs this
// binary directly.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const apiDir = join(dirname(fileURLToPath(import.meta.url)), "..", "apps", "api");

export function denoBinary() {
  const require = createRequire(join(apiDir, "package.json"));
  return require("deno/install_api.cjs").runInstall();
}
