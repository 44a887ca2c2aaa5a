// operator.*: everything the operator's command-line tool does, for signed-in
// identities listed in OPERATOR_IDENTITIES. The same bound functions as the
// tool (services.ts operatorServices), so every action writes the same audit
// row; the actor is the signed-in identity (`github:583231`).
import { operator } from "@sms/contract";
import { operatorProcedure, router } from "../../trpc/trpc.ts";
import { decodeCursor, encodeCursor } from "../dashboard/cursor.ts";
import {
  toAuditEntry,
  toCredits,
  toFreeTier,
  toKey,
  toMessageCount,
  toProject,
  toSenderRequest,
  ts,
  tsOrNull,
} from "../dashboard/records.ts";
import { refused } from "../refusals.ts";

const {
  ZApproveSenderRequest,
  ZApproveSenderResponse,
  ZAuditRequest,
  ZAuditResponse,
  ZClearSenderResponse,
  ZCreateLiveKeyRequest,
  ZCreateLiveKeyResponse,
  ZDescribeProjectResponse,
  ZFindProjectsRequest,
  ZFindProjectsResponse,
  ZGetKeyRequest,
  ZGetKeyResponse,
  ZGrantCreditsRequest,
  ZGrantCreditsResponse,
  ZListSenderRequestsRequest,
  ZListSenderRequestsResponse,
  ZProjectRequest,
  ZRefuseSenderRequest,
  ZRefuseSenderResponse,
  ZRevokeKeyRequest,
  ZRevokeKeyResponse,
  ZRotateKeysRequest,
  ZRotateKeysResponse,
  ZSetSenderRequest,
  ZSetSenderResponse,
  ZSetDailyCreditCapRequest,
  ZSetDailyCreditCapResponse,
  ZSuspensionRequest,
  ZSuspensionResponse,
} = operator;

export const OPERATOR_PAGE_SIZE = 50;

const findProjects = operatorProcedure
  .input(ZFindProjectsRequest)
  .output(ZFindProjectsResponse)
  .query(async ({ ctx, input }) => {
    const result = await ctx.deps.services.operator.findProjects({
      actor: ctx.actor,
      query: input.query,
    });
    if (!result.ok) return refused(result, ctx.register);
    return {
      ok: true as const,
      by: result.by,
      projects: result.projects.map((project) => ({
        ...toProject(project),
        account_id: project.accountId,
        account_email: project.accountEmail,
      })),
    };
  });

const describeProject = operatorProcedure
  .input(ZProjectRequest)
  .output(ZDescribeProjectResponse)
  .query(async ({ ctx, input }) => {
    const result = await ctx.deps.services.operator.describeProject({
      actor: ctx.actor,
      projectId: input.project_id,
    });
    if (!result.ok) return refused(result, ctx.register);
    ctx.state.projectId = result.project.id;
    const { project, credits, freeTier } = result;
    return {
      ok: true as const,
      project: {
        ...toProject({ ...project, creditBalance: credits.balance, hasPaidCredits: credits.hasPaidCredits }),
        account_id: project.accountId,
        daily_credit_cap: project.dailyCreditCap,
      },
      credits: toCredits(credits),
      free_tier: toFreeTier(freeTier),
      keys: result.keys.map(toKey),
      messages: result.messages.map(toMessageCount),
    };
  });

function suspension(action: "suspendProject" | "reinstateProject") {
  return operatorProcedure
    .input(ZSuspensionRequest)
    .output(ZSuspensionResponse)
    .mutation(async ({ ctx, input }) => {
      const result = await ctx.deps.services.operator[action]({
        actor: ctx.actor,
        projectId: input.project_id,
        ...(input.reason?.trim() ? { reason: input.reason } : {}),
      });
      if (!result.ok) return refused(result, ctx.register);
      ctx.state.projectId = result.projectId;
      return {
        ok: true as const,
        project_id: result.projectId,
        suspended_at: tsOrNull(result.suspendedAt),
        changed: result.changed,
      };
    });
}

