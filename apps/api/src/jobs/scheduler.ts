// The periodic jobs machinery. Every instance (API or --role=worker) runs each
// job on its own interval; jobs are written to be safe with any number of
// instances (rows are claimed with FOR UPDATE SKIP LOCKED), so no leader is
// needed. A round never overlaps the previous round of the same job.
import type { Logger } from "@sms/domain";
import { serializeError } from "../logger.ts";

export type Job = {
  name: string;
  intervalMs: number;
  /** One round; returns counts to log (never message content). */
  run(): Promise<Record<string, number>>;
};

export type Scheduler = { stop(): Promise<void>; runOnce(name: string): Promise<Record<string, number>> };

export function startScheduler(
  jobs: Job[],
  logger: Logger,
  /** Told of every round: its duration, and its counts (null when it failed). */
  onRound?: (job: string, seconds: number, counts: Record<string, number> | null) => void,
): Scheduler {
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const running = new Map<string, Promise<unknown>>();
  let stopped = false;

  async function round(job: Job): Promise<Record<string, number>> {
    const previous = running.get(job.name);
    if (previous) await previous.catch(() => {});
    const started = performance.now();
    const promise = job.run();
    running.set(job.name, promise);
    try {
      const counts = await promise;
      const worked = Object.values(counts).some((count) => count > 0);
      logger[worked ? "info" : "debug"](
        { job: job.name, ...counts, duration_ms: Math.round(performance.now() - started) },
        "job round",
      );
      onRound?.(job.name, (performance.now() - started) / 1000, counts);
      return counts;
    } catch (error) {
      onRound?.(job.name, (performance.now() - started) / 1000, null);
      throw error;
    } finally {
      if (running.get(job.name) === promise) running.delete(job.name);
    }
  }

  function schedule(job: Job, delay: number) {
    if (stopped) return;
    const timer = setTimeout(async () => {
      timers.delete(timer);
      try {
        await round(job);
      } catch (error) {
        logger.error({ job: job.name, err: serializeError(error) }, "job round failed");
      }
      schedule(job, job.intervalMs);
    }, delay);
    timers.add(timer);
  }

  // Stagger the first rounds a little so several jobs do not start together.
  for (const [index, job] of jobs.entries()) schedule(job, 500 + index * 250);

  return {
    async stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await Promise.allSettled([...running.values()]);
    },
    runOnce(name) {
      const job = jobs.find((candidate) => candidate.name === name);
      if (!job) throw new Error(`No job named ${name}`);
      return round(job);
    },
  };
}
