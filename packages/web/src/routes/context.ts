// What every dashboard route file gets: the port, the sign-in and session
// kits, the page chrome, and `route()`, which wraps a handler with what every
// dashboard page does (resume the session, check same-origin and CSRF on a
// POST, read the form, require a viewer or an operator, map a thrown
// procedure error or a failure to a page).
import type { Procedures, Viewer } from "@sms/contract";
import type { Asset } from "../kit/assets.ts";
import { withCookies } from "../kit/cookies.ts";
import { FORM_PROBLEMS, isSameOriginPost, procedureErrorCode, readForm, redirect } from "../kit/http.ts";
import type { Sessions } from "../kit/sessions.ts";
import type { SignIn } from "../kit/sign-in.ts";
import type { PageRoute, PageState, WebPort } from "../port.ts";
import type { Chrome } from "../views/layout.ts";
import {
  badRequestPage,
  errorPage,
  forbiddenPage,
  notFoundPage,
  refusedPage,
  sessionEndedPage,
} from "../views/problems.ts";

/** Forms carry a few short fields; the longest is a sender request's purpose (500 characters, UTF-8, encoded). */
const MAX_FORM_BYTES = 8 * 1024;

export type Access = "public" | "viewer" | "operator";

/** The first field holding a control character other than tab and line breaks (the database refuses NUL). */
function fieldWithControlCharacter(form: URLSearchParams): string | null {
  for (const [name, value] of form) {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses.
    if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(value)) return name.slice(0, 40);
  }
  return null;
}

/** One request to a dashboard page. */
export type PageContext<S extends PageState = PageState> = {
  request: Request;
  url: URL;
  state: S;
  params: Record<string, string>;
  viewer: Viewer | null;
  chrome: Chrome;
  /** The form of a POST (empty for a GET). */
  form: URLSearchParams;
  /** The procedures, as this session's viewer. */
  procedures: Procedures;
};

/**
 * More than a key's displayable prefix (sk_live_ and four characters): a whole key, or most of one. A
 * search box refuses it and never writes it back into a page (the operator's and the project's).
 */
export const looksLikeWholeKey = (query: string) => /sk_(?:test|live)_[A-Za-z0-9_-]{5,}/.test(query);

/** One-shot notices a redirect may name (`?notice=`): only these, never free text. */
export const NOTICES: Record<string, string> = {
  signed_out: "You are signed out.",
  signed_out_everywhere: "You are signed out everywhere: every session of your account has ended.",
  key_revoked: "The key was revoked: it stops working on every server within a few seconds.",
  key_already_revoked: "That key was already revoked; nothing changed.",
  sender_requested: "Your request was sent to the operator.",
  suspended: "The project is suspended: every key is refused with 403 project_suspended.",
  already_suspended: "The project was already suspended; nothing changed.",
  reinstated: "The project is active again.",
  already_active: "The project was already active; nothing changed.",
  credits_granted: "The credits were granted.",
  daily_cap_set: "The daily credit cap was saved.",
  daily_cap_cleared: "The daily credit cap was removed: live sends are limited by the balance only.",
  credits_already_granted: "That reference was already granted; nothing changed.",
  sender_approved: "The sender name was approved and set on the project.",
  sender_refused: "The request was refused; the account holder sees the reason.",
};

/** A static asset's URL, versioned by its content hash (cached for good). */
export const assetUrl = (asset: Asset) => `/dashboard/assets/${asset.path}?v=${asset.version}`;

export type DashboardContext<S extends PageState = PageState> = ReturnType<typeof dashboardContext<S>>;

