// A test database for a suite whose clock is pinned to a date. The migration
// and the service's start-up make the partitions of the real month and the
// next ones; a pinned date elsewhere (2026-11-22, most suites' NOW) would put
// its rows in the DEFAULT partitions and plan them there, so the suite would
// pass or fail by the calendar. This makes the pinned month's partitions, and
// the next month's (suites move their clock on by days), before the suite runs.
import { type BackendKind, createTestDatabase, type TestDatabase } from "@sms/db/testing";
import { ensureMonth } from "../../src/privacy/partitions.ts";
import { createStore } from "../../src/store/index.ts";
import { monthStart } from "../../src/store/partitions.ts";

/** Creates the partitions of `pinned`'s month and the next one where missing. */
export async function preparePinnedMonths(t: TestDatabase, pinned: Date): Promise<void> {
  const store = createStore(t.db);
  for (const offset of [0, 1]) await ensureMonth({ store }, monthStart(pinned, offset));
}

/** A migrated test database whose partitions hold `pinned`'s month and the next. */
export async function createPinnedTestDatabase(kind: BackendKind, pinned: Date): Promise<TestDatabase> {
  const t = await createTestDatabase(kind);
  try {
    await preparePinnedMonths(t, pinned);
  } catch (error) {
    await t.drop().catch(() => undefined);
    throw error;
  }
  return t;
}
