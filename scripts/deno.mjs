// The real Deno executable from the `deno` npm package (a devDependency of
// apps/api), and the one list of permissions every Deno process of this
// project runs with: the service, the worker, the operator tool, migrations,
// benchmarks and the tests that start them. node_modules/.bin/deno is a Node
// wrapper that does not forward signals, so anything that must stop Deno
// gracefully (SIGTERM) runs this binary directly.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const apiDir = join(dirname(fileURLToPath(import.meta.url)), "..", "apps", "api");

export function denoBinary() {
  const require = createRequire(join(apiDir, "package.json"));
  return require("deno/install_api.cjs").runInstall();
}

/** `deno run` permissions, defined once. */
export const DENO_RUN_FLAGS = Object.freeze([
  "--allow-env",
  "--allow-net",
  "--allow-read",
  "--allow-write",
  "--allow-sys",
]);

/** The arguments of `deno run` for `script` (and its own arguments), with DENO_RUN_FLAGS. */
export function denoRunArgs(script, ...args) {
  return ["run", ...DENO_RUN_FLAGS, script, ...args];
}
