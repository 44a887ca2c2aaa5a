// /dashboard, signing in and out, and the two static assets. The provider's
// answer comes back through the claim flow's callback (routes/claim.ts), which
// hands a dashboard sign-in to finishSignIn here.
import { developmentIdentity } from "@sms/domain";
import type { SignInTransaction } from "../kit/cookies.ts";
import { redirect } from "../kit/http.ts";
import type { IdentityProvider } from "../kit/identity-providers.ts";
import type { CallbackOutcome } from "../kit/provider-callback.ts";
import type { PageRoute, PageState } from "../port.ts";
import { refusedPage } from "../views/problems.ts";
import { signInPage } from "../views/sign-in.ts";
import { type DashboardContext, NOTICES } from "./context.ts";

/** How many layers of percent-encoding `next` may carry before it is dropped. */
const MAX_DECODINGS = 3;

/**
 * A path inside the dashboard to return to after signing in; anything else is
 * dropped. Checked as written and fully percent-decoded (a browser resolves
 * `%2e%2e` as `..`, and a value may be encoded twice): no dot segment, no
 * backslash, no `//`, no control character, and never the sign-in pages.
 */
export function safeNext(value: string | null | undefined): string | null {
  if (!value || value.length > 500) return null;
  if (!/^\/dashboard(?:\/[A-Za-z0-9_\-.~/%]*)?(?:\?[A-Za-z0-9_\-.~=&%+]*)?$/.test(value)) return null;
  let decoded = value;
  for (let layer = 0; ; layer++) {
    if (!isInsideDashboard(decoded)) return null;
    let next: string;
    try {
      next = decodeURIComponent(decoded);
    } catch {
      return null;
    }
    if (next === decoded) return value;
    if (layer === MAX_DECODINGS) return null;
    decoded = next;
  }
}

function isInsideDashboard(path: string): boolean {
  const [pathname = ""] = path.split("?");
  if (!/^\/dashboard(?:\/|$)/.test(pathname) || pathname.startsWith("/dashboard/sign-")) return false;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses.
  return !/[\\\u0000-\u001f\u007f]|\/\/|\/\.\.?(?:\/|$)/.test(pathname);
}

type Problem = (next: string | null, problem: string, status: number) => Promise<Response>;

/** The sign-in page again, with a problem and its status. */
function signInProblem<S extends PageState>({ chromeFor, signIn, port }: DashboardContext<S>): Problem {
  return async (next, problem, status) => {
    const chrome = await chromeFor(null, signIn.formActionOrigins());
    return signInPage(chrome, {
      providers: signIn.choices(),
      devSignIn: port.config.devSignIn,
      next,
      problem,
      status,
    });
  };
}

function showSignIn<S extends PageState>({ route, chromeFor, signIn, port }: DashboardContext<S>) {
  return route("GET", "/dashboard/sign-in", "public", async ({ viewer, url }) => {
    const next = safeNext(url.searchParams.get("next"));
    if (viewer) return redirect(next ?? "/dashboard/projects");
    const chrome = await chromeFor(null, signIn.formActionOrigins());
    const notice = url.searchParams.get("notice");
    const signedOut =
      notice === "signed_out" || notice === "signed_out_everywhere" ? NOTICES[notice] : undefined;
    return signInPage(chrome, {
      providers: signIn.choices(),
      devSignIn: port.config.devSignIn,
      next,
      ...(signedOut ? { notice: signedOut } : {}),
    });
  });
}

