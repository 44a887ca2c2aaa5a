import { mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, chromium } from "playwright-core";
import { debianToolAvailable } from "./debian-tool.ts";

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
  return !debianToolAvailable(CHROMIUM, "the browser tests", "chromium");
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
