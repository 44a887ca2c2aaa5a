// Debian's Chromium through playwright-core, as every browser test launches it.
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, chromium } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const SCREENSHOT_DIR = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "test-output",
  "screenshots",
);

/** Browser tests need Chromium; in CI its absence is a failure, elsewhere a skip. */
export function chromiumMissing(): boolean {
  if (existsSync(CHROMIUM)) return false;
  if (process.env.CI) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (.ci/run does)`);
  console.warn(`skipping browser tests: ${CHROMIUM} is not installed (apt-get install chromium)`);
  return true;
}

export async function launchChromium(): Promise<Browser> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