const setDailyCreditCap = operatorProcedure
  .input(ZSetDailyCreditCapRequest)
  .output(ZSetDailyCreditCapResponse)
  .mutation(async ({ ctx, input }) => {
    const result = await ctx.deps.services.operator.setDailyCreditCap({
      actor: ctx.actor,
      projectId: input.project_id,
      cap: input.cap,
    });
    if (!result.ok) return refused(result, ctx.register);
    ctx.state.projectId = result.projectId;
    return { ok: true as const, project_id: result.projectId, daily_credit_cap: result.dailyCreditCap };
  });

const grantCredits = operatorProcedure
  .input(ZGrantCreditsRequest)
  .output(ZGrantCreditsResponse)
  .mutation(async ({ ctx, input }) => {
    const result = await ctx.deps.services.operator.grantPaidCredits({
      actor: ctx.actor,
      projectId: input.project_id,
      amount: input.amount,
      ...(input.reference?.trim() ? { reference: input.reference.trim() } : {}),
    });
    if (!result.ok) return refused(result, ctx.register);
    ctx.state.projectId = result.projectId;
    return {
      ok: true as const,
      project_id: result.projectId,
      amount: result.amount,
      reference: result.reference,
      entry_id: result.entryId,
      balance: result.balance,
      already_granted: result.alreadyGranted,
    };
  });

const createLiveKey = operatorProcedure
  .input(ZCreateLiveKeyRequest)
  .output(ZCreateLiveKeyResponse)
  .mutation(async ({ ctx, input }) => {
    const result = await ctx.deps.services.operator.createLiveKey({
      actor: ctx.actor,
      projectId: input.project_id,
    });
    if (!result.ok) return refused(result, ctx.register);
    ctx.state.projectId = result.projectId;
    ctx.state.log.info({ key_id: result.keyId, mode: "live" }, "operator: key created");
    return {
      ok: true as const,
      project_id: result.projectId,
      key: { id: result.keyId, mode: "live" as const, prefix: result.prefix, api_key: result.apiKey },
    };
  });

/** One key of a project (its prefix, never the key): what the revoke confirmation shows. No audit row: a read. */
const getKey = operatorProcedure
  .input(ZGetKeyRequest)
  .output(ZGetKeyResponse)
  .query(async ({ ctx, input }) => {
    const found = await ctx.deps.services.operator.findProjectKey({
      projectId: input.project_id,
      keyId: input.key_id,
    });
    if (!found.ok) return refused(found, ctx.register);
    ctx.state.projectId = input.project_id;
    return { ok: true as const, key: toKey(found.key) };
  });

const revokeKey = operatorProcedure
  .input(ZRevokeKeyRequest)
  .output(ZRevokeKeyResponse)
  .mutation(async ({ ctx, input }) => {
    const result = await ctx.deps.services.operator.revokeApiKey({
      actor: ctx.actor,
      ...(input.key_id !== undefined ? { keyId: input.key_id } : {}),
      ...(input.prefix !== undefined ? { prefix: input.prefix } : {}),
      ...(input.project_id ? { projectId: input.project_id } : {}),
    });
    if (!result.ok) return refused(result, ctx.register);
    ctx.state.projectId = result.projectId;
    ctx.state.log.info(
      { key_id: result.keyId, already_revoked: result.alreadyRevoked },
      "operator: key revoked",
    );
    return {
      ok: true as const,
      project_id: result.projectId,
      key: { id: result.keyId, mode: result.mode, prefix: result.prefix },
      revoked_at: ts(result.revokedAt),
      already_revoked: result.alreadyRevoked,
    };
  });

const setSender = operatorProcedure
  .input(ZSetSenderRequest)
  .output(ZSetSenderResponse)
  .mutation(async ({ ctx, input }) => {
    const result = await ctx.deps.services.operator.setProjectSender({
      actor: ctx.actor,
      projectId: input.project_id,
      name: input.name,
      ...(input.brand_id !== undefined ? { brandId: input.brand_id } : {}),
    });
    if (!result.ok) return refused(result, ctx.register);
    ctx.state.projectId = result.projectId;
    return {
      ok: true as const,
      project_id: result.projectId,
      sender: result.sender,
      brand_id: result.brandId,
      validated: result.validated,
      changed: result.changed,
    };
  });

