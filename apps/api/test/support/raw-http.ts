// Raw TCP connections to a test server, for what fetch cannot do: a body that
// never ends, half-sent headers, a connection that says nothing, and watching
// who closes a socket.
import { readdirSync } from "node:fs";
import { request as httpRequest } from "node:http";
import net from "node:net";

export type RawConnection = {
  socket: net.Socket;
  /** Everything received so far, as text. */
  received(): string;
  /** The status code of the first response received, or null. */
  status(): number | null;
  /** True once the socket is closed (by either side). */
  isClosed(): boolean;
  /** Resolves when the server closes or resets the connection; rejects after `timeoutMs`. */
  closedByServer(timeoutMs?: number): Promise<void>;
  /** Resolves once `predicate(received)` holds; rejects after `timeoutMs`. */
  waitForData(predicate: (text: string) => boolean, timeoutMs?: number): Promise<string>;
  write(text: string): void;
  /** Writes body chunks of `size` bytes every `everyMs` until the socket closes (chunked encoding). */
  streamChunks(size?: number, everyMs?: number): void;
  destroy(): void;
};

/**
 * A raw connection to `host:port`, from `localAddress` when given (another
 * loopback address such as 127.0.0.2 looks like another client to the server).
 */
export async function openRaw(
  port: number,
  host = "127.0.0.1",
  localAddress?: string,
): Promise<RawConnection> {
  const socket = net.connect({ port, host, ...(localAddress ? { localAddress } : {}) });
  let data = "";
  let closed = false;
  let closedByUs = false;
  let pump: ReturnType<typeof setInterval> | undefined;
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const listener of listeners) listener();
  };
  socket.setNoDelay(true);
  socket.on("data", (chunk) => {
    data += chunk.toString("latin1");
    notify();
  });
  socket.on("error", () => undefined);
  socket.on("close", () => {
    closed = true;
    clearInterval(pump);
    notify();
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });

  function until<T>(check: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    const now = check();
    if (now !== undefined) return Promise.resolve(now);
    return new Promise((resolve, reject) => {
      const listener = () => {
        const value = check();
        if (value === undefined) return;
        listeners.delete(listener);
        clearTimeout(timer);
        resolve(value);
      };
      const timer = setTimeout(() => {
        listeners.delete(listener);
        reject(new Error(`timed out waiting for ${what}; received ${JSON.stringify(data.slice(0, 200))}`));
      }, timeoutMs);
      listeners.add(listener);
    });
  }

  return {
    socket,
    received: () => data,
    status() {
      const match = /^HTTP\/1\.1 (\d{3})/.exec(data);
      return match ? Number(match[1]) : null;
    },
    isClosed: () => closed,
    async closedByServer(timeoutMs = 15_000) {
      await until(() => (closed ? true : undefined), timeoutMs, "the server to close the connection");
      if (closedByUs) throw new Error("the test closed the connection itself");
    },
    waitForData: (predicate, timeoutMs = 15_000) =>
      until(() => (predicate(data) ? data : undefined), timeoutMs, "data"),
    write(text) {
      if (!closed) socket.write(text);
    },
    streamChunks(size = 1024, everyMs = 5) {
      const chunk = `${size.toString(16)}\r\n${"x".repeat(size)}\r\n`;
      pump = setInterval(() => {
        if (closed || socket.writableNeedDrain) return;
        socket.write(chunk);
      }, everyMs);
    },
    destroy() {
      closedByUs = true;
      clearInterval(pump);
      socket.destroy();
    },
  };
}

/** How many file descriptors process `pid` has open (Linux). */
export function openFileDescriptors(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** Polls `check` every 100 ms until it returns true; throws after `timeoutMs`. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * One request on a connection of its own, closed afterwards (fetch keeps its
 * connections open in a pool, which the server counts and holds).
 */
export function requestOnce(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: "127.0.0.1", port, method, path, headers, agent: false },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          text += chunk;
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}
