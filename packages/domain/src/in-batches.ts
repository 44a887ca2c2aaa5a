// The periodic purges' loop: bounded statements, one after another.

/** Runs one batch after another until a batch comes back short; the total of rows touched. */
export async function inBatches(batchSize: number, runBatch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const count = await runBatch();
    total += count;
    if (count < batchSize) return total;
  }
}
