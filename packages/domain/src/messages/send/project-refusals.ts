// The projects whose live write-ahead the one statement (messages.writeAheadPaid)
// cannot do this minute, as this instance last found them: a project without
// paid credits (the free tier's allowance is the transaction's), or one that
// the transaction refused as a whole (its minute used up, its credits short,
// its daily credit cap reached). Until that minute ends, their live sends go
// straight to the transaction instead of running the statement only to see it
// refused: a client that retries past its limit costs one write-ahead a try,
// not two.
//
// Only a hint. The transaction decides every refusal, so an entry that is
// wrong (credits granted meanwhile, another instance's sends) costs a send the
// statement's speed, never a wrong answer; and a project is remembered at most
// until the end of the minute it was refused in.
import { createCache } from "../../cache.ts";

export type ProjectRefusals = {
  /** Whether the project's live sends go straight to the transaction at `now` (the send's clock). */
  has(projectId: string, now: Date): boolean;
  /** Its live sends go straight to the transaction until `until`. */
  remember(projectId: string, until: Date): void;
  /** Its live sends try the statement again. */
  forget(projectId: string): void;
};

/** Enough for every project that sends live through one instance in a minute; a few hundred kB at most. */
export const DEFAULT_REMEMBERED_PROJECTS = 4_096;

export function createProjectRefusals(maxEntries = DEFAULT_REMEMBERED_PROJECTS): ProjectRefusals {
  /** Projects by id, each until the end of the minute it was refused in (the send's clock). */
  const until = createCache<string, true>({ namespace: "project_refusals", maxEntries });
  return {
    has: (projectId, now) => until.get(projectId, now.getTime()) !== undefined,
    remember(projectId, end) {
      until.setUntil(projectId, true, end.getTime());
    },
    forget(projectId) {
      until.delete(projectId);
    },
  };
}
