// The server-side caller of the public router: how a tool reaches the same
// procedures the REST routes call, with the MCP request's context.
import { appRouter } from "../router.ts";
import { createCallerFactory } from "../trpc/trpc.ts";

export const createCaller = createCallerFactory(appRouter);
export type Caller = ReturnType<typeof createCaller>;
