import type { Logger } from "../../ports.ts";
import { systemTimer } from "../../ports.ts";
import { isDatabaseUnavailable } from "../../store/index.ts";
import type { SendMessageDeps } from "./types.ts";

/**
 * Runs a statement that must not be lost after the provider was contacted
 * (or after the key was claimed), again and again with backoff while the
 * database is unavailable, for at most `recordRetryMs`; then the error stands.
 */
export async function persist<T>(
  deps: SendMessageDeps,
  logger: Logger,
  what: "record" | "release",
  work: () => Promise<T>,
): Promise<T> {
  const timer = deps.timer ?? systemTimer;
  const started = timer.monotonicMs();
  for (let attempt = 1, pause = 100; ; attempt++, pause = Math.min(pause * 2, 2_000)) {
    try {
      const done = await work();
      if (attempt > 1)
        logger.info({ attempts: attempt, step: what }, "recorded after the database came back");
      return done;
    } catch (error) {
      const left = deps.config.recordRetryMs - (timer.monotonicMs() - started);
      if (!isDatabaseUnavailable(error) || left <= 0) throw error;
      logger.warn(
        { attempt, step: what, retry_in_ms: Math.min(pause, left) },
        "the database is unavailable; retrying to record the send",
      );
      await timer.sleep(Math.min(pause, left));
    }
  }
}
