// Where the log's lines go: a file descriptor (stdout), written asynchronously.
//
// Lines that arrive while a write is in flight are written together by the
// next one, however many there are: one write per round, whatever the rate.
// pino's own asynchronous destination (sonic-boom) writes at most 16 KB per
// round and measures its pending text's length on every line. Under Deno, at
// 10 000 requests a second, that fell behind and kept up to 38 MB of pending
// lines (bench/log/2026-11-27.md#the-logs-destination-2026-11-27).
//
// What is pending is bounded (`maxPendingBytes`, counted in UTF-16 code
// units): past it a line is dropped, and once the backlog is written one
// warning line says how many were. flush() writes what is pending at once,
// synchronously (before exiting); a write already in flight finishes on its own.
import { Buffer } from "node:buffer";
import fs from "node:fs";

/** The `service` field of every log line. */
export const LOG_SERVICE = "sms-api";

/** Pending log text allowed before lines are dropped (UTF-16 code units, about as many bytes for JSON lines). */
export const DEFAULT_MAX_PENDING = 8 * 2 ** 20;

/** How long to wait before trying again when the descriptor is not ready (EAGAIN). */
const RETRY_MS = 10;
/** How often flush() tries again on a descriptor that is not ready before it gives up. */
const MAX_SYNC_RETRIES = 1_000;

export type LogDestination = {
  write(line: string): boolean;
  /** Writes the pending lines now, synchronously (a write in flight finishes on its own); then calls `done`. */
  flush(done?: (error?: Error) => void): void;
  /** Lines dropped so far because too much was pending. */
  dropped(): number;
};

export type FdWriter = {
  write(
    fd: number,
    data: Uint8Array,
    callback: (error: NodeJS.ErrnoException | null, written: number) => void,
  ): void;
  writeSync(fd: number, data: Uint8Array): number;
};

/** node:fs's writes: the default. */
export const nodeWriter: FdWriter = {
  write: (fd, data, callback) => fs.write(fd, data, 0, data.length, null, callback),
  writeSync: (fd, data) => fs.writeSync(fd, data, 0, data.length, null),
};

function droppedLine(count: number): string {
  return `${JSON.stringify({
    level: "warn",
    time: new Date().toISOString(),
    service: LOG_SERVICE,
    dropped: count,
    msg: "log lines dropped: more log was waiting to be written than the log's destination allows",
  })}\n`;
}

export function fdDestination(
  options: { fd?: number; maxPendingBytes?: number; writer?: FdWriter } = {},
): LogDestination {
  const fd = options.fd ?? 1;
  const maxPending = options.maxPendingBytes ?? DEFAULT_MAX_PENDING;
  const writer = options.writer ?? nodeWriter;
  let pending: string[] = [];
  let pendingLength = 0;
  /** The bytes being written, and how far. */
  let inFlight: Uint8Array | null = null;
  let offset = 0;
  let droppedTotal = 0;
  let droppedUnreported = 0;

  function take(): Uint8Array | null {
    if (droppedUnreported > 0) {
      pending.push(droppedLine(droppedUnreported));
      droppedUnreported = 0;
    }
    if (pending.length === 0) return null;
    const text = pending.length === 1 ? pending[0]! : pending.join("");
    pending = [];
    pendingLength = 0;
    return Buffer.from(text, "utf8");
  }

  function next(): void {
    inFlight = take();
    offset = 0;
    if (inFlight) writeSome();
  }

  function writeSome(): void {
    const data = inFlight!;
    writer.write(fd, data.subarray(offset), (error, written) => {
      if (error) {
        if (error.code === "EAGAIN") {
          setTimeout(writeSome, RETRY_MS);
          return;
        }
        // Nowhere to write to: the chunk is lost, the next is tried.
        next();
        return;
      }
      offset += written;
      if (offset < data.length) writeSome();
      else next();
    });
  }

  return {
    write(line) {
      if (pendingLength + line.length > maxPending) {
        droppedTotal++;
        droppedUnreported++;
        return true;
      }
      pending.push(line);
      pendingLength += line.length;
      if (inFlight === null) next();
      return true;
    },
    flush(done) {
      // The lines not handed to a write yet, now. A write already in flight
      // finishes on its own: writing its bytes again here could log them twice.
      try {
        const data = take();
        let at = 0;
        let busy = 0;
        while (data && at < data.length) {
          try {
            at += writer.writeSync(fd, data.subarray(at));
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== "EAGAIN" || ++busy > MAX_SYNC_RETRIES) throw error;
          }
        }
        done?.();
      } catch (error) {
        done?.(error as Error);
      }
    },
    dropped: () => droppedTotal,
  };
}
