// The windows a live send is counted in (write-ahead-live.ts and write-ahead-transaction.ts): the
// recipient's minute and UTC day, then the project's minute.
import { BUCKETS, type LimitCheck, windowOf } from "../../model/limits.ts";
import type { Draft, SendMessageDeps } from "./types.ts";

/** The windows a live send is counted in, in the lock order (record.ts gives them back in it). */
export type LiveWindows = ReturnType<typeof liveWindows>;

/** A live send's windows: the recipient's (a minute, a UTC day), then the project's minute. */
export function liveWindows(deps: SendMessageDeps, draft: Draft) {
  const { queued } = draft;
  const projectId = queued.scope.projectId;
  const { config } = deps;
  const { recipient } = draft;
  const minute: LimitCheck = {
    bucket: BUCKETS.messages(projectId),
    window: "minute",
    limit: config.messagesPerMinute,
    refusal: "rate_limited",
  };
  // The recipient's limits in the contract's two meanings: a minute's
  // window (rate_limited, retry within the minute) and a daily cap
  // (daily_limit_reached, reset at midnight UTC).
  const perRecipient: LimitCheck[] = [
    {
      bucket: BUCKETS.recipientMinute(projectId, recipient),
      window: "minute",
      limit: config.recipientLimits.perMinute,
      refusal: "rate_limited",
    },
    {
      bucket: BUCKETS.recipientDay(projectId, recipient),
      window: "utc_day",
      limit: config.recipientLimits.perDay,
      refusal: "daily_limit_reached",
    },
  ];
  const windows = perRecipient.map((check) => ({ check, ...windowOf(check.window, queued.now) }));
  const minuteWindow = windowOf("minute", queued.now);
  const recipientWindows = windows.map(({ check, start, end }) => ({
    bucket: check.bucket,
    start,
    end,
    cost: 1,
    limit: check.limit,
  }));
  // In the order the rows were locked: `record.ts` gives them back in it.
  const counted = [
    ...windows.map(({ check, start }) => ({ bucket: check.bucket, start })),
    { bucket: minute.bucket, start: minuteWindow.start },
  ];
  return { minute, windows, minuteWindow, recipientWindows, counted };
}
