// The root router: every public route of spec 1.6, as tRPC procedures. The
// same procedures serve REST (trpc-to-openapi) and the typed @trpc/client.
import { healthRouter } from "./routers/health/health.ts";
import { getMessageProcedure } from "./routers/messages/get-message.ts";
import { sendMessageProcedure } from "./routers/messages/send-message.ts";
import { createTestKeyProcedure } from "./routers/test-keys/create-test-key.ts";
import { router } from "./trpc/trpc.ts";

export const appRouter = router({
  health: healthRouter,
  testKeys: router({ create: createTestKeyProcedure }),
  messages: router({ send: sendMessageProcedure, get: getMessageProcedure }),
});

export type AppRouter = typeof appRouter;
