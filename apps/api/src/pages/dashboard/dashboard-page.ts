// The account dashboard (docs/dashboard.md): server-rendered pages under
// /dashboard where the human who claimed a project manages it, and where the
// operators listed in OPERATOR_IDENTITIES do everything the command-line tool
// does. Every page's data comes from the internal tRPC procedures
// (`dashboard.*`, `operator.*`; internal-router.ts), called server-side with
// the session's viewer in the context: the same procedures internal tools
// call, and no tRPC endpoint on the public port.
//
// Sessions are server-side (dashboard_sessions; store/sessions.ts): the
// browser holds a random token in a sealed, HttpOnly, SameSite=Lax cookie on
// Path=/dashboard (Secure and __Secure- over https). Every change is a form
// POST that must be same-origin (Sec-Fetch-Site, else Origin) and carry the
// session's CSRF token. Sign-in: Google and GitHub through the claim flow's
// providers and callback, or, outside production, the development provider.
import type { CookieSealer } from "@sms/crypto";
import {
  type Clock,
  type DashboardIdentity,
  type DashboardViewer,
  developmentIdentity,
  MESSAGE_STATUSES,
} from "@sms/domain";
import { TEMPLATE_IDS } from "@sms/templates";
import { TRPCError } from "@trpc/server";
import type { AppDeps } from "../../deps.ts";
import type { Config } from "../../env.ts";
import { rateLimitSubject } from "../../http/client-address.ts";
import type { ExtraRoute, PageErrors } from "../../http/gateway.ts";
import { secondsUntil } from "../../http/rate-limit-headers.ts";
import { createInternalCaller } from "../../internal-router.ts";
import { type AppLogger, serializeError } from "../../logger.ts";
import { refusalMessage } from "../../routers/refusals.ts";
import type { RequestState } from "../../trpc/request-state.ts";
import {
  clearCookieHeader,
  cookieNames,
  readCookie,
  SIGN_IN_COOKIE_MAX_AGE_MS,
  type SignInTransaction,
  setCookieHeader,
} from "../claim/claim-cookies.ts";
import { type ClaimDashboardHooks, DEV_PROVIDER_LABEL } from "../claim/claim-page.ts";
import type { IdentityProvider } from "../claim/identity-providers.ts";
import type { CallbackOutcome } from "../claim/provider-callback.ts";
import { isSameOriginPost, readForm, withCookies } from "../forms.ts";
import { dashboardAssets } from "./assets.ts";
import {
  creditsPage,
  keysPage,
  type MessageFilters,
  messagePage,
  messagesPage,
  newKeyPage,
  overviewPage,
  projectsPage,
  revokeConfirmPage,
  rollConfirmPage,
  senderPage,
  signInPage,
} from "./views/account-views.ts";
import { type Chrome, noticeFrom } from "./views/layout.ts";
import {
  operatorAuditPage,
  operatorHomePage,
  operatorKeyPage,
  operatorProjectPage,
  operatorRevokeConfirmPage,
} from "./views/operator-views.ts";
import {
  actionRefusedPage,
  badRequestPage,
  errorPage,
  forbiddenPage,
  noSuchPage,
  notFoundPage,
  refusedPage,
  sessionEndedPage,
} from "./views/problem-views.ts";

/** Forms carry a few short fields; the longest is a sender request's purpose (500 characters, UTF-8, encoded). */
const MAX_FORM_BYTES = 8 * 1024;
export const SESSION_COOKIE_PATH = "/dashboard";

export type DashboardPageDeps = {
  deps: AppDeps;
  clock: Clock;
  logger: AppLogger;
  config: Pick<Config, "publicBaseUrl" | "dashboard" | "messages">;
  sealer: CookieSealer;
  providers: IdentityProvider[];
  /** True when a live provider's brand list checks sender approvals (UBILL_* configured). */
  brandsConfigured: boolean;
};

type Access = "public" | "viewer" | "operator";

type PageContext = {
  request: Request;
  url: URL;
  state: RequestState;
  params: Record<string, string>;
  viewer: DashboardViewer | null;
  chrome: Chrome;
  form: URLSearchParams;
  caller: ReturnType<typeof createInternalCaller>;
};

