// The answers that may take longer than the database deadlines (issue 27,
// finding 6) are written down in docs/api-behaviour.md, "Answers that can take
// longer", with their bounds in seconds at the defaults. This test holds the
// page to the service's own defaults (src/config/), so that the numbers a client
// plans its timeouts by are the ones the service uses.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { DEFAULT_SUBMIT_TIMEOUT_MS } from "@sms/provider-ubill";
import { describe, expect, it } from "vitest";
import { parseEnv } from "../../src/config/index.ts";
import { API_DIR } from "../harness.ts";

const PAGE = readFileSync(join(resolve(API_DIR, "..", ".."), "docs", "api-behaviour.md"), "utf8");

/** The rows of the table under "## Answers that can take longer", as cells. */
function rows(): string[][] {
  const start = PAGE.indexOf("## Answers that can take longer");
  if (start < 0) return [];
  const section = PAGE.slice(start, PAGE.indexOf("\n## ", start + 1));
  return section
    .split("\n")
    .filter((line) => line.startsWith("| ") && !line.startsWith("| Answer") && !line.startsWith("|---"))
    .map((line) => line.split(" | ").map((cell) => cell.replace(/^\| |\s*\|$/g, "")));
}

const seconds = (ms: number) => `${ms / 1000} s`;

describe("docs/api-behaviour.md: answers that can take longer", () => {
  const config = parseEnv({ NODE_ENV: "test", PUBLIC_BASE_URL: "http://api.test" });
  const submit = DEFAULT_SUBMIT_TIMEOUT_MS;

  it("names each longer answer with its bound and the default that bound comes to", () => {
    const table = rows();
    const row = (answer: RegExp) => table.find((cells) => answer.test(cells[0] ?? ""));
    const slowUbill = row(/uBill is slow/);
    expect(slowUbill?.[1]).toBe(seconds(submit));
    expect(slowUbill?.[2]).toContain("`UBILL_SUBMIT_TIMEOUT_MS`");
    const duplicate = row(/duplicate of a request still in flight/);
    expect(duplicate?.[1]).toBe(`${seconds(config.messages.inFlightWaitMs)} per claim of the key`);
    expect(duplicate?.[2]).toContain("`UBILL_SUBMIT_TIMEOUT_MS` + `DATABASE_STATEMENT_TIMEOUT_MS`");
    expect(duplicate?.[2]).toContain(`Retry-After: ${config.queuedRecoveryMs / 1000}`);
    const recording = row(/cannot be recorded/);
    expect(recording?.[1]).toBe(`${seconds(config.messages.recordRetryMs)} more`);
    expect(recording?.[2]).toContain("`SEND_RECORD_RETRY_SECONDS`");
    const ubill = parseEnv({
      NODE_ENV: "test",
      PUBLIC_BASE_URL: "http://api.test",
      UBILL_BASE_URL: "http://ubill.test",
      UBILL_API_KEY: "key",
      UBILL_DEFAULT_BRAND_ID: "1",
    }).ubill;
    const queued = row(/every place at uBill is taken/);
    expect(queued?.[1]).toBe(`${seconds(ubill?.queueTimeoutMs ?? 0)} before the send starts`);
    expect(queued?.[2]).toContain("`UBILL_QUEUE_TIMEOUT_MS` (then `503 provider_unavailable`");
    expect(queued?.[3]).toContain("`UBILL_MAX_IN_FLIGHT`");
    expect(table).toHaveLength(4);
  });
});
