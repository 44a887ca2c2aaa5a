// What operators watch (metrics): messages due for a status check now, still
// queued (a send in flight, or a crash the recovery sweep will settle), and
// unknown in the last day (sends with no definitive result); and how long the
// oldest due check has been waiting (0 when none is due): the status-check
// job's delay.
import { DAY_MS } from "../model/time.ts";
import type { MessageStore } from "../store/index.ts";

export type MessageBacklog = { due: number; oldestDueSeconds: number; queued: number; unknown: number };

export function messageBacklog(
  deps: { store: { messages: Pick<MessageStore, "countBacklog"> } },
  input: { now: Date },
): Promise<MessageBacklog> {
  return deps.store.messages.countBacklog(input.now, new Date(input.now.getTime() - DAY_MS));
}
