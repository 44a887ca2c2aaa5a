// Helpers shared by this package's tests (not exported from the package).

import type { Logger, SubmitRequest } from "@sms/domain";
import { createUbillProvider, type UbillProvider } from "./index.ts";

export type LogEntry = { level: "debug" | "info" | "warn" | "error" | "child"; obj: object; msg?: string };

/** A logger that records every call, child bindings included, in one shared list. */
export function recordingLogger(): Logger & { entries: LogEntry[]; text(): string } {
  const entries: LogEntry[] = [];
  const make = (): Logger => ({
    debug: (obj, msg) => void entries.push({ level: "debug", obj, msg }),
    info: (obj, msg) => void entries.push({ level: "info", obj, msg }),
    warn: (obj, msg) => void entries.push({ level: "warn", obj, msg }),
    error: (obj, msg) => void entries.push({ level: "error", obj, msg }),
    child(bindings) {
      entries.push({ level: "child", obj: bindings });
      return make();
    },
  });
  return Object.assign(make(), { entries, text: () => JSON.stringify(entries) });
}

export const TEXT = "Your verification code is 482913. Do not share it with anyone.";

export function submitRequest(to: string, overrides: Partial<SubmitRequest> = {}): SubmitRequest {
  return { messageId: "msg_0001", to, text: TEXT, sender: { name: "SMSGE", brandId: null }, ...overrides };
}

/** Short client deadlines keep every test bounded; fake "slow" answers wait longer than these. */
export const TEST_TIMEOUT_MS = 2_000;
export const SLOW_MS = 5_000;

/** The adapter pointed at `baseUrl` with test deadlines and a recording logger. */
export function ubillFor(
  baseUrl: string,
  apiKey: string,
  overrides: { defaultBrandId?: number } = {},
): { ubill: UbillProvider; logger: ReturnType<typeof recordingLogger> } {
  const logger = recordingLogger();
  const ubill = createUbillProvider({
    baseUrl,
    apiKey,
    defaultBrandId: overrides.defaultBrandId ?? 1,
    submitTimeoutMs: TEST_TIMEOUT_MS,
    statusTimeoutMs: TEST_TIMEOUT_MS,
    logger,
  });
  return { ubill, logger };
}
