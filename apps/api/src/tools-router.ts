// What the internal listener serves (http/internal.ts) to internal tools over
// the typed @trpc/client (internal-client.ts): the public procedures (the
// same ones the REST routes call) and the operator's (operator.*), which the
// operator's command-line tool calls naming its operator. Never on the public
// port. The dashboard's pages call the same operator procedures in-process.
import { appRouter } from "./router.ts";
import { operatorRouter } from "./routers/operator/operator.ts";
import { mergeRouters, router } from "./trpc/trpc.ts";

export const toolsRouter = mergeRouters(appRouter, router({ operator: operatorRouter }));

export type ToolsRouter = typeof toolsRouter;
