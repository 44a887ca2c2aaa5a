// What operators watch (metrics): messages due for a status check now, still
// queued (a send in flight, or a crash the recovery sweep will settle), and
// unknown in the last day (sends with no definitive result).
import { DAY_MS } from "../model/time.ts";
import type { MessageStore } from "../store/index.ts";

export type MessageBacklog = { due: number; queued: number; unknown: number };

export function messageBacklog(
  deps: { store: { messages: Pick<MessageStore, "countBacklog"> } },
  input: { now: Date },
): Promise<MessageBacklog> {
  return deps.store.messages.countBacklog(input.now, new Date(input.now.getTime() - DAY_MS));
}
