// Signing in, once for both the claim flow and the dashboard: which providers
// are offered, starting a sign-in (a sealed transaction cookie, then 303 to
// the provider) and reading the provider's answer at the one callback both
// share (/claim/callback/{provider}, so no other redirect URI has to be
// registered with the providers).
import type { CookieSealer } from "@sms/crypto";
import type { Logger } from "@sms/domain";
import {
  clearCookieHeader,
  cookieNames,
  readCookie,
  SIGN_IN_COOKIE_MAX_AGE_MS,
  type SignInTransaction,
  setCookieHeader,
} from "./cookies.ts";
import { redirect } from "./http.ts";
import type { IdentityProvider } from "./identity-providers.ts";
import { type CallbackOutcome, verifyCallback } from "./provider-callback.ts";

/** The development identity provider's label. */
export const DEV_PROVIDER_LABEL = "Development sign-in";

export type SignIn = ReturnType<typeof signInKit>;

export function signInKit(options: {
  providers: IdentityProvider[];
  devSignIn: boolean;
  publicBaseUrl: string;
  sealer: CookieSealer;
  clock: { now(): Date };
  serializeError(error: unknown): unknown;
}) {
  const { providers, devSignIn, sealer, clock } = options;
  const secure = options.publicBaseUrl.startsWith("https://");
  const names = cookieNames(secure);
  const providerById = (id: string | null | undefined) => providers.find((provider) => provider.id === id);
  const redirectUri = (provider: IdentityProvider) =>
    `${options.publicBaseUrl}/claim/callback/${provider.id}`;

  return {
    secure,
    devSignIn,
    providerById,
    /** The buttons a sign-in form offers. */
    choices: () => providers.map(({ id, label }) => ({ id, label })),
    /** "Google", "GitHub", the development provider's label when it is on; null for one not offered. */
    labelOf: (id: string): string | null =>
      providerById(id)?.label ?? (devSignIn && id === "dev" ? DEV_PROVIDER_LABEL : null),
    /** A provider this server offers now: a session from one it no longer offers (dev in production) is none. */
    offered: (id: string) => providerById(id) !== undefined || (id === "dev" && devSignIn),
    /** Origins a sign-in form's redirect continues to (the CSP's form-action). */
    formActionOrigins: () => [...new Set(providers.flatMap((provider) => provider.authorizeOrigins()))],

    /**
     * Starts a sign-in at `provider`: 303 to it with the transaction sealed in
     * a cookie; null when the provider could not be reached (logged).
     */
    async start(
      provider: IdentityProvider,
      fields: Pick<SignInTransaction, "token" | "purpose" | "returnTo">,
      log: Logger,
      what: "claim" | "dashboard",
    ): Promise<Response | null> {
      let begun: Awaited<ReturnType<IdentityProvider["begin"]>>;
      try {
        begun = await provider.begin({ redirectUri: redirectUri(provider) });
      } catch (error) {
        log.warn(
          { provider: provider.id, err: options.serializeError(error) },
          `${what} sign-in could not start`,
        );
        return null;
      }
      const transaction: SignInTransaction = {
        provider: provider.id,
        token: fields.token,
        state: begun.state,
        nonce: begun.nonce,
        codeVerifier: begun.codeVerifier,
        ...(fields.purpose ? { purpose: fields.purpose } : {}),
        ...(fields.returnTo ? { returnTo: fields.returnTo } : {}),
      };
      const cookie = await sealer.seal(names.signIn, transaction, SIGN_IN_COOKIE_MAX_AGE_MS, clock.now());
      log.info({ provider: provider.id }, `${what} sign-in started`);
      return redirect(begun.url.href, [
        setCookieHeader(names.signIn, cookie, { maxAgeMs: SIGN_IN_COOKIE_MAX_AGE_MS, secure }),
      ]);
    },

    /** The sign-in in progress in this browser (its sealed cookie), if any. */
    transaction: (request: Request) =>
      sealer.open<SignInTransaction>(
        names.signIn,
        readCookie(request.headers.get("cookie"), names.signIn),
        clock.now(),
      ),

    /**
     * The provider's answer, checked against the sign-in in progress, and
     * logged; `used` clears the transaction cookie unless the answer was not
     * its own (so the genuine answer can still finish it).
     */
    async finish(
      request: Request,
      provider: IdentityProvider,
      transaction: SignInTransaction,
      log: Logger,
    ): Promise<{ outcome: CallbackOutcome; used: string[] }> {
      const purpose = transaction.purpose ?? "claim";
      const outcome = await verifyCallback({
        url: new URL(request.url),
        provider,
        transaction,
        redirectUri: redirectUri(provider),
      });
      switch (outcome.kind) {
        case "state_mismatch":
          log.warn({ provider: provider.id, purpose }, "claim sign-in state mismatch");
          break;
        case "cancelled":
        case "provider_error":
          log.info(
            {
              provider: provider.id,
              purpose,
              error: outcome.kind === "cancelled" ? "access_denied" : outcome.code,
            },
            "claim sign-in not completed at the provider",
          );
          break;
        case "failed":
          log.warn(
            { provider: provider.id, purpose, reason: outcome.reason, detail: outcome.detail },
            "claim sign-in failed",
          );
          break;
        case "verified":
          log.info({ provider: provider.id, purpose }, "claim sign-in completed");
          break;
      }
      const used = outcome.kind === "state_mismatch" ? [] : [clearCookieHeader(names.signIn, secure)];
      return { outcome, used };
    },
  };
}
