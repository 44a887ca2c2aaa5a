import type { Logger } from "../../ports.ts";
import type { SubmitOutcome } from "../../provider.ts";
import type { Draft } from "./types.ts";

/** 2. Submit: the provider's answer; an adapter that throws counts as no definitive answer. */
export async function submit(draft: Draft, logger: Logger): Promise<SubmitOutcome> {
  const { provider, queued } = draft;
  if (!provider) return { kind: "unreachable", reason: "no live provider is configured" };
  try {
    return await provider.submit({
      messageId: queued.messageId,
      to: draft.to,
      text: draft.text,
      sender: draft.sender,
    });
  } catch (error) {
    logger.error(
      { message_id: queued.messageId, err: error },
      "provider adapter threw; treating the outcome as unknown",
    );
    return { kind: "indeterminate", reason: "provider adapter failed" };
  }
}