const clearSender = operatorProcedure
  .input(ZProjectRequest)
  .output(ZClearSenderResponse)
  .mutation(async ({ ctx, input }) => {
    const result = await ctx.deps.services.operator.clearProjectSender({
      actor: ctx.actor,
      projectId: input.project_id,
    });
    if (!result.ok) return refused(result, ctx.register);
    ctx.state.projectId = result.projectId;
    return { ok: true as const, project_id: result.projectId, changed: result.changed };
  });

/** Re-encrypts stored texts and numbers under the service's current message key (docs/privacy.md). */
const rotateMessageKeys = operatorProcedure
  .input(ZRotateKeysRequest)
  .output(ZRotateKeysResponse)
  .mutation(async ({ ctx, input }) => {
    const result = await ctx.deps.services.operator.rotateKeys({
      actor: ctx.actor,
      batchSize: input.batch_size,
    });
    if (!result.ok) return refused(result, ctx.register);
    const { ok: _ok, currentKeyId, ...counts } = result;
    return { ok: true as const, current_key_id: currentKeyId, ...counts };
  });

const listSenderRequests = operatorProcedure
  .input(ZListSenderRequestsRequest)
  .output(ZListSenderRequestsResponse)
  .query(async ({ ctx, input }) => {
    const page = await ctx.deps.services.operator.listSenderRequests({
      status: input.status,
      after: decodeCursor(input.cursor),
      limit: OPERATOR_PAGE_SIZE,
    });
    return { requests: page.items.map(toSenderRequest), next: encodeCursor(page.next) };
  });

const approveSenderRequest = operatorProcedure
  .input(ZApproveSenderRequest)
  .output(ZApproveSenderResponse)
  .mutation(async ({ ctx, input }) => {
    const result = await ctx.deps.services.operator.approveSenderRequest({
      actor: ctx.actor,
      requestId: input.request_id,
      ...(input.brand_id !== undefined ? { brandId: input.brand_id } : {}),
    });
    if (!result.ok) return refused(result, ctx.register);
    ctx.state.projectId = result.projectId;
    return {
      ok: true as const,
      request_id: result.requestId,
      project_id: result.projectId,
      sender: result.sender,
      brand_id: result.brandId,
      validated: result.validated,
    };
  });

const refuseSenderRequest = operatorProcedure
  .input(ZRefuseSenderRequest)
  .output(ZRefuseSenderResponse)
  .mutation(async ({ ctx, input }) => {
    const result = await ctx.deps.services.operator.refuseSenderRequest({
      actor: ctx.actor,
      requestId: input.request_id,
      reason: input.reason,
    });
    if (!result.ok) return refused(result, ctx.register);
    ctx.state.projectId = result.projectId;
    return { ok: true as const, request_id: result.requestId, project_id: result.projectId };
  });

const auditLog = operatorProcedure
  .input(ZAuditRequest)
  .output(ZAuditResponse)
  .query(async ({ ctx, input }) => {
    const page = await ctx.deps.services.operator.listAuditLog({
      ...(input.project_id ? { projectId: input.project_id } : {}),
      after: decodeCursor(input.cursor),
      limit: OPERATOR_PAGE_SIZE,
    });
    if (!page.ok) return refused(page, ctx.register);
    return { ok: true as const, entries: page.items.map(toAuditEntry), next: encodeCursor(page.next) };
  });

export const operatorRouter = router({
  projects: router({
    find: findProjects,
    get: describeProject,
    suspend: suspension("suspendProject"),
    reinstate: suspension("reinstateProject"),
    setSender,
    clearSender,
    setDailyCreditCap,
  }),
  messageKeys: router({ rotate: rotateMessageKeys }),
  credits: router({ grant: grantCredits }),
  keys: router({ get: getKey, createLive: createLiveKey, revoke: revokeKey }),
  senderRequests: router({
    list: listSenderRequests,
    approve: approveSenderRequest,
    refuse: refuseSenderRequest,
  }),
  audit: router({ list: auditLog }),
});
