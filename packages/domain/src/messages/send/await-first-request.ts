// A duplicate of a request in flight: wait for the first request's answer.
import type { IdempotencyScope } from "../../model/idempotency.ts";
import { systemTimer } from "../../ports.ts";
import type { PriorRecord } from "../../store/index.ts";
import type { SendMessageDeps, SendMessageResult } from "./types.ts";

/**
 * Another request holds the key. A different request gets 409; the same
 * request waits for the first one's answer and replays it, polling the
 * record with backoff (any instance may hold the key) for at most
 * `inFlightWaitMs`. "released": the first request sent nothing and gave the
 * key back, or its claim was abandoned and this request gave it up, so this
 * one may start over.
 */
export async function awaitFirstRequest(
  deps: SendMessageDeps,
  scope: IdempotencyScope,
  fingerprintInput: string,
  prior: PriorRecord | null,
): Promise<SendMessageResult | "released"> {
  const timer = deps.timer ?? systemTimer;
  const verified = new Map<string, boolean>();
  let record = prior ?? (await deps.store.idempotency.find(scope, deps.clock.now()));
  // The wait is for one claim: a newer claim of the key (the first one was
  // given back or given up meanwhile) starts it again.
  let claim: string | null = null;
  let started = timer.monotonicMs();
  for (let pause = 25; ; pause = Math.min(pause * 2, 500)) {
    if (record === null) return "released";
    if (record.messageId !== claim) {
      claim = record.messageId;
      started = timer.monotonicMs();
    }
    let same = verified.get(record.fingerprint);
    if (same === undefined) {
      same = await deps.keyring.verifyFingerprint(fingerprintInput, record.fingerprint);
      verified.set(record.fingerprint, same);
    }
    if (!same) return { ok: false, code: "idempotency_key_reused" };
    if (record.responseBody !== null) {
      const { fingerprint, expiresAt, responseBody } = record;
      deps.answered?.remember(scope, { fingerprint, expiresAt, responseBody });
      return { ok: true, replayed: true, message: record.responseBody };
    }
    const left = deps.config.inFlightWaitMs - (timer.monotonicMs() - started);
    if (left <= 0) {
      // A claim that never got its message (a test send's request died
      // between its two statements) is given up: nothing was sent or answered.
      if (await deps.store.idempotency.releaseAbandoned(scope, record.messageId)) return "released";
      // Another duplicate may have given the same claim up a moment earlier
      // (and may hold the key anew): look again before answering unresolved.
      const again = await deps.store.idempotency.find(scope, deps.clock.now());
      if (again === null || again.messageId !== claim || again.responseBody !== null) {
        record = again;
        continue;
      }
      return {
        ok: false,
        code: "first_request_unresolved",
        retryAfterMs: deps.config.unresolvedRetryAfterMs,
      };
    }
    await timer.sleep(Math.min(pause, left));
    record = await deps.store.idempotency.find(scope, deps.clock.now());
  }
}
