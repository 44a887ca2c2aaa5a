// The provider's answer at /claim/callback/{provider}, checked against the
// sign-in in progress in this browser: the state, a cancellation or error at
// the provider, then the code exchange and the identity (identity-providers.ts).
// Shared by the claim flow and the dashboard's sign-in, which use the same
// callback and differ only in what they do with the outcome.
import { timingSafeEqual } from "@sms/crypto";
import type { SignInTransaction } from "./cookies.ts";
import type { IdentityProvider, VerifiedIdentity } from "./identity-providers.ts";

export type CallbackOutcome =
  /** Not this browser's sign-in (a forged or stale answer): refuse it, keep the sign-in in progress. */
  | { kind: "state_mismatch" }
  | { kind: "cancelled" }
  /** The provider reported another error (a short safe code, for the log). */
  | { kind: "provider_error"; code: string }
  | { kind: "failed"; reason: "rejected" | "unavailable"; detail: string }
  | { kind: "verified"; identity: VerifiedIdentity };

export async function verifyCallback(options: {
  url: URL;
  provider: IdentityProvider;
  transaction: SignInTransaction;
  /** The redirect URI exactly as sent to the provider (on the public base URL). */
  redirectUri: string;
}): Promise<CallbackOutcome> {
  const { url, provider, transaction } = options;
  const returnedState = url.searchParams.get("state");
  if (!returnedState || !timingSafeEqual(returnedState, transaction.state)) return { kind: "state_mismatch" };
  const providerError = url.searchParams.get("error");
  if (providerError !== null) {
    const code = /^[a-z_]{1,40}$/.test(providerError) ? providerError : "other";
    return code === "access_denied" ? { kind: "cancelled" } : { kind: "provider_error", code };
  }
  // Rebuilt on the public base URL: behind a proxy request.url may differ,
  // and the redirect URI sent to the token endpoint must match exactly.
  const result = await provider.complete({
    callbackUrl: new URL(`${options.redirectUri}${url.search}`),
    state: transaction.state,
    nonce: transaction.nonce,
    codeVerifier: transaction.codeVerifier,
  });
  if (!result.ok) return { kind: "failed", reason: result.reason, detail: result.detail };
  return { kind: "verified", identity: result.identity };
}
