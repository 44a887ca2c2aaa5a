// dashboard.messages.sendTest: "Send a test message" on the project page. The
// body is checked by the REST route's own schema (ZSendMessageRequest) and
// sent by the same use case the REST route calls (services.messages.send), in
// test mode as the project's active test key; refusals are worded as the API
// words them (sendRefusal), so the page says what an integration would hear.
import { dashboard, ZSendMessageRequest } from "@sms/contract";
import { recipientRemaining } from "@sms/domain";
import { sendRefusal } from "../../http/errors.ts";
import { deferredLog } from "../../trpc/request-state.ts";
import { viewerProcedure } from "../../trpc/trpc.ts";
import { refused } from "../refusals.ts";

const { ZSendTestRequest, ZSendTestResponse } = dashboard;

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
    const allowance = result.replayed ? undefined : result.recipient;
    return {
      ok: true as const,
      message_id: result.message.id,
      status: result.message.status,
      replayed: result.replayed,
      live_recipient: allowance ? { limit: allowance.limit, remaining: recipientRemaining(allowance) } : null,
    };
  });
