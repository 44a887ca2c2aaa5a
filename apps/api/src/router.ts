// The root router: every public route of spec 1.6, as tRPC procedures. The
// same procedures serve REST (trpc-to-openapi) and the typed @trpc/client.
import { healthRouter } from "./routers/health/health.ts";
import { getMessageProcedure } from "./routers/messages/get-message.ts";
import { sendMessageProcedure } from "./routers/messages/send-message.ts";
import { createTestKeyProcedure } from "./routers/test-keys/create-test-key.ts";
import { router } from "./trpc/trpc.ts";
import { checkVerificationProcedure } from "./routers/verifications/check-verification.ts";
import { getVerificationProcedure } from "./routers/verifications/get-verification.ts";
import { startVerificationProcedure } from "./routers/verifications/start-verification.ts";

export const appRouter = router({
  health: healthRouter,
  testKeys: router({ create: createTestKeyProcedure }),
  messages: router({ send: sendMessageProcedure, get: getMessageProcedure }),
  // The verifications extension (issue 22): beside the contract's routes, which it leaves as they are.
  verifications: router({
    start: startVerificationProcedure,
    check: checkVerificationProcedure,
    get: getVerificationProcedure,
  }),
});

export type AppRouter = typeof appRouter;
