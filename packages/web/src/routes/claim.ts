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
import type { ClaimRefusal, Procedures } from "@sms/contract";
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
import type { ClaimChrome } from "../views/claim.ts";
import * as views from "../views/claim.ts";
import type { sessionRoutes } from "./session.ts";

/** A claim token is 32 random bytes as base64url (43 characters). */
const CLAIM_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** The two forms carry one short field each. */
const MAX_FORM_BYTES = 2048;

type Handler<S> = (
  request: Request,
  state: S,
  token: string,
  params: Record<string, string>,
) => Promise<Response>;

export type ClaimContext<S extends PageState> = {
  port: WebPort<S>;
  signIn: SignIn;
  sessions: Sessions;
  finishDashboardSignIn: ReturnType<typeof sessionRoutes<S>>["finishSignIn"];
  /** The dashboard's stylesheet (the claim pages wear the dashboard's frame). */
  cssUrl: string;
};

/** What the gateway answers under /claim when no claim route took the request: HTML, not the API's envelope. */
export function claimPageErrors(chrome: ClaimChrome): PageErrorRenderer {
  return {
    prefix: "/claim",
    async render(error, requestId) {
      if (error.code === "route_not_found") return views.notFoundPage(chrome);
      if (error.status >= 500) return views.errorPage(chrome, requestId);
      return views.badRequestPage(chrome, {
        status: error.status,
        title: "That did not work",
        text: error.message,
        token: null,
      });
    },
  };
}

/** What every claim route shares: its chrome, the cookies, the checks before a sign-in, the refusal pages. */
function claimKit<S extends PageState>(context: ClaimContext<S>) {
  const { port, signIn } = context;
  const { clock, sealer } = port;
  const chrome: ClaimChrome = { devSignIn: port.config.devSignIn, cssUrl: context.cssUrl };
  const names = cookieNames(signIn.secure);
  const refusalPage = (refusal: ClaimRefusal) =>
    refusal.code === "unknown"
      ? views.notFoundPage(chrome)
      : views.gonePage(chrome, refusal.code === "expired" ? "expired" : "used");
  return {
    ...context,
    chrome,
    origin: new URL(port.config.publicBaseUrl).origin,
    who: (identity: Pick<SignedInIdentity, "email" | "name" | "subject">, label: string) =>
      identity.email ?? identity.name ?? `${label} user ${identity.subject}`,
    refusalPage,
    formProblem: (problem: FormProblem, token: string) =>
      views.badRequestPage(chrome, { ...FORM_PROBLEMS[problem], token }),
    readForm: (request: Request) => readForm(request, MAX_FORM_BYTES, port.readBody),

    /** A route under /claim/{token}: a malformed token is not found; a failure is the error page. */
    page(method: "GET" | "POST", path: `/${string}`, handle: Handler<S>): PageRoute<S> {
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
    },

    /** The verified identity of this browser's sign-in for this link, if any. */
    async identityFor(request: Request, token: string): Promise<SignedInIdentity | null> {
      const cookie = readCookie(request.headers.get("cookie"), names.identity);
      const identity = await sealer.open<SignedInIdentity>(names.identity, cookie, clock.now());
      if (!identity || typeof identity.token !== "string" || !timingSafeEqual(identity.token, token))
        return null;
      return signIn.labelOf(identity.provider) === null ? null : identity;
    },

    /** The identity cookie for a verified sign-in, and the 303 to the confirmation. */
    async signedIn(identity: SignedInIdentity, used: string[] = []): Promise<Response> {
      const cookie = await sealer.seal(names.identity, identity, IDENTITY_COOKIE_MAX_AGE_MS, clock.now());
      const maxAgeMs = IDENTITY_COOKIE_MAX_AGE_MS;
      return redirect(`/claim/${identity.token}/confirm`, [
        ...used,
        setCookieHeader(names.identity, cookie, { maxAgeMs, secure: signIn.secure }),
      ]);
    },

    /**
     * Before any sign-in starts: counted per network (each start sends the
     * browser to a provider), then the claim link must still be good. The
     * page to answer instead, or null.
     */
    async signInRefusal(procedures: Procedures, state: S, token: string): Promise<Response | null> {
      const limit = await procedures.pages.signIns.count();
      if (!limit.ok) return views.tooManySignInsPage(chrome, token, limit.retry_after_seconds);
      const described = await procedures.pages.claims.describe({ token });
      if (!described.ok) return refusalPage(described);
      state.projectId = described.summary.project_id;
      return null;
    },
  };
}