const NOTICES: Record<string, string> = {
  signed_out: "You are signed out.",
  key_revoked: "The key was revoked: it stops working on every server within a few seconds.",
  key_already_revoked: "That key was already revoked; nothing changed.",
  sender_requested: "Your request was sent to the operator.",
  suspended: "The project is suspended: every key is refused with 403 project_suspended.",
  already_suspended: "The project was already suspended; nothing changed.",
  reinstated: "The project is active again.",
  already_active: "The project was already active; nothing changed.",
  credits_granted: "The credits were granted.",
  credits_already_granted: "That reference was already granted; nothing changed.",
  sender_approved: "The sender name was approved and set on the project.",
  sender_refused: "The request was refused; the account holder sees the reason.",
};

/** A path inside the dashboard to return to after signing in; anything else is dropped. */
function safeNext(value: string | null | undefined): string | null {
  if (!value || value.length > 500) return null;
  if (!/^\/dashboard(?:\/[A-Za-z0-9_\-.~/%]*)?(?:\?[A-Za-z0-9_\-.~=&%+]*)?$/.test(value)) return null;
  if (value.includes("//") || /\/\.\.?(?:[/?]|$)/.test(value) || value.startsWith("/dashboard/sign-"))
    return null;
  return value;
}

function redirect(location: string, cookies: string[] = []): Response {
  const headers = new Headers({ Location: location, "Cache-Control": "no-store" });
  for (const cookie of cookies) headers.append("Set-Cookie", cookie);
  return new Response(null, { status: 303, headers });
}

const emptyToUndefined = (value: string | null) => (value === null || value === "" ? undefined : value);

