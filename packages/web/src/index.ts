// @sms/web: the browser's pages (the claim flow and the dashboard), mounted by
// the app through one entry. The app implements the port (port.ts) and mounts
// `routes` beside its API routes and `errors` as its HTML answers under
// /claim and /dashboard.
import { dashboardAssets } from "./kit/assets.ts";
import { sessionCookies } from "./kit/sessions.ts";
import { signInKit } from "./kit/sign-in.ts";
import type { PageErrorRenderer, PageRoute, PageState, WebPort } from "./port.ts";
import { claimPageErrors, claimRoutes } from "./routes/claim.ts";
import { assetUrl, dashboardContext } from "./routes/context.ts";
import { creditRoutes } from "./routes/credits.ts";
import { exportRoutes } from "./routes/exports.ts";
import { keyRoutes } from "./routes/keys.ts";
import { messageRoutes } from "./routes/messages.ts";
import { operatorRoutes } from "./routes/operator.ts";
import { projectRoutes } from "./routes/projects.ts";
import { requestRoutes } from "./routes/requests.ts";
import { senderRoutes } from "./routes/sender.ts";
import { sessionRoutes } from "./routes/session.ts";
import { settingsRoutes } from "./routes/settings.ts";
import { spendingRoutes } from "./routes/spending.ts";
import { tryRoutes } from "./routes/try.ts";
import { verificationRoutes } from "./routes/verifications.ts";
import { badRequestPage, errorPage, noSuchPage } from "./views/problems.ts";

export type { Procedures, Viewer } from "@sms/contract";
export { generateCookieSecret } from "./kit/cookies.ts";
export {
  type IdentityProvider,
  type IdentityProviderConfig,
  identityProvidersFromConfig,
} from "./kit/identity-providers.ts";
export type { PageErrorRenderer, PageRoute, PageState, WebPort } from "./port.ts";

export type Web<S extends PageState> = {
  routes: PageRoute<S>[];
  /** The HTML answers under /dashboard and /claim when no page took a request. */
  errors: PageErrorRenderer[];
};

export async function createWeb<S extends PageState>(port: WebPort<S>): Promise<Web<S>> {
  const signIn = signInKit({
    providers: port.identityProviders,
    devSignIn: port.config.devSignIn,
    publicBaseUrl: port.config.publicBaseUrl,
    sealer: port.sealer,
    clock: port.clock,
    serializeError: port.serializeError,
  });
  const sessions = sessionCookies({
    sealer: port.sealer,
    clock: port.clock,
    secure: signIn.secure,
    offered: signIn.offered,
  });
  const assets = await dashboardAssets();
  const dashboard = dashboardContext({ port, signIn, sessions, assets });
  const cssUrl = assetUrl(assets.css);
  const session = sessionRoutes(dashboard);
  const routes = [
    ...session.routes,
    ...projectRoutes(dashboard),
    ...keyRoutes(dashboard),
    ...messageRoutes(dashboard),
    ...requestRoutes(dashboard),
    ...spendingRoutes(dashboard),
    ...settingsRoutes(dashboard),
    ...tryRoutes(dashboard),
    ...exportRoutes(dashboard),
    ...verificationRoutes(dashboard),
    ...creditRoutes(dashboard),
    ...senderRoutes(dashboard),
    ...operatorRoutes(dashboard),
    ...claimRoutes({ port, signIn, sessions, finishDashboardSignIn: session.finishSignIn, cssUrl }),
  ];
  const dashboardErrors: PageErrorRenderer = {
    prefix: "/dashboard",
    async render(error, requestId) {
      const chrome = await dashboard.chromeFor(null);
      if (error.code === "route_not_found") return noSuchPage(chrome);
      if (error.status >= 500) return errorPage(chrome, requestId);
      return badRequestPage(chrome, error.message, error.status);
    },
  };
  return { routes, errors: [dashboardErrors, claimPageErrors({ devSignIn: port.config.devSignIn, cssUrl })] };
}
