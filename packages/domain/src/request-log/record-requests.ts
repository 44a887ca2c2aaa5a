// The request log's writer (docs/dashboard.md#request-log). The gateway hands
// each finished API request to `record()`, which only pushes it onto a buffer:
// the request's answer never waits for the log. The buffer is written every
// `flushMs` (or sooner once `batchSize` records wait) in one multi-row INSERT
// per batch, one batch at a time. A log is a debugging aid, not a ledger: if
// the database does not answer, the batch is dropped with one warning line
// (never retried into a growing backlog), and past `maxBuffered` waiting
// records new ones are dropped and counted. `close()` writes what is left.
import type { Logger } from "../ports.ts";
import type { RequestRecord, Store } from "../store/index.ts";

export type RequestRecorder = {
  /** Queues one request's record; returns at once. */
  record(record: RequestRecord): void;
  /** Writes everything queued so far (tests, shutdown). */
  flush(): Promise<void>;
  /** Flushes and stops the timer. */
  close(): Promise<void>;
  /** Records dropped since start (buffer full or a failed write). */
  dropped(): number;
};

export function createRequestRecorder(deps: {
  store: Pick<Store, "requestLog">;
  logger: Logger;
  flushMs?: number;
  batchSize?: number;
  maxBuffered?: number;
}): RequestRecorder {
  const flushMs = deps.flushMs ?? 250;
  const batchSize = deps.batchSize ?? 500;
  const maxBuffered = deps.maxBuffered ?? 20_000;
  let buffer: RequestRecord[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let writing: Promise<void> = Promise.resolve();
  let dropped = 0;
  let closed = false;

  async function writeAll(records: RequestRecord[]): Promise<void> {
    for (let start = 0; start < records.length; start += batchSize) {
      const batch = records.slice(start, start + batchSize);
      try {
        await deps.store.requestLog.insertMany(batch);
      } catch (error) {
        dropped += batch.length;
        deps.logger.warn({ err: error, dropped: batch.length }, "request log: a batch could not be written");
      }
    }
  }

  function flush(): Promise<void> {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    const records = buffer;
    buffer = [];
    writing = writing.then(() => writeAll(records));
    return writing;
  }

  function schedule(): void {
    if (timer !== undefined || closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, flushMs);
    // Deno and Node: a pending log write does not keep the process alive.
    (timer as { unref?: () => void }).unref?.();
  }

  return {
    record(record) {
      if (buffer.length >= maxBuffered) {
        dropped += 1;
        return;
      }
      buffer.push(record);
      if (buffer.length >= batchSize) void flush();
      else schedule();
    },
    flush,
    async close() {
      closed = true;
      await flush();
    },
    dropped: () => dropped,
  };
}
