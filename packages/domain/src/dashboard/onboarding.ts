// The overview's onboarding checklist: first test send → seen delivered → live
// key created → first live send. Each item ticks from the project's rows.
import type { OnboardingFacts } from "../store/message-log.ts";
import type { Store } from "../store/index.ts";
import { type AccountViewer, type DashboardRefusal, ownedProject, PROJECT_NOT_FOUND } from "./access.ts";

export async function projectOnboarding(
  deps: { store: Pick<Store, "projects" | "messageLog"> },
  input: { viewer: AccountViewer; projectId: string },
): Promise<({ ok: true; done: boolean } & OnboardingFacts) | DashboardRefusal> {
  const project = await ownedProject(deps.store, input.viewer, input.projectId);
  if (!project) return PROJECT_NOT_FOUND;
  const facts = await deps.store.messageLog.onboarding(project.id);
  return { ok: true, done: facts.testSent && facts.delivered && facts.liveKey && facts.liveSent, ...facts };
}
