// Concurrent calls of one statement, run as one: group commit in the process.
// While `maxInFlight` batches are running, new calls wait and go together in
// the next batch (at most `maxBatch` each). Under light load a call runs at
// once, alone, exactly as it would without the batcher.

export type BatchOptions = {
  /** Most calls in one batch. */
  maxBatch: number;
  /** Most batches running at once; the rest wait for one to end. */
  maxInFlight: number;
};

type Call<In, Out> = { item: In; resolve(value: Out): void; reject(error: unknown): void };

/**
 * `run` gets the batch's items and answers one result per item, in order; a
 * throw means it wrote nothing for any of them. A batch of several that threw
 * an error `retryAlone` accepts (one call's bad data, not an outage) runs each
 * call again alone, so that one call's failure is its own. Every other error
 * (an outage: the callers retry, or give up, on their own terms) goes to each
 * call of the batch.
 */
export function batcher<In, Out>(
  run: (items: In[]) => Promise<Out[]>,
  options: BatchOptions & { retryAlone(error: unknown): boolean },
): (item: In) => Promise<Out> {
  const waiting: Array<Call<In, Out>> = [];
  let inFlight = 0;

  async function runBatch(batch: Array<Call<In, Out>>): Promise<void> {
    let results: Out[];
    try {
      results = await run(batch.map((call) => call.item));
      if (results.length !== batch.length)
        throw new Error(`a batch of ${batch.length} got ${results.length} results`);
    } catch (error) {
      if (batch.length > 1 && options.retryAlone(error)) {
        // One after the other, in this batch's place: still maxInFlight at once.
        for (const call of batch) await runBatch([call]);
      } else {
        for (const call of batch) call.reject(error);
      }
      return;
    }
    for (const [i, call] of batch.entries()) call.resolve(results[i] as Out);
  }

  function pump() {
    while (inFlight < options.maxInFlight && waiting.length > 0) {
      inFlight++;
      void runBatch(waiting.splice(0, options.maxBatch)).finally(() => {
        inFlight--;
        pump();
      });
    }
  }

  return (item) =>
    new Promise<Out>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      pump();
    });
}
