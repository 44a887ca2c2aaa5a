// A suite's test database on one backend with one project in it: made before
// the suite's tests (with the partitions of `createdAt`'s month and the next),
// dropped after them.
import { newId } from "@sms/crypto";
import type { BackendKind, TestDatabase } from "@sms/db/testing";
import { afterAll, beforeAll } from "vitest";
import { createStore } from "../../src/store/index.ts";
import { createPinnedTestDatabase } from "./pinned-database.ts";

export type ProjectDatabase = { readonly t: TestDatabase; readonly projectId: string };

/**
 * Registers the suite's beforeAll/afterAll (`timeoutMs`: the beforeAll's, else vitest's); read `t` and
 * `projectId` (unclaimed) in its tests.
 */
export function projectDatabase(
  kind: BackendKind,
  createdAt: Date,
  options: { timeoutMs?: number } = {},
): ProjectDatabase {
  const suite = { projectId: newId("prj") } as { t: TestDatabase; projectId: string };
  beforeAll(async () => {
    suite.t = await createPinnedTestDatabase(kind, createdAt);
    await createStore(suite.t.db).projects.create(suite.projectId, createdAt);
  }, options.timeoutMs);
  afterAll(() => suite.t?.drop());
  return suite;
}
