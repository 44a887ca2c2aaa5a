// dashboard.credits.get: the balance against the ledger, the free tier, and the ledger, paged.
import { dashboard } from "@sms/contract";
import { viewerProcedure } from "../../trpc/trpc.ts";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import { toCredits, toFreeTier, toLedgerEntry } from "./records.ts";
import { orThrow } from "./support.ts";

const { ZCreditsRequest, ZCreditsResponse } = dashboard;

export const LEDGER_PAGE_SIZE = 50;

export const creditsProcedure = viewerProcedure
  .input(ZCreditsRequest)
  .output(ZCreditsResponse)
  .query(async ({ ctx, input }) => {
    const result = orThrow(
      await ctx.deps.services.dashboard.credits({
        viewer: ctx.viewer,
        projectId: input.project_id,
        after: decodeCursor(input.cursor),
        limit: LEDGER_PAGE_SIZE,
      }),
    );
    ctx.state.projectId = input.project_id;
    const { credits, freeTier } = result;
    return {
      credits: toCredits(credits),
      free_tier: toFreeTier(freeTier),
      ledger: result.ledger.items.map(toLedgerEntry),
      next: encodeCursor(result.ledger.next),
    };
  });
