// dashboard.credits.get: the balance against the ledger, the free tier, and the ledger, paged.
import { viewerProcedure } from "../../trpc/trpc.ts";
import { ZCreditsRequest, ZCreditsResponse } from "./credits.types.ts";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import { toLedgerEntry, ts } from "./records.types.ts";
import { orThrow } from "./support.ts";

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
      credits: {
        balance: credits.balance,
        ledger_sum: credits.ledgerSum,
        consistent: credits.consistent,
        has_paid_credits: credits.hasPaidCredits,
      },
      free_tier: {
        applies: freeTier.applies,
        limit: freeTier.limit,
        used_today: freeTier.usedToday,
        remaining_today: freeTier.remainingToday,
        reset_at: ts(freeTier.resetAt),
      },
      ledger: result.ledger.items.map(toLedgerEntry),
      next: encodeCursor(result.ledger.next),
    };
  });
