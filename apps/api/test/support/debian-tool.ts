// Tests that drive one of Debian's programs (HAProxy, PgBouncer, promtool,
// systemd-analyze, Chromium, PHP) run where it is installed: elsewhere they are
// skipped with a warning, and under CI its absence is an error (.ci/run
// installs them), never a skip.
import { existsSync } from "node:fs";
import process from "node:process";

/** Whether `path` exists for `tests` (e.g. "the HAProxy tests"); `install` is the Debian package. */
export function debianToolAvailable(path: string, tests: string, install: string): boolean {
  if (existsSync(path)) return true;
  const missing = `${path} is not installed (apt-get install ${install}; .ci/run does)`;
  if (process.env.CI) throw new Error(`${missing}; CI is set, so ${tests} may not be skipped`);
  console.warn(`skipping ${tests}: ${missing}`);
  return false;
}
