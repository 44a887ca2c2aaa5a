// A fixed number of slots for one kind of work in this process: at most
// `size` pieces of work hold one at once; the rest wait in memory, first come
// first served. The send path gives live sends a share of the database pool
// this way (send-message.ts): a burst of them waits here, holding no
// connection, so everything else keeps its turn at the pool. The gateway's
// read turns (apps/api/src/http/gateway.ts) use it too, with a deadline on the
// wait: one interval timer checks the deadlines, and runs only while someone
// waits (a timer per waiter would cost every waiting request one).

export type Slots = {
  /**
   * Runs `work` once a slot is free; the slot is given back when it settles, however it settles. Work
   * run `first` is served before every other waiter (in its own arrival order): work that finishes what
   * earlier work started, so that it never queues behind new work. Work that has waited `timeoutMs`
   * for a slot (checked every tenth of it, 10-250 ms) does not run: run() throws SlotWaitTimeout.
   */
  run<T>(work: () => Promise<T>, options?: { first?: boolean; timeoutMs?: number }): Promise<T>;
  readonly size: number;
  readonly inUse: number;
  /** Work waiting for a slot. */
  readonly waiting: number;
};

/** What run() throws for work that waited its `timeoutMs` for a slot (the work never ran). */
export class SlotWaitTimeout extends Error {
  constructor(timeoutMs: number) {
    super(`no slot became free within ${timeoutMs} ms`);
    this.name = "SlotWaitTimeout";
  }
}

type Waiter = { go: () => void; fail: (error: Error) => void; deadline: number; timeoutMs: number };

export function createSlots(size: number): Slots {
  if (!Number.isInteger(size) || size < 1)
    throw new RangeError(`slots: size must be a positive integer, not ${size}`);
  let inUse = 0;
  const queue: Waiter[] = [];
  const firstQueue: Waiter[] = [];
  /** Checks the deadlines; started by the first waiter that has one, stopped once nobody waits. */
  let timer: ReturnType<typeof setInterval> | undefined;

  const release = () => {
    const next = firstQueue.shift() ?? queue.shift();
    // Handed straight to the next in line: inUse stays the same.
    if (next) next.go();
    else inUse--;
  };
  const expire = (waiters: Waiter[], now: number) => {
    for (let index = waiters.length - 1; index >= 0; index--) {
      const waiter = waiters[index] as Waiter;
      if (waiter.deadline > now) continue;
      waiters.splice(index, 1);
      waiter.fail(new SlotWaitTimeout(waiter.timeoutMs));
    }
  };
  const sweep = () => {
    const now = performance.now();
    expire(firstQueue, now);
    expire(queue, now);
    if (firstQueue.length + queue.length === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  };
  const wait = (first: boolean, timeoutMs: number | undefined) =>
    new Promise<void>((resolve, reject) => {
      const deadline = timeoutMs === undefined ? Number.POSITIVE_INFINITY : performance.now() + timeoutMs;
      (first ? firstQueue : queue).push({ go: resolve, fail: reject, deadline, timeoutMs: timeoutMs ?? 0 });
      if (timeoutMs === undefined || timer !== undefined) return;
      timer = setInterval(sweep, Math.min(250, Math.max(10, Math.floor(timeoutMs / 10))));
      // The waiting work's own requests keep the process alive, not this timer (Node; Deno's is a number).
      (timer as { unref?: () => void }).unref?.();
    });

  return {
    size,
    get inUse() {
      return inUse;
    },
    get waiting() {
      return queue.length + firstQueue.length;
    },
    async run(work, options) {
      if (inUse < size) inUse++;
      else await wait(options?.first === true, options?.timeoutMs);
      try {
        return await work();
      } finally {
        release();
      }
    },
  };
}