type ClaimKit<S extends PageState> = ReturnType<typeof claimKit<S>>;

function landing<S extends PageState>(kit: ClaimKit<S>) {
  return kit.page("GET", "/claim/{token}", async (_request, state, token) => {
    const described = await kit.port.procedures(state).pages.claims.describe({ token });
    if (!described.ok) return kit.refusalPage(described);
    state.projectId = described.summary.project_id;
    return views.landingPage(
      { ...kit.chrome, formActionOrigins: kit.signIn.formActionOrigins() },
      {
        token,
        summary: described.summary,
        providers: kit.signIn.choices(),
        freeCredits: kit.port.config.freeCredits,
      },
    );
  });
}

function startSignIn<S extends PageState>(kit: ClaimKit<S>) {
  const { chrome } = kit;
  return kit.page("POST", "/claim/{token}/sign-in", async (request, state, token) => {
    if (!isSameOriginPost(request, kit.origin)) return views.refusedPage(chrome, token);
    const form = await kit.readForm(request);
    if (typeof form === "string") return kit.formProblem(form, token);
    const procedures = kit.port.procedures(state);
    if (form.get("provider") === "dev" && kit.port.config.devSignIn) {
      const typed = developmentIdentity(form.get("name") ?? "");
      if (!typed) {
        const text =
          "Type a name of 1 to 40 characters, with Latin letters or digits, to sign in as a local developer.";
        return views.badRequestPage(chrome, { status: 400, title: "Type a name", text, token });
      }
      const refusal = await kit.signInRefusal(procedures, state, token);
      if (refusal) return refusal;
      state.log.info({ provider: "dev" }, "claim sign-in completed");
      const { subject, name } = typed;
      return kit.signedIn({
        provider: "dev",
        subject,
        email: null,
        name,
        token,
        sessionId: crypto.randomUUID(),
      });
    }
    const provider = kit.signIn.providerById(form.get("provider"));
    if (!provider) {
      const text = "Choose one of the sign-in buttons on the claim page.";
      return views.badRequestPage(chrome, { status: 400, title: "Unknown sign-in provider", text, token });
    }
    const refusal = await kit.signInRefusal(procedures, state, token);
    if (refusal) return refusal;
    const started = await kit.signIn.start(provider, { token }, state.log, "claim");
    return (
      started ??
      views.signInProblemPage(chrome, { problem: "unavailable", token, providerLabel: provider.label })
    );
  });
}

function callback<S extends PageState>(kit: ClaimKit<S>) {
  const { chrome } = kit;
  return kit.page("GET", "/claim/callback/{provider}", async (request, state, _token, params) => {
    const provider = kit.signIn.providerById(params.provider);
    if (!provider) {
      const text = "This sign-in provider is not offered here.";
      return views.badRequestPage(chrome, {
        status: 404,
        title: "Unknown sign-in provider",
        text,
        token: null,
      });
    }
    const providerLabel = provider.label;
    const transaction = await kit.signIn.transaction(request);
    if (!transaction || transaction.provider !== provider.id) {
      state.log.info({ provider: provider.id }, "claim sign-in callback without a sign-in in progress");
      return views.signInProblemPage(chrome, { problem: "session_missing", token: null, providerLabel });
    }
    const { outcome, used } = await kit.signIn.finish(request, provider, transaction, state.log);
    if (transaction.purpose === "dashboard")
      return withCookies(await kit.finishDashboardSignIn(outcome, transaction, provider, state), used);
    const { token } = transaction;
    switch (outcome.kind) {
      case "state_mismatch":
        return views.signInProblemPage(chrome, { problem: "state_mismatch", token, providerLabel });
      case "cancelled":
        return withCookies(views.cancelledPage(chrome, { token, providerLabel }), used);
      case "provider_error":
        return withCookies(
          views.signInProblemPage(chrome, { problem: "provider_error", token, providerLabel }),
          used,
        );
      case "failed":
        return withCookies(
          views.signInProblemPage(chrome, { problem: outcome.reason, token, providerLabel }),
          used,
        );
      case "verified":
        return kit.signedIn({ ...outcome.identity, token, sessionId: crypto.randomUUID() }, used);
    }
  });
}

