// The internal procedures: the pages' own (`pages.*`: claims, sessions,
// sign-in counting), the dashboard's (`dashboard.*`, an account holder's own
// projects) and the operator's (`operator.*`). Never served on the public
// port: the pages (@sms/web, through web-port.ts) call them in-process through
// createInternalCaller, with the session's viewer in the context. The
// internal listener serves router.ts's appRouter only (these need a signed-in viewer, which a token
// holder is not); the operator's tools are the operator CLI.
import { dashboardRouter } from "./routers/dashboard/dashboard.ts";
import { operatorRouter } from "./routers/operator/operator.ts";
import { pagesRouter } from "./routers/pages/pages.ts";
import { createCallerFactory, router } from "./trpc/trpc.ts";

export const internalRouter = router({
  pages: pagesRouter,
  dashboard: dashboardRouter,
  operator: operatorRouter,
});

export type InternalRouter = typeof internalRouter;

/** A server-side caller: `createInternalCaller({ deps, state, viewer }).dashboard.projects.list({})`. */
export const createInternalCaller = createCallerFactory(internalRouter);