export async function dashboardPages(
  pageDeps: DashboardPageDeps,
): Promise<{ routes: ExtraRoute[]; hooks: ClaimDashboardHooks; errors: PageErrors }> {
  const { config, clock, sealer, providers, deps } = pageDeps;
  const services = deps.services.dashboard;
  const baseUrl = config.publicBaseUrl;
  const origin = new URL(baseUrl).origin;
  const secure = baseUrl.startsWith("https://");
  const cookieName = `${secure ? "__Secure-" : ""}sms_dashboard`;
  const signInCookieName = cookieNames(secure).signIn;
  const devSignIn = config.dashboard.devSignIn;
  const defaultSender = config.messages.defaultSender;
  const assets = await dashboardAssets();
  const assetUrl = (asset: { path: string; version: string }) =>
    `/dashboard/assets/${asset.path}?v=${asset.version}`;
  const providerById = (id: string | null | undefined) => providers.find((provider) => provider.id === id);
  const providerLabel = (id: string) => providerById(id)?.label ?? (id === "dev" ? DEV_PROVIDER_LABEL : id);
  const formActionOrigins = () => [...new Set(providers.flatMap((provider) => provider.authorizeOrigins()))];

  async function chromeFor(viewer: DashboardViewer | null, formActions?: readonly string[]): Promise<Chrome> {
    return {
      cssUrl: assetUrl(assets.css),
      jsUrl: assetUrl(assets.js),
      devSignIn,
      viewer,
      csrfToken: viewer ? await sealer.csrfToken(`dashboard:${viewer.sessionId}`) : null,
      providerLabel,
      ...(formActions ? { formActionOrigins: formActions } : {}),
    };
  }

  // ------------------------------------------------------------ sessions

  async function sessionCookieFor(identity: DashboardIdentity): Promise<string> {
    const started = await services.sessions.start({ identity });
    const maxAgeMs = started.expiresAt.getTime() - clock.now().getTime();
    const value = await sealer.seal(cookieName, { t: started.token }, maxAgeMs, clock.now());
    return setCookieHeader(cookieName, value, { maxAgeMs, secure, path: SESSION_COOKIE_PATH });
  }

  const clearSession = () => clearCookieHeader(cookieName, secure, SESSION_COOKIE_PATH);

  /** The session's token from the cookie (sealed: a forged or foreign cookie is simply absent). */
  async function sessionToken(request: Request): Promise<string | null> {
    const opened = await sealer.open<{ t?: unknown }>(
      cookieName,
      readCookie(request.headers.get("cookie"), cookieName),
      clock.now(),
    );
    return opened && typeof opened.t === "string" ? opened.t : null;
  }

  /** A provider this server offers now: a session from one it no longer offers (dev in production) is none. */
  const offered = (provider: string) =>
    providerById(provider) !== undefined || (provider === "dev" && devSignIn);

  async function resumeViewer(
    request: Request,
  ): Promise<{ viewer: DashboardViewer | null; hadCookie: boolean }> {
    const hadCookie = readCookie(request.headers.get("cookie"), cookieName) !== undefined;
    const token = await sessionToken(request);
    if (!token) return { viewer: null, hadCookie };
    const resumed = await services.sessions.resume({ token });
    if (!resumed.ok || !offered(resumed.viewer.identity.provider)) return { viewer: null, hadCookie };
    return { viewer: resumed.viewer, hadCookie };
  }

  // ------------------------------------------------------------ the route wrapper

  function route(
    method: ExtraRoute["method"],
    path: ExtraRoute["path"],
    access: Access,
    handle: (context: PageContext) => Promise<Response>,
  ): ExtraRoute {
    return {
      method,
      path,
      async handle(request, state, params) {
        let chrome = await chromeFor(null);
        try {
          const url = new URL(request.url);
          const { viewer, hadCookie } = await resumeViewer(request);
          chrome = await chromeFor(viewer);
          let form = new URLSearchParams();
          if (method === "POST") {
            if (!isSameOriginPost(request, origin)) {
              state.log.warn({}, "dashboard change refused: cross-site request");
              return refusedPage(chrome);
            }
            const read = await readForm(request, MAX_FORM_BYTES);
            if (read === "too_large")
              return badRequestPage(chrome, "The form sent was larger than this page ever sends.", 413);
            if (read === "too_slow")
              return badRequestPage(chrome, "The form did not arrive in time. Send it again.", 408);
            if (read === "unsupported")
              return badRequestPage(chrome, "The form must be sent as an ordinary HTML form.", 415);
            form = read;
          }
          if (access !== "public" && !viewer) {
            const cleared = hadCookie ? [clearSession()] : [];
            if (method === "POST") return withCookies(sessionEndedPage(chrome), cleared);
            return redirect(
              `/dashboard/sign-in?${new URLSearchParams({ next: `${url.pathname}${url.search}` })}`,
              cleared,
            );
          }
          if (method === "POST" && viewer && access !== "public") {
            const expected = await sealer.verifyCsrf(
              `dashboard:${viewer.sessionId}`,
              form.get("csrf_token") ?? "",
            );
            if (!expected) {
              state.log.warn({}, "dashboard change refused: CSRF token mismatch");
              return refusedPage(chrome);
            }
          }
          if (access === "operator" && !viewer?.operator) return forbiddenPage(chrome);
          const caller = createInternalCaller({ deps, state, viewer: viewer ?? undefined });
          return await handle({ request, url, state, params, viewer, chrome, form, caller });
        } catch (error) {
          if (error instanceof TRPCError) {
            switch (error.code) {
              case "NOT_FOUND":
                return notFoundPage(chrome);
              case "BAD_REQUEST":
                // Our own sentences (no cause); a schema's findings are not shown as they are.
                return badRequestPage(
                  chrome,
                  error.cause ? "Something in the request is not valid." : error.message,
                );
              case "FORBIDDEN":
                return forbiddenPage(chrome);
              case "UNAUTHORIZED":
                return sessionEndedPage(chrome);
            }
          }
          state.log.error({ err: serializeError(error) }, "dashboard page failed");
          return errorPage(chrome, state.requestId);
        }
      },
    };
  }

  const param = (context: PageContext, name: string) => context.params[name] ?? "";
  const projectBase = (projectId: string) => `/dashboard/projects/${encodeURIComponent(projectId)}`;

  // ------------------------------------------------------------ sign-in and out

  const home = route("GET", "/dashboard", "public", async ({ viewer }) =>
    redirect(viewer ? "/dashboard/projects" : "/dashboard/sign-in"),
  );

  const signInChoices = () => providers.map(({ id, label }) => ({ id, label }));

  const showSignIn = route("GET", "/dashboard/sign-in", "public", async ({ viewer, url }) => {
    const next = safeNext(url.searchParams.get("next"));
    if (viewer) return redirect(next ?? "/dashboard/projects");
    const chrome = await chromeFor(null, formActionOrigins());
    const signedOut = url.searchParams.get("notice") === "signed_out";
    return signInPage(chrome, {
      providers: signInChoices(),
      devSignIn,
      next,
      ...(signedOut ? { notice: NOTICES.signed_out } : {}),
    });
  });

  const startSignIn = route("POST", "/dashboard/sign-in", "public", async ({ form, state }) => {
    const chrome = await chromeFor(null, formActionOrigins());
    const next = safeNext(form.get("next"));
    const problem = (text: string, status: number) =>
      signInPage(chrome, { providers: signInChoices(), devSignIn, next, problem: text, status });
    const requested = form.get("provider");
    const provider = providerById(requested);
    if (!provider && !(requested === "dev" && devSignIn)) {
      return problem(
        requested === "dev"
          ? "Development sign-in is not available on this server."
          : "Choose one of the sign-in buttons.",
        400,
      );
    }
    const identity = provider ? null : developmentIdentity(form.get("name") ?? "");
    if (!provider && !identity) {
      return problem("Type a name of 1 to 40 characters, with Latin letters or digits.", 400);
    }
    // Every start counts, as on the claim pages: bounded per network and minute.
    const limit = await deps.services.claims.countSignIn(rateLimitSubject(state.clientAddress));
    if (!limit.ok) {
      const response = problem(
        "Too many sign-ins from your network in the last minute: wait a minute and try again.",
        429,
      );
      response.headers.set("Retry-After", String(secondsUntil(limit.limit.resetAt, clock.now())));
      return response;
    }
    if (identity) {
      state.log.info({ provider: "dev" }, "dashboard sign-in completed");
      return redirect(next ?? "/dashboard/projects", [await sessionCookieFor(identity)]);
    }
    if (!provider) return problem("Choose one of the sign-in buttons.", 400);
    let start: Awaited<ReturnType<IdentityProvider["begin"]>>;
    try {
      start = await provider.begin({ redirectUri: `${baseUrl}/claim/callback/${provider.id}` });
    } catch (error) {
      state.log.warn(
        { provider: provider.id, err: serializeError(error) },
        "dashboard sign-in could not start",
      );
      return problem(`${provider.label} could not be reached. Please try again in a moment.`, 502);
    }
    const transaction: SignInTransaction = {
      provider: provider.id,
      token: "",
      state: start.state,
      nonce: start.nonce,
      codeVerifier: start.codeVerifier,
      purpose: "dashboard",
      ...(next ? { returnTo: next } : {}),
    };
    const cookie = await sealer.seal(signInCookieName, transaction, SIGN_IN_COOKIE_MAX_AGE_MS, clock.now());
    state.log.info({ provider: provider.id }, "dashboard sign-in started");
    return redirect(start.url.href, [
      setCookieHeader(signInCookieName, cookie, { maxAgeMs: SIGN_IN_COOKIE_MAX_AGE_MS, secure }),
    ]);
  });

  async function finishSignIn(
    outcome: CallbackOutcome,
    transaction: SignInTransaction,
    provider: IdentityProvider,
    state: RequestState,
  ): Promise<Response> {
    const chrome = await chromeFor(null, formActionOrigins());
    const next = safeNext(transaction.returnTo);
    const problem = (text: string, status: number) =>
      signInPage(chrome, { providers: signInChoices(), devSignIn, next, problem: text, status });
    switch (outcome.kind) {
      case "state_mismatch":
        return problem(
          `The answer from ${provider.label} does not belong to the sign-in started in this browser, so it was refused.`,
          400,
        );
      case "cancelled":
        return problem(`You cancelled signing in with ${provider.label}.`, 200);
      case "provider_error":
        return problem(`${provider.label} reported an error and did not sign you in. Please try again.`, 400);
      case "failed":
        return outcome.reason === "unavailable"
          ? problem(`${provider.label} could not be reached. Please try again in a moment.`, 502)
          : problem(`${provider.label} did not confirm this sign-in. Please sign in again.`, 400);
      case "verified": {
        const { identity } = outcome;
        state.log.info({ provider: provider.id }, "dashboard sign-in completed");
        return redirect(next ?? "/dashboard/projects", [
          await sessionCookieFor({
            provider: identity.provider,
            subject: identity.subject,
            name: identity.name ?? identity.email,
          }),
        ]);
      }
    }
  }

  const signOut = route(
    "POST",
    "/dashboard/sign-out",
    "public",
    async ({ request, viewer, form, chrome, state }) => {
      if (
        viewer &&
        !(await sealer.verifyCsrf(`dashboard:${viewer.sessionId}`, form.get("csrf_token") ?? ""))
      ) {
        state.log.warn({}, "dashboard sign-out refused: CSRF token mismatch");
        return refusedPage(chrome);
      }
      const token = await sessionToken(request);
      if (token) await services.sessions.end({ token });
      return redirect("/dashboard/sign-in?notice=signed_out", [clearSession()]);
    },
  );

  // The stylesheet and the script: no session needed, so none is looked up.
  const asset: ExtraRoute = {
    method: "GET",
    path: "/dashboard/assets/{file}",
    handle(request, _state, params) {
      const file = [assets.css, assets.js].find((candidate) => candidate.path === params.file);
      if (!file) return new Response("Not found", { status: 404, headers: { "Content-Type": "text/plain" } });
      const versioned = new URL(request.url).searchParams.get("v") === file.version;
      return new Response(file.body, {
        status: 200,
        headers: {
          "Content-Type": file.type,
          "Cache-Control": versioned ? "public, max-age=31536000, immutable" : "no-cache",
          "X-Content-Type-Options": "nosniff",
          "Cross-Origin-Resource-Policy": "same-origin",
        },
      });
    },
  };

  // ------------------------------------------------------------ the account holder's pages

  const projects = route("GET", "/dashboard/projects", "viewer", async ({ caller, chrome, url }) => {
    const cursor = emptyToUndefined(url.searchParams.get("cursor"));
    const list = await caller.dashboard.projects.list({ ...(cursor ? { cursor } : {}) });
    return projectsPage(chrome, list, { isFirst: !cursor });
  });

  const overview = route("GET", "/dashboard/projects/{project_id}", "viewer", async (context) => {
    const { caller, chrome, url } = context;
    const projectId = param(context, "project_id");
    const mode = url.searchParams.get("mode");
    const chosen = mode === "live" || mode === "test" ? mode : null;
    const [found, usage] = await Promise.all([
      caller.dashboard.projects.get({ project_id: projectId }),
      caller.dashboard.projects.usage({ project_id: projectId, ...(chosen ? { mode: chosen } : {}) }),
    ]);
    return overviewPage(chrome, found, usage, { mode: chosen, defaultSender });
  });

  const keys = route("GET", "/dashboard/projects/{project_id}/keys", "viewer", async (context) => {
    const { caller, chrome, url } = context;
    const cursor = emptyToUndefined(url.searchParams.get("cursor"));
    const list = await caller.dashboard.keys.list({
      project_id: param(context, "project_id"),
      ...(cursor ? { cursor } : {}),
    });
    return keysPage(chrome, list, { isFirst: !cursor, notice: noticeFrom(url, NOTICES) });
  });

  const createLiveKey = route(
    "POST",
    "/dashboard/projects/{project_id}/keys/live",
    "viewer",
    async (context) => {
      const { caller, chrome } = context;
      const projectId = param(context, "project_id");
      const result = await caller.dashboard.keys.createLive({ project_id: projectId });
      if (!result.ok) {
        return actionRefusedPage(chrome, {
          title: "No live key was created",
          message: result.message,
          back: { href: `${projectBase(projectId)}/keys`, label: "Back to the keys" },
        });
      }
      return newKeyPage(chrome, { projectId, key: result.key, revoked: [] });
    },
  );

  const confirmRevoke = route(
    "GET",
    "/dashboard/projects/{project_id}/keys/{key_id}/revoke",
    "viewer",
    async (context) => {
      const projectId = param(context, "project_id");
      const { key } = await context.caller.dashboard.keys.get({
        project_id: projectId,
        key_id: param(context, "key_id").slice(0, 40),
      });
      if (key.revoked_at) return redirect(`${projectBase(projectId)}/keys?notice=key_already_revoked`);
      return revokeConfirmPage(context.chrome, { projectId, key });
    },
  );

  const revoke = route(
    "POST",
    "/dashboard/projects/{project_id}/keys/{key_id}/revoke",
    "viewer",
    async (context) => {
      const projectId = param(context, "project_id");
      const result = await context.caller.dashboard.keys.revoke({
        project_id: projectId,
        key_id: param(context, "key_id"),
      });
      if (!result.ok) {
        if (result.code === "key_not_found" || result.code === "invalid_input")
          return notFoundPage(context.chrome);
        return actionRefusedPage(context.chrome, {
          title: "The key was not revoked",
          message: result.message,
          back: { href: `${projectBase(projectId)}/keys`, label: "Back to the keys" },
        });
      }
      return redirect(
        `${projectBase(projectId)}/keys?notice=${result.already_revoked ? "key_already_revoked" : "key_revoked"}`,
      );
    },
  );

  const confirmRoll = route(
    "GET",
    "/dashboard/projects/{project_id}/keys/roll-test",
    "viewer",
    async (context) => {
      const projectId = param(context, "project_id");
      const list = await context.caller.dashboard.keys.list({ project_id: projectId });
      const testKeys = list.keys.filter((key) => key.mode === "test" && !key.revoked_at);
      return rollConfirmPage(context.chrome, { projectId, testKeys });
    },
  );

  const roll = route("POST", "/dashboard/projects/{project_id}/keys/roll-test", "viewer", async (context) => {
    const projectId = param(context, "project_id");
    const result = await context.caller.dashboard.keys.rollTest({ project_id: projectId });
    if (!result.ok) {
      return actionRefusedPage(context.chrome, {
        title: "The test key was not rolled",
        message: result.message,
        back: { href: `${projectBase(projectId)}/keys`, label: "Back to the keys" },
      });
    }
    return newKeyPage(context.chrome, { projectId, key: result.key, revoked: result.revoked });
  });

  const messages = route("GET", "/dashboard/projects/{project_id}/messages", "viewer", async (context) => {
    const { url } = context;
    const projectId = param(context, "project_id");
    const pick = <T extends string>(name: string, allowed: readonly T[]): T | undefined => {
      const value = emptyToUndefined(url.searchParams.get(name));
      return value !== undefined && (allowed as readonly string[]).includes(value) ? (value as T) : undefined;
    };
    const day = (name: string) => {
      const value = emptyToUndefined(url.searchParams.get(name));
      return value && /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(value))
        ? value
        : undefined;
    };
    const filters = {
      status: pick("status", MESSAGE_STATUSES),
      mode: pick("mode", ["live", "test"] as const),
      template: pick("template", TEMPLATE_IDS),
      from: day("from"),
      to: day("to"),
    };
    const cursor = emptyToUndefined(url.searchParams.get("cursor"));
    const defined = Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== undefined));
    const list = await context.caller.dashboard.messages.list({
      project_id: projectId,
      ...defined,
      ...(cursor ? { cursor } : {}),
    });
    return messagesPage(context.chrome, {
      projectId,
      list,
      filters: defined as MessageFilters,
      isFirst: !cursor,
    });
  });

  const message = route(
    "GET",
    "/dashboard/projects/{project_id}/messages/{message_id}",
    "viewer",
    async (context) => {
      const projectId = param(context, "project_id");
      const found = await context.caller.dashboard.messages.get({
        project_id: projectId,
        message_id: param(context, "message_id"),
      });
      return messagePage(context.chrome, { projectId, found });
    },
  );

  const credits = route("GET", "/dashboard/projects/{project_id}/credits", "viewer", async (context) => {
    const projectId = param(context, "project_id");
    const cursor = emptyToUndefined(context.url.searchParams.get("cursor"));
    const result = await context.caller.dashboard.credits.get({
      project_id: projectId,
      ...(cursor ? { cursor } : {}),
    });
    return creditsPage(context.chrome, { projectId, credits: result, isFirst: !cursor });
  });

  const sender = route("GET", "/dashboard/projects/{project_id}/sender", "viewer", async (context) => {
    const found = await context.caller.dashboard.sender.get({ project_id: param(context, "project_id") });
    return senderPage(context.chrome, {
      sender: found,
      defaultSender,
      notice: noticeFrom(context.url, NOTICES),
    });
  });

  const requestSender = route(
    "POST",
    "/dashboard/projects/{project_id}/sender",
    "viewer",
    async (context) => {
      const projectId = param(context, "project_id");
      const values = { name: context.form.get("name") ?? "", purpose: context.form.get("purpose") ?? "" };
      const result = await context.caller.dashboard.sender.request({
        project_id: projectId,
        name: values.name.slice(0, 40),
        purpose: values.purpose.slice(0, 2000),
      });
      if (result.ok) return redirect(`${projectBase(projectId)}/sender?notice=sender_requested`);
      const found = await context.caller.dashboard.sender.get({ project_id: projectId });
      return senderPage(context.chrome, {
        sender: found,
        defaultSender,
        notice: "",
        problem: result.message,
        values,
        status: result.code === "invalid_input" ? 400 : 409,
      });
    },
  );

  // ------------------------------------------------------------ the operator's pages

  const operatorHome = route("GET", "/dashboard/operator", "operator", async ({ caller, chrome, url }) => {
    const query = (url.searchParams.get("q") ?? "").trim();
    const requestsCursor = emptyToUndefined(url.searchParams.get("requests"));
    const [found, requests] = await Promise.all([
      query ? caller.operator.projects.find({ query: query.slice(0, 300) }) : Promise.resolve(null),
      caller.operator.senderRequests.list({ ...(requestsCursor ? { cursor: requestsCursor } : {}) }),
    ]);
    return operatorHomePage(chrome, {
      query,
      found: found?.ok ? found : null,
      problem: found && !found.ok ? found.message : null,
      requests,
      requestsFirst: !requestsCursor,
      notice: noticeFrom(url, NOTICES),
      brandsConfigured: pageDeps.brandsConfigured,
    });
  });

  const operatorProject = route(
    "GET",
    "/dashboard/operator/projects/{project_id}",
    "operator",
    async (context) => {
      const described = await context.caller.operator.projects.get({
        project_id: param(context, "project_id"),
      });
      if (!described.ok) {
        if (described.code === "project_not_found" || described.code === "invalid_input")
          return notFoundPage(context.chrome);
        return badRequestPage(context.chrome, described.message);
      }
      return operatorProjectPage(context.chrome, {
        described,
        notice: noticeFrom(context.url, NOTICES),
        defaultSender,
      });
    },
  );

  const opBase = (projectId: string) => `/dashboard/operator/projects/${encodeURIComponent(projectId)}`;
  const operatorRefused = (context: PageContext, title: string, message: string, back: string) =>
    actionRefusedPage(context.chrome, { title, message, back: { href: back, label: "Back" } });

  function suspension(kind: "suspend" | "reinstate"): ExtraRoute {
    return route("POST", `/dashboard/operator/projects/{project_id}/${kind}`, "operator", async (context) => {
      const projectId = param(context, "project_id");
      const reason = context.form.get("reason") ?? "";
      const input = { project_id: projectId, ...(reason.trim() ? { reason: reason.slice(0, 1000) } : {}) };
      const result =
        kind === "suspend"
          ? await context.caller.operator.projects.suspend(input)
          : await context.caller.operator.projects.reinstate(input);
      if (!result.ok) return operatorRefused(context, "Nothing changed", result.message, opBase(projectId));
      const notice =
        kind === "suspend"
          ? result.changed
            ? "suspended"
            : "already_suspended"
          : result.changed
            ? "reinstated"
            : "already_active";
      return redirect(`${opBase(projectId)}?notice=${notice}`);
    });
  }

  const grantCredits = route(
    "POST",
    "/dashboard/operator/projects/{project_id}/credits",
    "operator",
    async (context) => {
      const projectId = param(context, "project_id");
      const amountText = (context.form.get("amount") ?? "").trim();
      const reference = (context.form.get("reference") ?? "").trim();
      if (!/^[0-9]{1,9}$/.test(amountText)) {
        return operatorRefused(
          context,
          "No credits were granted",
          refusalMessage({ ok: false, code: "invalid_input", field: "amount" }),
          opBase(projectId),
        );
      }
      const result = await context.caller.operator.credits.grant({
        project_id: projectId,
        amount: Number(amountText),
        ...(reference ? { reference: reference.slice(0, 300) } : {}),
      });
      if (!result.ok)
        return operatorRefused(context, "No credits were granted", result.message, opBase(projectId));
      return redirect(
        `${opBase(projectId)}?notice=${result.already_granted ? "credits_already_granted" : "credits_granted"}`,
      );
    },
  );

  const operatorCreateKey = route(
    "POST",
    "/dashboard/operator/projects/{project_id}/keys/live",
    "operator",
    async (context) => {
      const projectId = param(context, "project_id");
      const result = await context.caller.operator.keys.createLive({ project_id: projectId });
      if (!result.ok)
        return operatorRefused(context, "No live key was created", result.message, opBase(projectId));
      return operatorKeyPage(context.chrome, { projectId, key: result.key });
    },
  );

  const operatorConfirmRevoke = route(
    "GET",
    "/dashboard/operator/keys/{key_id}/revoke",
    "operator",
    async (context) => {
      const projectId = (context.url.searchParams.get("project") ?? "").slice(0, 40);
      const found = await context.caller.operator.keys.get({
        project_id: projectId,
        key_id: param(context, "key_id").slice(0, 40),
      });
      if (!found.ok) return notFoundPage(context.chrome);
      const { key } = found;
      if (key.revoked_at) return redirect(`${opBase(projectId)}?notice=key_already_revoked`);
      return operatorRevokeConfirmPage(context.chrome, { projectId, key });
    },
  );

  const operatorRevoke = route(
    "POST",
    "/dashboard/operator/keys/{key_id}/revoke",
    "operator",
    async (context) => {
      const projectId = (context.form.get("project") ?? "").slice(0, 40);
      const result = await context.caller.operator.keys.revoke({
        key_id: param(context, "key_id"),
        ...(projectId ? { project_id: projectId } : {}),
      });
      if (!result.ok)
        return operatorRefused(context, "The key was not revoked", result.message, "/dashboard/operator");
      return redirect(
        `${opBase(result.project_id)}?notice=${result.already_revoked ? "key_already_revoked" : "key_revoked"}`,
      );
    },
  );

  const approve = route(
    "POST",
    "/dashboard/operator/sender-requests/{request_id}/approve",
    "operator",
    async (context) => {
      const brandText = (context.form.get("brand_id") ?? "").trim();
      if (brandText !== "" && !/^[0-9]{1,9}$/.test(brandText)) {
        return operatorRefused(
          context,
          "Not approved",
          "The brand id must be a whole number.",
          "/dashboard/operator",
        );
      }
      const result = await context.caller.operator.senderRequests.approve({
        request_id: param(context, "request_id"),
        ...(brandText ? { brand_id: Number(brandText) } : {}),
      });
      if (!result.ok) return operatorRefused(context, "Not approved", result.message, "/dashboard/operator");
      return redirect("/dashboard/operator?notice=sender_approved");
    },
  );

  const refuse = route(
    "POST",
    "/dashboard/operator/sender-requests/{request_id}/refuse",
    "operator",
    async (context) => {
      const result = await context.caller.operator.senderRequests.refuse({
        request_id: param(context, "request_id"),
        reason: (context.form.get("reason") ?? "").slice(0, 1000),
      });
      if (!result.ok) return operatorRefused(context, "Not refused", result.message, "/dashboard/operator");
      return redirect("/dashboard/operator?notice=sender_refused");
    },
  );

  const audit = route("GET", "/dashboard/operator/audit", "operator", async ({ caller, chrome, url }) => {
    const projectId = emptyToUndefined(url.searchParams.get("project")?.trim() ?? null);
    const cursor = emptyToUndefined(url.searchParams.get("cursor"));
    const page = await caller.operator.audit.list({
      ...(projectId ? { project_id: projectId.slice(0, 40) } : {}),
      ...(cursor ? { cursor } : {}),
    });
    if (!page.ok) return badRequestPage(chrome, page.message);
    return operatorAuditPage(chrome, { audit: page, projectId: projectId ?? null, isFirst: !cursor });
  });

  const routes: ExtraRoute[] = [
    home,
    showSignIn,
    startSignIn,
    signOut,
    asset,
    projects,
    overview,
    keys,
    createLiveKey,
    confirmRoll,
    roll,
    confirmRevoke,
    revoke,
    messages,
    message,
    credits,
    sender,
    requestSender,
    operatorHome,
    operatorProject,
    suspension("suspend"),
    suspension("reinstate"),
    grantCredits,
    operatorCreateKey,
    operatorConfirmRevoke,
    operatorRevoke,
    approve,
    refuse,
    audit,
  ];
  /** What the gateway answers under /dashboard when no page took the request: HTML, not the API's envelope. */
  const errors: PageErrors = {
    prefix: "/dashboard",
    async render(error, requestId) {
      const chrome = await chromeFor(null);
      if (error.code === "route_not_found") return noSuchPage(chrome);
      if (error.status >= 500) return errorPage(chrome, requestId);
      return badRequestPage(chrome, error.message, error.status);
    },
  };
  return { routes, hooks: { sessionCookieFor, finishSignIn }, errors };
}
