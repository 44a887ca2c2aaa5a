// The process: which environment it runs in, how much it logs, how it stops.
import { z } from "zod";
import { int, SECOND_MS } from "./shared.ts";

export const ZServiceEnv = z.object({
  NODE_ENV: z.enum(["development", "test", "production"]).default("development"),
  LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
  SHUTDOWN_TIMEOUT_SECONDS: int(25, 1, 3600),
  /** SIGTERM/SIGINT behind a load balancer: /readyz answers 503 this long, still serving, before the listener closes. */
  SHUTDOWN_READINESS_DELAY_SECONDS: int(0, 0, 300),
});
export type TServiceEnv = z.output<typeof ZServiceEnv>;

export function serviceConfig(env: TServiceEnv) {
  return {
    nodeEnv: env.NODE_ENV,
    logLevel: env.LOG_LEVEL,
    /** SIGTERM/SIGINT: how long in-flight work may take before the process closes what remains. */
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_SECONDS * SECOND_MS,
    /** SIGTERM/SIGINT: how long /readyz answers 503 while everything is still served, before the drain. */
    shutdownReadinessDelayMs: env.SHUTDOWN_READINESS_DELAY_SECONDS * SECOND_MS,
  };
}
