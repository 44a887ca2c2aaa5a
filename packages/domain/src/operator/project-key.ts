// One key of a project, by id: what a revoke confirmation shows (its prefix,
// never the key). Another project's key, or a malformed id, is not found.
import { isId } from "@sms/crypto";
import type { KeyRecord, Store } from "../store/index.ts";

export async function findProjectKey(
  deps: { store: Pick<Store, "keys"> },
  input: { projectId: string; keyId: string },
): Promise<{ ok: true; key: KeyRecord } | { ok: false; code: "key_not_found" }> {
  const key = isId("key", input.keyId) ? await deps.store.keys.findById(input.keyId) : null;
  if (key?.projectId !== input.projectId) return { ok: false, code: "key_not_found" };
  return { ok: true, key };
}
