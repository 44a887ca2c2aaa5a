// An account holder's usage: per UTC day over the last N days, messages by
// status and segments, and the delivery rate, for one mode or both. The
// days without messages are there too (zeros), so a chart has every day.

import type { KeyMode } from "../model/keys.ts";
import { MESSAGE_STATUSES, type MessageStatus } from "../model/message.ts";
import { DAY_MS, nextUtcMidnight } from "../model/time.ts";
import type { Clock } from "../ports.ts";
import type { Store } from "../store/index.ts";
import { type AccountViewer, type DashboardRefusal, ownedProject, PROJECT_NOT_FOUND } from "./access.ts";

export const USAGE_DAYS = 30;

export type UsageDay = {
  /** Midnight UTC. */
  day: Date;
  byStatus: Record<MessageStatus, number>;
  messages: number;
  segments: number;
};

export type ProjectUsage = {
  ok: true;
  days: UsageDay[];
  totals: { messages: number; segments: number; byStatus: Record<MessageStatus, number> };
  /**
   * delivered ÷ (delivered + undeliverable + failed + unknown): of the messages
   * that reached a final status, how many were confirmed delivered. null when
   * none did. Messages still queued or submitted do not count either way.
   */
  deliveryRate: number | null;
  /**
   * The same rate for each mode on its own, whatever `mode` filters: a test
   * key's messages go to the simulator, whose failing numbers fail on purpose,
   * so only the live rate says how real messages fare.
   */
  deliveryRateByMode: Record<KeyMode, number | null>;
};

/** delivered ÷ the messages in a final status (delivered, undeliverable, failed, unknown); null when none. */
export function deliveryRate(byStatus: Record<MessageStatus, number>): number | null {
  const { delivered, undeliverable, failed, unknown } = byStatus;
  const final = delivered + undeliverable + failed + unknown;
  return final === 0 ? null : delivered / final;
}

const zeroes = (): Record<MessageStatus, number> =>
  Object.fromEntries(MESSAGE_STATUSES.map((status) => [status, 0])) as Record<MessageStatus, number>;

export async function projectUsage(
  deps: { store: Pick<Store, "projects" | "messageLog">; clock: Clock },
  input: { viewer: AccountViewer; projectId: string; mode?: KeyMode; days?: number },
): Promise<ProjectUsage | DashboardRefusal> {
  const project = await ownedProject(deps.store, input.viewer, input.projectId);
  if (!project) return PROJECT_NOT_FOUND;
  const count = Math.min(Math.max(input.days ?? USAGE_DAYS, 1), 90);
  const end = nextUtcMidnight(deps.clock.now());
  const start = new Date(end.getTime() - count * DAY_MS);
  const rows = await deps.store.messageLog.usageByDay(project.id, start, end);
  const days: UsageDay[] = Array.from({ length: count }, (_, index) => ({
    day: new Date(start.getTime() + index * DAY_MS),
    byStatus: zeroes(),
    messages: 0,
    segments: 0,
  }));
  const totals = { messages: 0, segments: 0, byStatus: zeroes() };
  const byMode: Record<KeyMode, Record<MessageStatus, number>> = { live: zeroes(), test: zeroes() };
  for (const row of rows) {
    const inWindow = row.day.getTime() >= start.getTime() && row.day.getTime() < end.getTime();
    if (inWindow) byMode[row.mode][row.status] += row.messages;
    if (input.mode !== undefined && row.mode !== input.mode) continue;
    const day = days[Math.floor((row.day.getTime() - start.getTime()) / DAY_MS)];
    if (!day) continue;
    day.byStatus[row.status] += row.messages;
    day.messages += row.messages;
    day.segments += row.segments;
    totals.byStatus[row.status] += row.messages;
    totals.messages += row.messages;
    totals.segments += row.segments;
  }
  return {
    ok: true,
    days,
    totals,
    deliveryRate: deliveryRate(totals.byStatus),
    deliveryRateByMode: { live: deliveryRate(byMode.live), test: deliveryRate(byMode.test) },
  };
}
