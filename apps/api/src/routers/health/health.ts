import { livenessMeta, readinessMeta, ZLivenessResponse, ZReadinessResponse } from "@sms/contract";
import { z } from "zod";
import { respond } from "../../trpc/request-state.ts";
import { publicProcedure, router } from "../../trpc/trpc.ts";

export const healthRouter = router({
  liveness: publicProcedure
    .meta(livenessMeta)
    .input(z.void())
    .output(ZLivenessResponse)
    .query(() => ({ status: "alive" as const })),

  readiness: publicProcedure
    .meta(readinessMeta)
    .input(z.void())
    .output(ZReadinessResponse)
    .query(async ({ ctx }) => {
      // Shutting down (main.ts, SHUTDOWN_READINESS_DELAY_SECONDS): a load balancer's check takes the instance
      // out while it still serves whatever still arrives.
      if (ctx.deps.shuttingDown()) {
        respond(ctx, { status: 503 });
        return { status: "not_ready" as const, database: "ok" as const };
      }
      const reachable = await ctx.deps.databaseReachable();
      if (reachable) return { status: "ready" as const, database: "ok" as const };
      respond(ctx, { status: 503 });
      return { status: "not_ready" as const, database: "unreachable" as const };
    }),
});
