// Operator: re-encrypt stored texts and numbers under the keyring's current
// key (privacy/rotate-message-keys.ts), and write the audit row. Counts and
// key ids only: never key material.
import type { Keyring } from "@sms/crypto";
import { type RotateMessageKeysCounts, rotateMessageKeys } from "../privacy/rotate-message-keys.ts";
import {
  checkCommon,
  invalid,
  type OperatorDeps,
  type OperatorInput,
  type OperatorRefusal,
} from "./operator-support.ts";

export type RotateKeysResult =
  | ({ ok: true; currentKeyId: string } & RotateMessageKeysCounts)
  | OperatorRefusal;

export async function rotateKeys(
  deps: OperatorDeps & { keyring: Keyring },
  input: OperatorInput & { batchSize: number },
): Promise<RotateKeysResult> {
  const refused = checkCommon(input);
  if (refused) return refused;
  if (!Number.isInteger(input.batchSize) || input.batchSize < 1 || input.batchSize > 10_000)
    return invalid("batch_size");
  const counts = await rotateMessageKeys(deps, { batchSize: input.batchSize, now: deps.clock.now() });
  const currentKeyId = deps.keyring.currentKeyId;
  await deps.store.audit.write({
    actor: input.actor,
    action: "message_keys.rotated",
    projectId: null,
    details: { current_key_id: currentKeyId, ...counts },
    now: deps.clock.now(),
  });
  return { ok: true, currentKeyId, ...counts };
}