function showConfirmation<S extends PageState>(kit: ClaimKit<S>) {
  return kit.page("GET", "/claim/{token}/confirm", async (request, state, token) => {
    const identity = await kit.identityFor(request, token);
    if (!identity) return redirect(`/claim/${token}`);
    const label = kit.signIn.labelOf(identity.provider) ?? identity.provider;
    const who = kit.who(identity, label);
    const described = await kit.port.procedures(state).pages.claims.describe({ token, identity });
    if (!described.ok) {
      if (described.code !== "claimed_by_you") return kit.refusalPage(described);
      state.projectId = described.project_id;
      const projectId = described.project_id;
      return views.claimedPage(kit.chrome, {
        projectId,
        creditsGranted: 0,
        providerLabel: label,
        who,
        already: true,
      });
    }
    state.projectId = described.summary.project_id;
    return views.confirmPage(kit.chrome, {
      token,
      summary: described.summary,
      providerLabel: label,
      who,
      csrfToken: await kit.port.sealer.csrfToken(identity.sessionId),
      freeCredits: kit.port.config.freeCredits,
    });
  });
}

function confirm<S extends PageState>(kit: ClaimKit<S>) {
  const { chrome } = kit;
  return kit.page("POST", "/claim/{token}/confirm", async (request, state, token) => {
    if (!isSameOriginPost(request, kit.origin)) {
      state.log.warn({}, "claim confirmation refused: cross-site request");
      return views.refusedPage(chrome, token);
    }
    const form = await kit.readForm(request);
    if (typeof form === "string") return kit.formProblem(form, token);
    const identity = await kit.identityFor(request, token);
    if (!identity) return views.signInRequiredPage(chrome, token);
    if (!(await kit.port.sealer.verifyCsrf(identity.sessionId, form.get("csrf_token") ?? ""))) {
      state.log.warn({}, "claim confirmation refused: CSRF token mismatch");
      return views.refusedPage(chrome, token);
    }
    const procedures = kit.port.procedures(state);
    const { provider, subject, email, name } = identity;
    const result = await procedures.pages.claims.claim({
      token,
      identity: { provider, subject, email, name },
    });
    if (!result.ok && result.code !== "claimed_by_you") {
      state.log.info({ outcome: result.code, provider }, "claim confirmation");
      return kit.refusalPage(result);
    }
    const claimed = result;
    state.log.info(
      {
        outcome: result.ok ? "claimed" : result.code,
        provider,
        project_id: claimed.project_id,
        account_id: claimed.account_id,
        ...(result.ok ? { credits_granted: result.credits_granted } : {}),
      },
      "claim confirmation",
    );
    state.projectId = claimed.project_id;
    const label = kit.signIn.labelOf(provider) ?? provider;
    const page = views.claimedPage(chrome, {
      projectId: claimed.project_id,
      creditsGranted: result.ok ? result.credits_granted : 0,
      providerLabel: label,
      who: kit.who(identity, label),
      already: !result.ok,
    });
    // The claimant lands in the dashboard signed in: the identity was verified minutes ago.
    return withCookies(page, [
      await kit.sessions.start(procedures, { provider, subject, name: name ?? email }),
    ]);
  });
}

export function claimRoutes<S extends PageState>(context: ClaimContext<S>): PageRoute<S>[] {
  const kit = claimKit(context);
  // The callback is listed before the token routes: /claim/callback/x could
  // otherwise also read as a (malformed) token route.
  return [callback(kit), landing(kit), startSignIn(kit), showConfirmation(kit), confirm(kit)];
}
