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

/**
 * `deno run` permissions and V8 settings, defined once.
 *
 * `--max-semi-space-size=16` (MB) caps V8's young generation. By default it
 * grows to several times that under load, which kept the API at 275-315 MB
 * RSS in the send benchmark. At 8 MB it used the least memory, but with 256
 * requests in flight many of them outlived a scavenge and were promoted: 16 MB
 * did reads 15-30 % and sends at 256 connections 5-15 % faster for about
 * 15-25 MB more (at most 223 MB; bench/log/2026-11-27.md#the-logs-destination-2026-11-27). `--heap-growing-percent=50` lets the old
 * generation grow to 1.5 times what the last full collection kept before the
 * next one (V8 otherwise allows up to 4 times when collections are cheap): the
 * service keeps about 33 MB live under load, and its RSS under the send
 * benchmark falls from about 255 MB to about 170 MB (bench/log/2026-11-24.md#memory).
 *
 * `--no-memory-reducer` keeps V8 from shrinking the heap with extra full
 * collections once the allocation rate drops (its memory reducer, meant for
 * idle browser tabs). A server's load comes in bursts: after every quiet spell
 * the reducer had shrunk the heap, and the next burst paid to grow it again.
 * In alternating 12 s windows of test sends at 32 connections the service did
 * 11-12 % more sends a second with it off, at 17-18 % less CPU per send, and
 * held 4-6 MB more (bench/log/2026-11-28.md#the-memory-reducer).
 */
export const DENO_RUN_FLAGS = Object.freeze([
  "--allow-env",
  "--allow-net",
  "--allow-read",
  "--allow-write",
  "--allow-sys",
  "--v8-flags=--max-semi-space-size=16,--heap-growing-percent=50,--no-memory-reducer",
]);

/** The arguments of `deno run` for `script` (and its own arguments), with DENO_RUN_FLAGS. */
export function denoRunArgs(script, ...args) {
  return ["run", ...DENO_RUN_FLAGS, script, ...args];
}
