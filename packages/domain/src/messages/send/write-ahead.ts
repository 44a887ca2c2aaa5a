// 1. Write ahead (send-message.ts): claim the key and count the send, before
// the provider is contacted. Three parts, one file each: a test key's
// (write-ahead-test-keys.ts: one statement claims and counts), a live key's
// one statement for a paid project that no rule refuses
// (write-ahead-live.ts), and the live transaction that finds the refusal or
// takes the free-tier allowance (write-ahead-transaction.ts).
import type { Claimed, Draft, Refusal, SendMessageDeps, SendMessageInput, Taken } from "./types.ts";
import { writeAheadLive } from "./write-ahead-live.ts";
import { writeAheadTest } from "./write-ahead-test-keys.ts";

/**
 * 1. Write ahead, committed before the provider is contacted. The request
 * that claims the key is counted; one that finds the key taken is not.
 */
export async function writeAhead(
  deps: SendMessageDeps,
  input: SendMessageInput,
  draft: Draft,
): Promise<Claimed | Taken | Refusal> {
  return input.mode === "test" ? writeAheadTest(deps, input, draft) : writeAheadLive(deps, draft);
}
