// A fixed number of slots for one kind of work in this process: at most
// `size` pieces of work hold one at once; the rest wait in memory, first come
// first served. The send path gives live sends a share of the database pool
// this way (send-message.ts): a burst of them waits here, holding no
// connection, so everything else keeps its turn at the pool.

export type Slots = {
  /**
   * Runs `work` once a slot is free; the slot is given back when it settles, however it settles. Work
   * run `first` is served before every other waiter (in its own arrival order): work that finishes what
   * earlier work started, so that it never queues behind new work.
   */
  run<T>(work: () => Promise<T>, options?: { first?: boolean }): Promise<T>;
  readonly size: number;
  readonly inUse: number;
  /** Work waiting for a slot. */
  readonly waiting: number;
};

export function createSlots(size: number): Slots {
  if (!Number.isInteger(size) || size < 1)
    throw new RangeError(`slots: size must be a positive integer, not ${size}`);
  let inUse = 0;
  const queue: Array<() => void> = [];
  const firstQueue: Array<() => void> = [];
  const release = () => {
    const next = firstQueue.shift() ?? queue.shift();
    // Handed straight to the next in line: inUse stays the same.
    if (next) next();
    else inUse--;
  };
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
      else await new Promise<void>((resolve) => (options?.first ? firstQueue : queue).push(resolve));
      try {
        return await work();
      } finally {
        release();
      }
    },
  };
}
