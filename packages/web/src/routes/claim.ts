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
// The token is handed to the procedures, which look it up by its SHA-256
// hash only. It is never logged (the access log names the route template) and
// the pages forbid caching and Referer. Between the steps the browser holds two
// short-lived sealed cookies (kit/cookies.ts): the sign-in transaction and,
// after a verified sign-in, the identity. The confirmation POST carries a CSRF
// token bound to the identity cookie, and both POSTs refuse cross-site requests.
import { timingSafeEqual } from "@sms/crypto";
import { developmentIdentity } from "@sms/domain";
import {
  cookieNames,
  IDENTITY_COOKIE_MAX_AGE_MS,
  readCookie,
  type SignedInIdentity,
  setCookieHeader,
  withCookies,
} from "../kit/cookies.ts";
import { FORM_PROBLEMS, type FormProblem, isSameOriginPost, readForm, redirect } from "../kit/http.ts";
import type { Sessions } from "../kit/sessions.ts";
import type { SignIn } from "../kit/sign-in.ts";
import type { PageErrorRenderer, PageRoute, PageState, WebPort } from "../port.ts";
import type { ClaimRefusal, Procedures } from "../records.ts";
import * as views from "../views/claim.ts";
import type { sessionRoutes } from "./session.ts";

/** A claim token is 32 random bytes as base64url (43 characters). */
const CLAIM_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** The two forms carry one short field each. */
const MAX_FORM_BYTES = 2048;

type Handler<S> = (request: Request, state: S, token: string, params: Record<string, string>) => Promise<Response>;

export type ClaimContext<S extends PageState> = {
  port: WebPort<S>;
  signIn: SignIn;
  sessions: Sessions;
  finishDashboardSignIn: ReturnType<typeof sessionRoutes<S>>["finishSignIn"];
};

/** What the gateway answers under /claim when no claim route took the request: HTML, not the API's envelope. */
export function claimPageErrors(devSignIn: boolean): PageErrorRenderer {
  const chrome = { devSignIn };
  return {
    prefix: "/claim",
    async render(error, requestId) {
      if (error.code === "route_not_found") return views.notFoundPage(chrome);
      if (error.status >= 500) return views.errorPage(chrome, requestId);
      return views.badRequestPage(chrome, { status: error.status, title: "That did not work", text: error.message, token: null });
    },
  };
}

