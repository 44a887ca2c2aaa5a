// The claim flow (spec 1.4, 2.3, 4.1): a human opens a test key's claim_url,
// signs in with Google or GitHub (or, outside production, as a local
// developer), confirms, and the project becomes theirs.
//
//   GET  /claim/{token}                what the project is; sign-in buttons
//   POST /claim/{token}/sign-in        provider=google|github → 303 to the provider;
//                                      provider=dev&name=… → 303 to confirm
//   GET  /claim/callback/{provider}    the provider's answer → 303 to confirm
//                                      (also the dashboard's sign-in callback)
//   GET  /claim/{token}/confirm        "you are X; claim this project?"
//   POST /claim/{token}/confirm        claims (one transaction) → result page,
//                                      signed in to the dashboard
//
// The token is looked up by its SHA-256 hash only. It is never logged (the
// access log names the route template, not the path) and the pages forbid
// caching and Referer. Between the steps the browser holds two short-lived
// sealed cookies (claim-cookies.ts): the sign-in transaction (state, nonce,
// PKCE verifier) and, after a verified sign-in, the identity. The
// confirmation POST carries a CSRF token bound to the identity cookie, and
// both POSTs refuse cross-site requests (Sec-Fetch-Site / Origin).

import { type CookieSealer, createCookieSealer, sha256Hex, timingSafeEqual } from "@sms/crypto";
import { type Clock, developmentIdentity } from "@sms/domain";
import type { Config } from "../../env.ts";
import { rateLimitSubject } from "../../http/client-address.ts";
import type { ExtraRoute, PageErrors } from "../../http/gateway.ts";
import { secondsUntil } from "../../http/rate-limit-headers.ts";
import { type AppLogger, serializeError } from "../../logger.ts";
import type { ApiServices } from "../../services.ts";
import type { RequestState } from "../../trpc/request-state.ts";
import { type FormProblem, isSameOriginPost, readForm, withCookies } from "../forms.ts";
import {
  clearCookieHeader,
  cookieNames,
  generateCookieSecret,
  IDENTITY_COOKIE_MAX_AGE_MS,
  readCookie,
  SIGN_IN_COOKIE_MAX_AGE_MS,
  type SignedInIdentity,
  type SignInTransaction,
  setCookieHeader,
} from "./claim-cookies.ts";
import {
  badRequestPage,
  cancelledPage,
  claimedPage,
  confirmPage,
  errorPage,
  gonePage,
  landingPage,
  notFoundPage,
  refusedPage,
  signInProblemPage,
  signInRequiredPage,
  tooManySignInsPage,
  withDevelopmentNotice,
} from "./claim-views.ts";
import { type IdentityProvider, identityProvidersFromConfig } from "./identity-providers.ts";
import { type CallbackOutcome, verifyCallback } from "./provider-callback.ts";

/** A claim token is 32 random bytes as base64url (43 characters). */
const CLAIM_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** The two forms carry one short field each. */
const MAX_FORM_BYTES = 2048;

export type ClaimPageDeps = {
  services: ApiServices["claims"];
  clock: Clock;
  logger: AppLogger;
  config: Pick<Config, "publicBaseUrl" | "claims"> & { dashboard?: Pick<Config["dashboard"], "devSignIn"> };
};

/** What the dashboard lends the claim flow (pages/dashboard): its sessions and its half of the callback. */
export type ClaimDashboardHooks = {
  /** A Set-Cookie header that signs `identity` in to the dashboard (after a successful claim). */
  sessionCookieFor(identity: { provider: string; subject: string; name: string | null }): Promise<string>;
  /** Finishes a sign-in that started on the dashboard and came back through the shared callback. */
  finishSignIn(
    outcome: CallbackOutcome,
    transaction: SignInTransaction,
    provider: IdentityProvider,
    state: RequestState,
  ): Promise<Response>;
};

