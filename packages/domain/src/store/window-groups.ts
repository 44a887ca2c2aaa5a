// The test sends' batch claims (idempotency.ts's claimCountedMany,
// answered-sends.ts's claimAnsweredMany) run one statement per counter window,
// and one statement cannot claim a key twice: a batch split that way.
import type { IdempotencyScope } from "../model/idempotency.ts";

/**
 * `groups`: the indexes of `items` per counter window (bucket, start and
 * limit), each key once, in order. `repeats`: each index whose key came
 * earlier in the batch, with that first index.
 */
export function byCounterWindow<T>(
  items: readonly T[],
  scopeOf: (item: T) => IdempotencyScope,
  counterOf: (item: T) => { bucket: string; start: Date; limit: number },
): { groups: number[][]; repeats: Array<[number, number]> } {
  const groups = new Map<string, number[]>();
  const repeats: Array<[number, number]> = [];
  const firsts = new Map<string, number>();
  for (const [index, item] of items.entries()) {
    const scope = scopeOf(item);
    const key = `${scope.projectId}\u0000${scope.mode}\u0000${scope.key}`;
    const first = firsts.get(key);
    if (first !== undefined) {
      repeats.push([index, first]);
      continue;
    }
    firsts.set(key, index);
    const counter = counterOf(item);
    const window = `${counter.bucket}\u0000${counter.start.getTime()}\u0000${counter.limit}`;
    const group = groups.get(window);
    if (group) group.push(index);
    else groups.set(window, [index]);
  }
  return { groups: [...groups.values()], repeats };
}