export function claimRoutes<S extends PageState>(context: ClaimContext<S>): PageRoute<S>[] {
  const { port, signIn, sessions } = context;
  const { clock, sealer } = port;
  const chrome = { devSignIn: port.config.devSignIn };
  const names = cookieNames(signIn.secure);
  const origin = new URL(port.config.publicBaseUrl).origin;
  const who = (identity: Pick<SignedInIdentity, "email" | "name" | "subject">, label: string) =>
    identity.email ?? identity.name ?? `${label} user ${identity.subject}`;
  const refusalPage = (refusal: ClaimRefusal) =>
    refusal.code === "unknown"
      ? views.notFoundPage(chrome)
      : views.gonePage(chrome, refusal.code === "expired" ? "expired" : "used");
  const formProblem = (problem: FormProblem, token: string) =>
    views.badRequestPage(chrome, { ...FORM_PROBLEMS[problem], token });

  /** A route under /claim/{token}: a malformed token is not found; a failure is the error page. */
  function page(method: "GET" | "POST", path: `/${string}`, handle: Handler<S>): PageRoute<S> {
    return {
      method,
      path,
      async handle(request, state, params) {
        const token = params.token ?? "";
        if (path.includes("{token}") && !CLAIM_TOKEN_PATTERN.test(token)) return views.notFoundPage(chrome);
        try {
          return await handle(request, state, token, params);
        } catch (error) {
          state.log.error({ err: port.serializeError(error) }, "claim page failed");
          return views.errorPage(chrome, state.requestId);
        }
      },
    };
  }

  async function identityFor(request: Request, token: string): Promise<SignedInIdentity | null> {
    const identity = await sealer.open<SignedInIdentity>(
      names.identity,
      readCookie(request.headers.get("cookie"), names.identity),
      clock.now(),
    );
    if (!identity || typeof identity.token !== "string" || !timingSafeEqual(identity.token, token)) return null;
    if (signIn.labelOf(identity.provider) === null) return null;
    return identity;
  }

  /** The identity cookie for a verified sign-in, and the 303 to the confirmation. */
  async function signedIn(identity: SignedInIdentity, used: string[] = []): Promise<Response> {
    const cookie = await sealer.seal(names.identity, identity, IDENTITY_COOKIE_MAX_AGE_MS, clock.now());
    return redirect(`/claim/${identity.token}/confirm`, [
      ...used,
      setCookieHeader(names.identity, cookie, { maxAgeMs: IDENTITY_COOKIE_MAX_AGE_MS, secure: signIn.secure }),
    ]);
  }

  /**
   * Before any sign-in starts: counted per network (each start sends the
   * browser to a provider), then the claim link must still be good. The page
   * to answer instead, or null.
   */
  async function signInRefusal(procedures: Procedures, state: S, token: string): Promise<Response | null> {
    const limit = await procedures.pages.signIns.count();
    if (!limit.ok) return views.tooManySignInsPage(chrome, token, limit.retry_after_seconds);
    const described = await procedures.pages.claims.describe({ token });
    if (!described.ok) return refusalPage(described);
    state.projectId = described.summary.project_id;
    return null;
  }

  const landing = page("GET", "/claim/{token}", async (_request, state, token) => {
    const described = await port.procedures(state).pages.claims.describe({ token });
    if (!described.ok) return refusalPage(described);
    state.projectId = described.summary.project_id;
    return views.landingPage(
      { ...chrome, formActionOrigins: signIn.formActionOrigins() },
      { token, summary: described.summary, providers: signIn.choices(), freeCredits: port.config.freeCredits },
    );
  });

  const startSignIn = page("POST", "/claim/{token}/sign-in", async (request, state, token) => {
    if (!isSameOriginPost(request, origin)) return views.refusedPage(chrome, token);
    const form = await readForm(request, MAX_FORM_BYTES, port.readBody);
    if (typeof form === "string") return formProblem(form, token);
    const procedures = port.procedures(state);
    if (form.get("provider") === "dev" && port.config.devSignIn) {
      const typed = developmentIdentity(form.get("name") ?? "");
      if (!typed) {
        const text = "Type a name of 1 to 40 characters, with Latin letters or digits, to sign in as a local developer.";
        return views.badRequestPage(chrome, { status: 400, title: "Type a name", text, token });
      }
      const refusal = await signInRefusal(procedures, state, token);
      if (refusal) return refusal;
      state.log.info({ provider: "dev" }, "claim sign-in completed");
      const { subject, name } = typed;
      return signedIn({ provider: "dev", subject, email: null, name, token, sessionId: crypto.randomUUID() });
    }
    const provider = signIn.providerById(form.get("provider"));
    if (!provider) {
      const text = "Choose one of the sign-in buttons on the claim page.";
      return views.badRequestPage(chrome, { status: 400, title: "Unknown sign-in provider", text, token });
    }
    const refusal = await signInRefusal(procedures, state, token);
    if (refusal) return refusal;
    const started = await signIn.start(provider, { token }, state.log, "claim");
    return started ?? views.signInProblemPage(chrome, { problem: "unavailable", token, providerLabel: provider.label });
  });

  const callback = page("GET", "/claim/callback/{provider}", async (request, state, _token, params) => {
    const provider = signIn.providerById(params.provider);
    if (!provider) {
      const text = "This sign-in provider is not offered here.";
      return views.badRequestPage(chrome, { status: 404, title: "Unknown sign-in provider", text, token: null });
    }
    const transaction = await signIn.transaction(request);
    if (!transaction || transaction.provider !== provider.id) {
      state.log.info({ provider: provider.id }, "claim sign-in callback without a sign-in in progress");
      return views.signInProblemPage(chrome, { problem: "session_missing", token: null, providerLabel: provider.label });
    }
    const { outcome, used } = await signIn.finish(request, provider, transaction, state.log);
    if (transaction.purpose === "dashboard")
      return withCookies(await context.finishDashboardSignIn(outcome, transaction, provider, state), used);
    const providerLabel = provider.label;
    const { token } = transaction;
    switch (outcome.kind) {
      case "state_mismatch":
        return views.signInProblemPage(chrome, { problem: "state_mismatch", token, providerLabel });
      case "cancelled":
        return withCookies(views.cancelledPage(chrome, { token, providerLabel }), used);
      case "provider_error":
        return withCookies(views.signInProblemPage(chrome, { problem: "provider_error", token, providerLabel }), used);
      case "failed":
        return withCookies(views.signInProblemPage(chrome, { problem: outcome.reason, token, providerLabel }), used);
      case "verified":
        return signedIn({ ...outcome.identity, token, sessionId: crypto.randomUUID() }, used);
    }
  });

  const showConfirmation = page("GET", "/claim/{token}/confirm", async (request, state, token) => {
    const identity = await identityFor(request, token);
    if (!identity) return redirect(`/claim/${token}`);
    const label = signIn.labelOf(identity.provider) ?? identity.provider;
    const described = await port.procedures(state).pages.claims.describe({ token, identity });
    if (!described.ok) {
      if (described.code !== "claimed_by_you") return refusalPage(described);
      state.projectId = described.project_id;
      return views.claimedPage(chrome, {
        projectId: described.project_id,
        creditsGranted: 0,
        providerLabel: label,
        who: who(identity, label),
        already: true,
      });
    }
    state.projectId = described.summary.project_id;
    return views.confirmPage(chrome, {
      token,
      summary: described.summary,
      providerLabel: label,
      who: who(identity, label),
      csrfToken: await sealer.csrfToken(identity.sessionId),
      freeCredits: port.config.freeCredits,
    });
  });

  const confirm = page("POST", "/claim/{token}/confirm", async (request, state, token) => {
    if (!isSameOriginPost(request, origin)) {
      state.log.warn({}, "claim confirmation refused: cross-site request");
      return views.refusedPage(chrome, token);
    }
    const form = await readForm(request, MAX_FORM_BYTES, port.readBody);
    if (typeof form === "string") return formProblem(form, token);
    const identity = await identityFor(request, token);
    if (!identity) return views.signInRequiredPage(chrome, token);
    if (!(await sealer.verifyCsrf(identity.sessionId, form.get("csrf_token") ?? ""))) {
      state.log.warn({}, "claim confirmation refused: CSRF token mismatch");
      return views.refusedPage(chrome, token);
    }
    const procedures = port.procedures(state);
    const { provider, subject, email, name } = identity;
    const result = await procedures.pages.claims.claim({ token, identity: { provider, subject, email, name } });
    state.log.info(
      {
        outcome: result.ok ? "claimed" : result.code,
        provider,
        ...(result.ok || result.code === "claimed_by_you"
          ? { project_id: result.project_id, account_id: result.account_id }
          : {}),
        ...(result.ok ? { credits_granted: result.credits_granted } : {}),
      },
      "claim confirmation",
    );
    if (!result.ok && result.code !== "claimed_by_you") return refusalPage(result);
    state.projectId = result.project_id;
    const label = signIn.labelOf(provider) ?? provider;
    const claimed = views.claimedPage(chrome, {
      projectId: result.project_id,
      creditsGranted: result.ok ? result.credits_granted : 0,
      providerLabel: label,
      who: who(identity, label),
      already: !result.ok,
    });
    // The claimant lands in the dashboard signed in: the identity was verified minutes ago.
    return withCookies(claimed, [await sessions.start(procedures, { provider, subject, name: name ?? email })]);
  });

  // The callback is listed before the token routes: /claim/callback/x could
  // otherwise also read as a (malformed) token route.
  return [callback, landing, startSignIn, showConfirmation, confirm];
}
