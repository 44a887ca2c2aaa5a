// GET /v1/verifications/{id} (issue 22): the current state. Absent ids,
// malformed ids and other projects' ids are the same single lookup and the
// same answer.
import { isId } from "@sms/crypto";
import { toVerificationResource, type VerificationResource } from "../model/verification.ts";
import type { Clock } from "../ports.ts";
import type { VerificationStore } from "../store/index.ts";

export type GetVerificationResult =
  | { ok: true; verification: VerificationResource }
  | { ok: false; code: "verification_not_found" };

export async function getVerification(
  deps: { store: { verifications: Pick<VerificationStore, "read"> }; clock: Clock },
  input: { projectId: string; verificationId: string },
): Promise<GetVerificationResult> {
  const id = isId("vrf", input.verificationId) ? input.verificationId : "vrf_invalid";
  const state = await deps.store.verifications.read(id, input.projectId);
  if (!state) return { ok: false, code: "verification_not_found" };
  return { ok: true, verification: toVerificationResource(state, deps.clock.now()) };
}