export type ClaimPageOptions = {
  /** Default: the providers configured in the environment. */
  providers?: IdentityProvider[];
  /** Default: one made from CLAIM_COOKIE_SECRET (or a throw-away secret outside production). */
  sealer?: CookieSealer;
  dashboard?: ClaimDashboardHooks;
};

/** The development identity provider's label. */
export const DEV_PROVIDER_LABEL = "Development sign-in";

function redirect(location: string, cookies: string[] = []): Response {
  const headers = new Headers({
    Location: location,
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
  });
  for (const cookie of cookies) headers.append("Set-Cookie", cookie);
  return new Response(null, { status: 303, headers });
}

function formProblem(problem: FormProblem, token: string): Response {
  if (problem === "too_slow") {
    return badRequestPage({
      status: 408,
      title: "Form too slow",
      text: "The form did not arrive in time. Send it again.",
      token,
    });
  }
  return problem === "too_large"
    ? badRequestPage({
        status: 413,
        title: "Form too large",
        text: "The form sent was larger than this page ever sends.",
        token,
      })
    : badRequestPage({
        status: 415,
        title: "Unsupported form",
        text: "The form must be sent as an ordinary HTML form.",
        token,
      });
}

/** Which "gone" page a spent link shows ("claimed by you" is shown only to that identity). */
function goneReason(code: "claimed_by_you" | "used" | "expired"): "used" | "expired" {
  return code === "expired" ? "expired" : "used";
}

/** What the gateway answers under /claim when no claim route took the request: HTML, not the API's envelope. */
export const claimPageErrors: PageErrors = {
  prefix: "/claim",
  async render(error, requestId) {
    if (error.code === "route_not_found") return notFoundPage();
    if (error.status >= 500) return errorPage(requestId);
    return badRequestPage({
      status: error.status,
      title: "That did not work",
      text: error.message,
      token: null,
    });
  },
};

