// dashboard.messages.sendTest: "Send a test message" on the project page. The
// body is checked by the REST route's own schema (ZSendMessageRequest) and
// sent by the same use case the REST route calls (services.messages.send), in
// test mode as the project's active test key; refusals are worded as the API
// words them (sendRefusal), so the page says what an integration would hear.
import { IDEMPOTENCY_KEY_MAX_LENGTH, idempotencyKeyProblem } from "@sms/domain";
import { z } from "zod";
import { sendRefusal } from "../../http/errors.ts";
import { deferredLog } from "../../trpc/request-state.ts";
import { viewerProcedure } from "../../trpc/trpc.ts";
import { ZSendMessageRequest } from "../messages/send-message.types.ts";
import { refused } from "../refusals.ts";
import { ZProjectId, ZRefusal } from "./records.types.ts";

export const ZSendTestRequest = z.strictObject({
  project_id: ZProjectId,
  // The API's own rule (spec 4.2): 1–200 characters, counted as characters, not UTF-16 units.
  idempotency_key: z
    .string()
    .min(1)
    .max(2 * IDEMPOTENCY_KEY_MAX_LENGTH)
    .refine((key) => idempotencyKeyProblem(key) === null, {
      message: `An Idempotency-Key is 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters.`,
    }),
  to: z.string().max(40),
  template: z.string().max(64),
  locale: z.string().max(8),
  variables: z.record(z.string().max(32), z.string().max(200)),
});
export const ZSendTestResponse = z.discriminatedUnion("ok", [
  z.object({ ok: z.literal(true), message_id: z.string(), status: z.string(), replayed: z.boolean() }),
  ZRefusal,
]);

export const sendTestProcedure = viewerProcedure
  .input(ZSendTestRequest)
  .output(ZSendTestResponse)
  .mutation(async ({ ctx, input }) => {
    const sender = await ctx.deps.services.dashboard.testSender({
      viewer: ctx.viewer,
      projectId: input.project_id,
    });
    if (!sender.ok) {
      if (sender.code === "no_test_key")
        return {
          ok: false as const,
          code: "no_test_key",
          message: "This project has no active test key: roll the test key first.",
        };
      return refused(sender);
    }
    ctx.state.projectId = sender.project.id;
    const body = ZSendMessageRequest.safeParse({
      to: input.to,
      template: input.template,
      locale: input.locale,
      variables: input.variables,
    });
    if (!body.success) {
      return {
        ok: false as const,
        code: "invalid_request",
        message: body.error.issues[0]?.message ?? "The request is not valid.",
      };
    }
    const result = await ctx.deps.services.messages.send({
      project: sender.project,
      mode: "test",
      keyId: sender.keyId,
      idempotencyKey: input.idempotency_key,
      request: body.data,
      logger: deferredLog(ctx.state),
    });
    if (!result.ok) {
      const error = sendRefusal(result, ctx.deps.clock.now());
      return { ok: false as const, code: error.code, message: error.message };
    }
    return {
      ok: true as const,
      message_id: result.message.id,
      status: result.message.status,
      replayed: result.replayed,
    };
  });
