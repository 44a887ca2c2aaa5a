// Operator: everything about one project an operator needs at a glance — its
// state, sender, credits (the cached balance checked against the ledger), the
// free-tier allowance, its keys (prefixes only) and recent message counts.
// Reading writes no audit row: only actions do (issue 23). Old rows may still
// hold "project.viewed", which AUDIT_ACTIONS keeps so that they stay readable.
import {
  type CheckedCredits,
  checkedCredits,
  type FreeTierUsage,
  freeTierUsage,
} from "../credits/project-balance.ts";
import type { KeyMode } from "../model/keys.ts";
import type { MessageStatus } from "../model/message.ts";
import { DAY_MS } from "../model/time.ts";
import type { KeyRecord, ProjectRecord } from "../store/index.ts";
import {
  checkCommon,
  type OperatorDeps,
  type OperatorInput,
  type OperatorRefusal,
  projectNotFound,
} from "./operator-support.ts";

export type MessageCount = { mode: KeyMode; status: MessageStatus; last24h: number; last7d: number };

export type ProjectDescription = {
  ok: true;
  project: Omit<ProjectRecord, "creditBalance" | "hasPaidCredits">;
  credits: CheckedCredits;
  freeTier: FreeTierUsage;
  keys: KeyRecord[];
  messages: MessageCount[];
};

export async function describeProject(
  deps: OperatorDeps & { config: { freeTierDailySegments: number } },
  input: OperatorInput & { projectId: string },
): Promise<ProjectDescription | OperatorRefusal> {
  const refused = checkCommon(input, input.projectId);
  if (refused) return refused;
  const { store } = deps;
  const { projectId } = input;
  const now = deps.clock.now();
  const [record, balance] = await Promise.all([
    store.projects.find(projectId),
    store.ledger.balance(projectId),
  ]);
  if (!record || !balance) return projectNotFound(projectId);

  const [freeTier, keys, counts] = await Promise.all([
    freeTierUsage(deps, { projectId, hasPaidCredits: balance.hasPaidCredits, now }),
    store.keys.listForProject(projectId),
    store.messages.countByModeAndStatus(
      projectId,
      new Date(now.getTime() - 7 * DAY_MS),
      new Date(now.getTime() - DAY_MS),
    ),
  ]);
  const { creditBalance: _balance, hasPaidCredits: _paid, ...project } = record;
  return {
    ok: true,
    project,
    credits: checkedCredits(balance),
    freeTier,
    keys,
    messages: counts.map((row) => ({
      mode: row.mode,
      status: row.status,
      last24h: row.recent,
      last7d: row.total,
    })),
  };
}