export function dashboardContext<S extends PageState>(options: {
  port: WebPort<S>;
  signIn: SignIn;
  sessions: Sessions;
  assets: { css: Asset; js: Asset };
}) {
  const { port, signIn, sessions, assets } = options;
  const origin = new URL(port.config.publicBaseUrl).origin;

  async function chromeFor(viewer: Viewer | null, formActionOrigins?: readonly string[]): Promise<Chrome> {
    return {
      cssUrl: assetUrl(assets.css),
      jsUrl: assetUrl(assets.js),
      devSignIn: port.config.devSignIn,
      viewer,
      csrfToken: viewer ? await sessions.csrfToken(viewer) : null,
      providerLabel: (id) => signIn.labelOf(id) ?? id,
      ...(formActionOrigins ? { formActionOrigins } : {}),
    };
  }

  /** The checks before the handler: a response that answers instead, or the form. */
  async function admit(
    request: Request,
    method: "GET" | "POST",
    access: Access,
    session: { viewer: Viewer | null; hadCookie: boolean },
    chrome: Chrome,
    state: S,
  ): Promise<Response | URLSearchParams> {
    const { viewer } = session;
    let form = new URLSearchParams();
    if (method === "POST") {
      if (!isSameOriginPost(request, origin)) {
        state.log.warn({}, "dashboard change refused: cross-site request");
        return refusedPage(chrome);
      }
      const read = await readForm(request, MAX_FORM_BYTES, port.readBody);
      if (typeof read === "string")
        return badRequestPage(chrome, FORM_PROBLEMS[read].text, FORM_PROBLEMS[read].status);
      form = read;
      const unreadable = fieldWithControlCharacter(form);
      if (unreadable !== null) {
        const text = `The field “${unreadable}” holds a control character, which no field accepts.`;
        return badRequestPage(chrome, text);
      }
    }
    if (access !== "public" && !viewer) {
      const cleared = session.hadCookie ? [sessions.clear()] : [];
      if (method === "POST") return withCookies(sessionEndedPage(chrome), cleared);
      const url = new URL(request.url);
      return redirect(
        `/dashboard/sign-in?${new URLSearchParams({ next: `${url.pathname}${url.search}` })}`,
        cleared,
      );
    }
    if (method === "POST" && viewer && access !== "public" && !(await sessions.verifyCsrf(viewer, form))) {
      state.log.warn({}, "dashboard change refused: CSRF token mismatch");
      return refusedPage(chrome);
    }
    if (access === "operator" && !viewer?.operator) return forbiddenPage(chrome);
    return form;
  }

  /** A thrown procedure error as its page; anything else is logged and answered 500. */
  function failurePage(error: unknown, chrome: Chrome, state: S): Response {
    const thrown = procedureErrorCode(error);
    switch (thrown?.code) {
      case "NOT_FOUND":
        return notFoundPage(chrome);
      case "BAD_REQUEST":
        // Our own sentences (no cause); a schema's findings are not shown as they are.
        return badRequestPage(
          chrome,
          thrown.fromSchema ? "Something in the request is not valid." : (error as Error).message,
        );
      case "FORBIDDEN":
        return forbiddenPage(chrome);
      case "UNAUTHORIZED":
        return sessionEndedPage(chrome);
    }
    state.log.error({ err: port.serializeError(error) }, "dashboard page failed");
    return errorPage(chrome, state.requestId);
  }

  function route(
    method: "GET" | "POST",
    path: `/${string}`,
    access: Access,
    handle: (context: PageContext<S>) => Promise<Response>,
  ): PageRoute<S> {
    return {
      method,
      path,
      async handle(request, state, params) {
        let chrome = await chromeFor(null);
        try {
          const session = await sessions.resume(request, port.procedures(state));
          chrome = await chromeFor(session.viewer);
          const admitted = await admit(request, method, access, session, chrome, state);
          if (admitted instanceof Response) return admitted;
          const { viewer } = session;
          const procedures = port.procedures(state, viewer ?? undefined);
          const url = new URL(request.url);
          if (viewer && method === "GET" && params.project_id) {
            chrome = { ...chrome, ...(await projectChromeOf(procedures, params.project_id)) };
          }
          return await handle({ request, url, state, params, viewer, chrome, form: admitted, procedures });
        } catch (error) {
          return failurePage(error, chrome, state);
        }
      },
    };
  }

  return { port, signIn, sessions, assets, chromeFor, route, failurePage };
}

/**
 * Every page of a project names it in its header, and under its owner's
 * low-balance threshold shows the banner (layout.ts): one read. A project
 * that is not the viewer's shows neither: the page itself answers 404.
 */
async function projectChromeOf(
  procedures: Procedures,
  projectId: string,
): Promise<Pick<Chrome, "lowBalance" | "projectName">> {
  try {
    const spending = await procedures.dashboard.projects.spending({ project_id: projectId });
    const projectName = spending.project_name;
    if (!spending.low_balance || spending.low_balance_threshold === null) return { projectName };
    return {
      projectName,
      lowBalance: {
        projectId,
        balance: spending.credit_balance,
        threshold: spending.low_balance_threshold,
        daysLeft: spending.days_left,
      },
    };
  } catch (error) {
    if (procedureErrorCode(error)) return {};
    throw error;
  }
}

/** A path parameter ("" when absent). */
export const param = (context: { params: Record<string, string> }, name: string) =>
  context.params[name] ?? "";
export const emptyToUndefined = (value: string | null) =>
  value === null || value === "" ? undefined : value;