function startSignIn<S extends PageState>(context: DashboardContext<S>, problem: Problem) {
  const { signIn, sessions } = context;
  const devSignIn = context.port.config.devSignIn;
  return context.route("POST", "/dashboard/sign-in", "public", async ({ form, state, procedures }) => {
    const next = safeNext(form.get("next"));
    const requested = form.get("provider");
    const provider = signIn.providerById(requested);
    if (!provider && !(requested === "dev" && devSignIn)) {
      const text =
        requested === "dev"
          ? "Development sign-in is not available on this server."
          : "Choose one of the sign-in buttons.";
      return problem(next, text, 400);
    }
    const identity = provider ? null : developmentIdentity(form.get("name") ?? "");
    if (!provider && !identity)
      return problem(next, "Type a name of 1 to 40 characters, with Latin letters or digits.", 400);
    // Every start counts, as on the claim pages: bounded per network and minute.
    const limit = await procedures.pages.signIns.count();
    if (!limit.ok) {
      const text = "Too many sign-ins from your network in the last minute: wait a minute and try again.";
      const response = await problem(next, text, 429);
      response.headers.set("Retry-After", String(limit.retry_after_seconds));
      return response;
    }
    if (identity) {
      state.log.info({ provider: "dev" }, "dashboard sign-in completed");
      return redirect(next ?? "/dashboard/projects", [await sessions.start(procedures, identity)]);
    }
    if (!provider) return problem(next, "Choose one of the sign-in buttons.", 400);
    const fields = { token: "", purpose: "dashboard" as const, ...(next ? { returnTo: next } : {}) };
    const started = await signIn.start(provider, fields, state.log, "dashboard");
    return (
      started ?? problem(next, `${provider.label} could not be reached. Please try again in a moment.`, 502)
    );
  });
}

function signOut<S extends PageState>({ route, sessions }: DashboardContext<S>) {
  return route(
    "POST",
    "/dashboard/sign-out",
    "public",
    async ({ request, viewer, form, chrome, state, procedures }) => {
      if (viewer && !(await sessions.verifyCsrf(viewer, form))) {
        state.log.warn({}, "dashboard sign-out refused: CSRF token mismatch");
        return refusedPage(chrome);
      }
      const token = await sessions.token(request);
      if (token) await procedures.pages.sessions.end({ token });
      return redirect("/dashboard/sign-in?notice=signed_out", [sessions.clear()]);
    },
  );
}

/** Ends every session of the account (a lost device, a shared computer): the viewer's CSRF token is required. */
function signOutEverywhere<S extends PageState>({ route, sessions }: DashboardContext<S>) {
  return route("POST", "/dashboard/sign-out-everywhere", "viewer", async ({ procedures }) => {
    await procedures.pages.sessions.endAll();
    return redirect("/dashboard/sign-in?notice=signed_out_everywhere", [sessions.clear()]);
  });
}

/** The stylesheet and the script: no session needed, so none is looked up. */
function asset<S extends PageState>({ assets }: DashboardContext<S>): PageRoute<S> {
  return {
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
}

/** A dashboard sign-in's answer from the provider (through the claim flow's callback). */
function finishSignIn<S extends PageState>({ sessions, port }: DashboardContext<S>, problem: Problem) {
  return async (
    outcome: CallbackOutcome,
    transaction: SignInTransaction,
    provider: IdentityProvider,
    state: S,
  ): Promise<Response> => {
    const next = safeNext(transaction.returnTo);
    const label = provider.label;
    switch (outcome.kind) {
      case "state_mismatch":
        return problem(
          next,
          `The answer from ${label} does not belong to the sign-in started in this browser, so it was refused.`,
          400,
        );
      case "cancelled":
        return problem(next, `You cancelled signing in with ${label}.`, 200);
      case "provider_error":
        return problem(next, `${label} reported an error and did not sign you in. Please try again.`, 400);
      case "failed":
        return outcome.reason === "unavailable"
          ? problem(next, `${label} could not be reached. Please try again in a moment.`, 502)
          : problem(next, `${label} did not confirm this sign-in. Please sign in again.`, 400);
      case "verified": {
        const { identity } = outcome;
        state.log.info({ provider: provider.id }, "dashboard sign-in completed");
        const cookie = await sessions.start(port.procedures(state), {
          provider: identity.provider,
          subject: identity.subject,
          name: identity.name ?? identity.email,
        });
        return redirect(next ?? "/dashboard/projects", [cookie]);
      }
    }
  };
}

export function sessionRoutes<S extends PageState>(context: DashboardContext<S>) {
  const problem = signInProblem(context);
  const home = context.route("GET", "/dashboard", "public", async ({ viewer }) =>
    redirect(viewer ? "/dashboard/projects" : "/dashboard/sign-in"),
  );
  return {
    routes: [
      home,
      showSignIn(context),
      startSignIn(context, problem),
      signOut(context),
      signOutEverywhere(context),
      asset(context),
    ],
    finishSignIn: finishSignIn(context, problem),
  };
}