export async function claimPageRoutes(
  deps: ClaimPageDeps,
  options: ClaimPageOptions = {},
): Promise<ExtraRoute[]> {
  const { config, clock, services } = deps;
  const providers = options.providers ?? identityProvidersFromConfig(config.claims);
  const devSignIn = config.dashboard?.devSignIn === true;
  let sealer = options.sealer;
  if (!sealer) {
    let secret = config.claims.cookieSecret;
    if (!secret) {
      deps.logger.warn(
        {},
        "CLAIM_COOKIE_SECRET is not set: using a throw-away in-memory secret (development only; sign-ins do not survive a restart or cross instances)",
      );
      secret = generateCookieSecret();
    }
    sealer = await createCookieSealer(secret, { purpose: "claim" });
  }
  const seal = sealer;
  const baseUrl = config.publicBaseUrl;
  const origin = new URL(baseUrl).origin;
  const secure = baseUrl.startsWith("https://");
  const names = cookieNames(secure);
  const freeCredits = config.claims.freeCredits;
  const providerById = (id: string | null | undefined) => providers.find((provider) => provider.id === id);
  /** "Google", "GitHub", or the development provider's label when it is on. */
  const labelOf = (id: string): string | null =>
    providerById(id)?.label ?? (devSignIn && id === "dev" ? DEV_PROVIDER_LABEL : null);
  const redirectUri = (provider: IdentityProvider) => `${baseUrl}/claim/callback/${provider.id}`;
  const formActionOrigins = () => [...new Set(providers.flatMap((provider) => provider.authorizeOrigins()))];
  const who = (identity: Pick<SignedInIdentity, "email" | "name" | "subject">, label: string) =>
    identity.email ?? identity.name ?? `${label} user ${identity.subject}`;

  async function identityFor(request: Request, token: string): Promise<SignedInIdentity | null> {
    const identity = await seal.open<SignedInIdentity>(
      names.identity,
      readCookie(request.headers.get("cookie"), names.identity),
      clock.now(),
    );
    if (!identity || typeof identity.token !== "string" || !timingSafeEqual(identity.token, token))
      return null;
    if (labelOf(identity.provider) === null) return null;
    return identity;
  }

  /** Unexpected failures become an HTML error page (the gateway would answer JSON). */
  function page(
    method: ExtraRoute["method"],
    path: ExtraRoute["path"],
    handle: (request: Request, state: RequestState, params: Record<string, string>) => Promise<Response>,
  ): ExtraRoute {
    return {
      method,
      path,
      async handle(request, state, params) {
        let response: Response;
        try {
          response = await handle(request, state, params);
        } catch (error) {
          state.log.error({ err: serializeError(error) }, "claim page failed");
          response = errorPage(state.requestId);
        }
        // Every page says so while anyone can sign in as anyone.
        return devSignIn ? withDevelopmentNotice(response) : response;
      },
    };
  }

  const landing = page("GET", "/claim/{token}", async (_request, state, params) => {
    const token = params.token ?? "";
    if (!CLAIM_TOKEN_PATTERN.test(token)) return notFoundPage();
    const described = await services.describe({ tokenHash: await sha256Hex(token), now: clock.now() });
    if (!described.ok)
      return described.code === "unknown" ? notFoundPage() : gonePage(goneReason(described.code));
    state.projectId = described.summary.projectId;
    return landingPage({
      token,
      summary: described.summary,
      providers: providers.map(({ id, label }) => ({ id, label })),
      devSignIn,
      freeCredits,
      formActionOrigins: formActionOrigins(),
    });
  });

  const startSignIn = page("POST", "/claim/{token}/sign-in", async (request, state, params) => {
    const token = params.token ?? "";
    if (!CLAIM_TOKEN_PATTERN.test(token)) return notFoundPage();
    if (!isSameOriginPost(request, origin)) return refusedPage(token);
    const form = await readForm(request, MAX_FORM_BYTES);
    if (typeof form === "string") return formProblem(form, token);
    if (form.get("provider") === "dev" && devSignIn) return developmentSignIn(form, state, token);
    const provider = providerById(form.get("provider"));
    if (!provider) {
      return badRequestPage({
        status: 400,
        title: "Unknown sign-in provider",
        text: "Choose one of the sign-in buttons on the claim page.",
        token,
      });
    }
    const refusal = await signInRefusal(state, token);
    if (refusal) return refusal;

    let start: Awaited<ReturnType<IdentityProvider["begin"]>>;
    try {
      start = await provider.begin({ redirectUri: redirectUri(provider) });
    } catch (error) {
      state.log.warn({ provider: provider.id, err: serializeError(error) }, "claim sign-in could not start");
      return signInProblemPage({ problem: "unavailable", token, providerLabel: provider.label });
    }
    const transaction: SignInTransaction = {
      provider: provider.id,
      token,
      state: start.state,
      nonce: start.nonce,
      codeVerifier: start.codeVerifier,
    };
    const cookie = await seal.seal(names.signIn, transaction, SIGN_IN_COOKIE_MAX_AGE_MS, clock.now());
    state.log.info({ provider: provider.id }, "claim sign-in started");
    return redirect(start.url.href, [
      setCookieHeader(names.signIn, cookie, { maxAgeMs: SIGN_IN_COOKIE_MAX_AGE_MS, secure }),
    ]);
  });

  /**
   * Before any sign-in starts: counted per network (each start sends the
   * browser to a provider, so one network may start only so many), then the
   * claim link must still be good. The page to answer instead, or null.
   */
  async function signInRefusal(state: RequestState, token: string): Promise<Response | null> {
    const limit = await services.countSignIn(rateLimitSubject(state.clientAddress));
    if (!limit.ok) return tooManySignInsPage(token, secondsUntil(limit.limit.resetAt, clock.now()));
    const described = await services.describe({ tokenHash: await sha256Hex(token), now: clock.now() });
    if (!described.ok)
      return described.code === "unknown" ? notFoundPage() : gonePage(goneReason(described.code));
    state.projectId = described.summary.projectId;
    return null;
  }

  /**
   * provider=dev: the typed name is the identity (development only, refused
   * unless DEV_SIGN_IN is on). Counted like any sign-in start; then straight
   * to the confirmation, as after a provider's answer.
   */
  async function developmentSignIn(
    form: URLSearchParams,
    state: RequestState,
    token: string,
  ): Promise<Response> {
    const typed = developmentIdentity(form.get("name") ?? "");
    if (!typed) {
      return badRequestPage({
        status: 400,
        title: "Type a name",
        text: "Type a name of 1 to 40 characters, with Latin letters or digits, to sign in as a local developer.",
        token,
      });
    }
    const refusal = await signInRefusal(state, token);
    if (refusal) return refusal;
    const identity: SignedInIdentity = {
      provider: "dev",
      subject: typed.subject,
      email: null,
      name: typed.name,
      token,
      sessionId: crypto.randomUUID(),
    };
    const cookie = await seal.seal(names.identity, identity, IDENTITY_COOKIE_MAX_AGE_MS, clock.now());
    state.log.info({ provider: "dev" }, "claim sign-in completed");
    return redirect(`/claim/${token}/confirm`, [
      setCookieHeader(names.identity, cookie, { maxAgeMs: IDENTITY_COOKIE_MAX_AGE_MS, secure }),
    ]);
  }

  const callback = page("GET", "/claim/callback/{provider}", async (request, state, params) => {
    const provider = providerById(params.provider);
    if (!provider) {
      return badRequestPage({
        status: 404,
        title: "Unknown sign-in provider",
        text: "This sign-in provider is not offered here.",
        token: null,
      });
    }
    const url = new URL(request.url);
    const transaction = await seal.open<SignInTransaction>(
      names.signIn,
      readCookie(request.headers.get("cookie"), names.signIn),
      clock.now(),
    );
    if (!transaction || transaction.provider !== provider.id) {
      state.log.info({ provider: provider.id }, "claim sign-in callback without a sign-in in progress");
      return signInProblemPage({ problem: "session_missing", token: null, providerLabel: provider.label });
    }
    const purpose = transaction.purpose ?? "claim";
    const outcome = await verifyCallback({ url, provider, transaction, redirectUri: redirectUri(provider) });
    const clear = clearCookieHeader(names.signIn, secure);
    switch (outcome.kind) {
      case "state_mismatch":
        state.log.warn({ provider: provider.id, purpose }, "claim sign-in state mismatch");
        break;
      case "cancelled":
      case "provider_error":
        state.log.info(
          {
            provider: provider.id,
            purpose,
            error: outcome.kind === "cancelled" ? "access_denied" : outcome.code,
          },
          "claim sign-in not completed at the provider",
        );
        break;
      case "failed":
        state.log.warn(
          { provider: provider.id, purpose, reason: outcome.reason, detail: outcome.detail },
          "claim sign-in failed",
        );
        break;
      case "verified":
        state.log.info({ provider: provider.id, purpose }, "claim sign-in completed");
        break;
    }
    // The sign-in in progress stays when the answer was not its own, so the
    // genuine answer can still finish it; otherwise it is used up.
    const used = outcome.kind === "state_mismatch" ? [] : [clear];
    if (transaction.purpose === "dashboard") {
      const response = options.dashboard
        ? await options.dashboard.finishSignIn(outcome, transaction, provider, state)
        : signInProblemPage({ problem: "session_missing", token: null, providerLabel: provider.label });
      return withCookies(response, used);
    }
    switch (outcome.kind) {
      case "state_mismatch":
        return signInProblemPage({
          problem: "state_mismatch",
          token: transaction.token,
          providerLabel: provider.label,
        });
      case "cancelled":
        return withCookies(cancelledPage({ token: transaction.token, providerLabel: provider.label }), used);
      case "provider_error":
        return withCookies(
          signInProblemPage({
            problem: "provider_error",
            token: transaction.token,
            providerLabel: provider.label,
          }),
          used,
        );
      case "failed":
        return withCookies(
          signInProblemPage({
            problem: outcome.reason,
            token: transaction.token,
            providerLabel: provider.label,
          }),
          used,
        );
      case "verified": {
        const identity: SignedInIdentity = {
          ...outcome.identity,
          token: transaction.token,
          sessionId: crypto.randomUUID(),
        };
        const cookie = await seal.seal(names.identity, identity, IDENTITY_COOKIE_MAX_AGE_MS, clock.now());
        return redirect(`/claim/${transaction.token}/confirm`, [
          ...used,
          setCookieHeader(names.identity, cookie, { maxAgeMs: IDENTITY_COOKIE_MAX_AGE_MS, secure }),
        ]);
      }
    }
  });

  const showConfirmation = page("GET", "/claim/{token}/confirm", async (request, state, params) => {
    const token = params.token ?? "";
    if (!CLAIM_TOKEN_PATTERN.test(token)) return notFoundPage();
    const identity = await identityFor(request, token);
    if (!identity) return redirect(`/claim/${token}`);
    const label = labelOf(identity.provider) ?? identity.provider;
    const described = await services.describe({
      tokenHash: await sha256Hex(token),
      now: clock.now(),
      identity,
    });
    if (!described.ok) {
      if (described.code === "unknown") return notFoundPage();
      if (described.code !== "claimed_by_you") return gonePage(goneReason(described.code));
      state.projectId = described.projectId;
      return claimedPage({
        projectId: described.projectId,
        creditsGranted: 0,
        providerLabel: label,
        who: who(identity, label),
        already: true,
      });
    }
    state.projectId = described.summary.projectId;
    return confirmPage({
      token,
      summary: described.summary,
      providerLabel: label,
      who: who(identity, label),
      csrfToken: await seal.csrfToken(identity.sessionId),
      freeCredits,
    });
  });

  const confirm = page("POST", "/claim/{token}/confirm", async (request, state, params) => {
    const token = params.token ?? "";
    if (!CLAIM_TOKEN_PATTERN.test(token)) return notFoundPage();
    if (!isSameOriginPost(request, origin)) {
      state.log.warn({}, "claim confirmation refused: cross-site request");
      return refusedPage(token);
    }
    const form = await readForm(request, MAX_FORM_BYTES);
    if (typeof form === "string") return formProblem(form, token);
    const identity = await identityFor(request, token);
    if (!identity) return signInRequiredPage(token);
    if (!(await seal.verifyCsrf(identity.sessionId, form.get("csrf_token") ?? ""))) {
      state.log.warn({}, "claim confirmation refused: CSRF token mismatch");
      return refusedPage(token);
    }
    const label = labelOf(identity.provider) ?? identity.provider;
    const result = await services.claim({
      tokenHash: await sha256Hex(token),
      identity: {
        provider: identity.provider,
        subject: identity.subject,
        email: identity.email,
        name: identity.name,
      },
      now: clock.now(),
    });
    state.log.info(
      {
        outcome: result.ok ? "claimed" : result.code,
        provider: identity.provider,
        ...(result.ok || result.code === "claimed_by_you"
          ? { project_id: result.projectId, account_id: result.accountId }
          : {}),
        ...(result.ok ? { credits_granted: result.creditsGranted } : {}),
      },
      "claim confirmation",
    );
    if (result.ok || result.code === "claimed_by_you") {
      state.projectId = result.projectId;
      const page = claimedPage({
        projectId: result.projectId,
        creditsGranted: result.ok ? result.creditsGranted : 0,
        providerLabel: label,
        who: who(identity, label),
        already: !result.ok,
      });
      // The claimant lands in the dashboard signed in: the identity was verified minutes ago.
      if (!options.dashboard) return page;
      return withCookies(page, [
        await options.dashboard.sessionCookieFor({
          provider: identity.provider,
          subject: identity.subject,
          name: identity.name ?? identity.email,
        }),
      ]);
    }
    return result.code === "unknown" ? notFoundPage() : gonePage(result.code);
  });

  // The callback is listed before the token routes: /claim/callback/x could
  // otherwise also read as a (malformed) token route.
  return [callback, landing, startSignIn, showConfirmation, confirm];
}
