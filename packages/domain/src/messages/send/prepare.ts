// Before anything is written: the message's ids, ciphertexts, fingerprints,
// sender and provider.
import { newId } from "@sms/crypto";
import type { Locale, TemplateId } from "@sms/templates";
import { IDEMPOTENCY_TTL_MS, type IdempotencyScope } from "../../model/idempotency.ts";
import { recipientFingerprintInput } from "../../model/limits.ts";
import { maskRecipient } from "../../model/recipient.ts";
import type { Draft, SendMessageDeps, SendMessageInput } from "./types.ts";

/** The message as it will be written: ids, ciphertexts, sender, provider. */
export async function prepare(
  deps: SendMessageDeps,
  input: SendMessageInput,
  facts: {
    scope: IdempotencyScope;
    locale: Locale;
    fingerprintInput: string;
    rendered: { template: TemplateId; text: string; segments: number; encoding: string };
  },
): Promise<Draft> {
  const { keyring } = deps;
  const { scope, rendered } = facts;
  const now = deps.clock.now();
  const messageId = newId("msg");
  const sender = {
    name: input.project.sender ?? deps.config.defaultSender,
    brandId: input.project.senderBrandId,
  };
  const live = input.mode === "live";
  const provider = live ? deps.providers.live : deps.providers.test;
  const [fingerprint, textCiphertext, recipientCiphertext, recipient] = await Promise.all([
    keyring.fingerprint(facts.fingerprintInput),
    keyring.encrypt(rendered.text, messageId),
    keyring.encrypt(input.request.to, messageId),
    keyring.fingerprint(recipientFingerprintInput(scope.projectId, input.request.to)),
  ]);
  return {
    queued: {
      messageId,
      idempotencyId: newId("idem"),
      scope,
      fingerprint,
      expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
      apiKeyId: input.keyId,
      recipientMasked: maskRecipient(input.request.to),
      recipientCiphertext,
      textCiphertext,
      template: rendered.template,
      locale: facts.locale,
      sender: sender.name,
      segments: rendered.segments,
      encoding: rendered.encoding,
      provider: provider?.name ?? "ubill",
      creditsReserved: live ? rendered.segments : 0,
      now,
    },
    to: input.request.to,
    text: rendered.text,
    sender,
    provider,
    recipient,
  };
}
