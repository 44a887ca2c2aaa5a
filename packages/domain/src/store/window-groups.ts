// The test sends' batch claims (idempotency.ts's claimCountedMany,
// answered-sends.ts's claimAnsweredMany) run one statement per counter window,
// and one statement cannot claim a key twice: a batch split that way, and run.
import type { IdempotencyScope } from "../model/idempotency.ts";

/** A key's outcome when an earlier appearance in the same batch claimed it: taken, look it up. */
type TakenLookUp = { claimed: false; prior: null };

/**
 * Runs a batch of claims one statement per counter window (bucket, start and
 * limit), each key once. A window of one claim runs `alone`; a larger one runs
 * as `group`, and when that does not all fit ("over_limit", nothing kept) each
 * of its claims runs alone in turn, so the window fills exactly to its limit.
 * A key that appears again gets what a concurrent statement would have seen:
 * its first appearance's outcome, or, when that claimed the key, "taken, look
 * it up" (a prior of null).
 */
export async function claimByCounterWindow<T, O extends { claimed: boolean }>(
  items: readonly T[],
  keys: {
    scopeOf: (item: T) => IdempotencyScope;
    counterOf: (item: T) => { bucket: string; start: Date; limit: number };
  },
  run: { group: (items: T[]) => Promise<O[] | "over_limit">; alone: (item: T) => Promise<O> },
): Promise<Array<O | TakenLookUp>> {
  const results: Array<O | TakenLookUp> = new Array(items.length);
  const groups = new Map<string, number[]>();
  /** Each repeated key's index, and the index of its first appearance. */
  const repeats: Array<[number, number]> = [];
  const firsts = new Map<string, number>();
  for (const [index, item] of items.entries()) {
    const scope = keys.scopeOf(item);
    const key = `${scope.projectId}\u0000${scope.mode}\u0000${scope.key}`;
    const first = firsts.get(key);
    if (first !== undefined) {
      repeats.push([index, first]);
      continue;
    }
    firsts.set(key, index);
    const counter = keys.counterOf(item);
    const window = `${counter.bucket}\u0000${counter.start.getTime()}\u0000${counter.limit}`;
    const group = groups.get(window);
    if (group) group.push(index);
    else groups.set(window, [index]);
  }
  const alone = async (index: number) => {
    results[index] = await run.alone(items[index] as T);
  };
  await Promise.all(
    [...groups.values()].map(async (indexes) => {
      if (indexes.length === 1) return alone(indexes[0] as number);
      const outcomes = await run.group(indexes.map((index) => items[index] as T));
      if (outcomes === "over_limit") {
        for (const index of indexes) await alone(index);
        return;
      }
      for (const [i, index] of indexes.entries()) results[index] = outcomes[i] as O;
    }),
  );
  for (const [index, first] of repeats) {
    const outcome = results[first] as O | TakenLookUp;
    results[index] = outcome.claimed ? { claimed: false, prior: null } : outcome;
  }
  return results;
}
