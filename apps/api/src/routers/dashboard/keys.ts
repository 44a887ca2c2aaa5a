// dashboard.keys.*: a project's API keys. A new key is returned once (the
// page shows it once); only its hash is stored. A key, or a project that is
// not the viewer's, that is not found is a value of the answer (key_not_found,
// project_not_found), as every other refusal of these procedures.
import { dashboard } from "@sms/contract";
import { viewerProcedure } from "../../trpc/trpc.ts";
import { refused } from "../refusals.ts";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import { toKey, toProject, ts } from "./records.ts";
import { orThrow } from "./support.ts";

const {
  ZCreateLiveKeyRequest,
  ZCreateLiveKeyResponse,
  ZGetKeyRequest,
  ZGetKeyResponse,
  ZListKeysRequest,
  ZListKeysResponse,
  ZRevokeKeyRequest,
  ZRevokeKeyResponse,
  ZRollTestKeyRequest,
  ZRollTestKeyResponse,
} = dashboard;

export const KEYS_PAGE_SIZE = 25;

export const listKeysProcedure = viewerProcedure
  .input(ZListKeysRequest)
  .output(ZListKeysResponse)
  .query(async ({ ctx, input }) => {
    const page = orThrow(
      await ctx.deps.services.dashboard.keys.list({
        viewer: ctx.viewer,
        projectId: input.project_id,
        after: decodeCursor(input.cursor),
        limit: KEYS_PAGE_SIZE,
      }),
    );
    ctx.state.projectId = input.project_id;
    return { project: toProject(page.project), keys: page.items.map(toKey), next: encodeCursor(page.next) };
  });

export const getKeyProcedure = viewerProcedure
  .input(ZGetKeyRequest)
  .output(ZGetKeyResponse)
  .query(async ({ ctx, input }) => {
    const found = await ctx.deps.services.dashboard.keys.get({
      viewer: ctx.viewer,
      projectId: input.project_id,
      keyId: input.key_id,
    });
    if (!found.ok) return refused(found);
    ctx.state.projectId = input.project_id;
    return { ok: true as const, key: toKey(found.key) };
  });

export const createLiveKeyProcedure = viewerProcedure
  .input(ZCreateLiveKeyRequest)
  .output(ZCreateLiveKeyResponse)
  .mutation(async ({ ctx, input }) => {
    const result = await ctx.deps.services.dashboard.keys.createLive({
      viewer: ctx.viewer,
      projectId: input.project_id,
      ...(input.name?.trim() ? { name: input.name } : {}),
    });
    if (!result.ok) return refused(result);
    ctx.state.projectId = result.projectId;
    ctx.state.log.info({ key_id: result.keyId, mode: "live" }, "dashboard: key created");
    return {
      ok: true as const,
      key: { id: result.keyId, mode: "live" as const, prefix: result.prefix, api_key: result.apiKey },
    };
  });

export const revokeKeyProcedure = viewerProcedure
  .input(ZRevokeKeyRequest)
  .output(ZRevokeKeyResponse)
  .mutation(async ({ ctx, input }) => {
    const result = await ctx.deps.services.dashboard.keys.revoke({
      viewer: ctx.viewer,
      projectId: input.project_id,
      keyId: input.key_id,
    });
    if (!result.ok) return refused(result);
    ctx.state.projectId = result.projectId;
    ctx.state.log.info(
      { key_id: result.keyId, already_revoked: result.alreadyRevoked },
      "dashboard: key revoked",
    );
    return {
      ok: true as const,
      key: { id: result.keyId, mode: result.mode, prefix: result.prefix },
      revoked_at: ts(result.revokedAt),
      already_revoked: result.alreadyRevoked,
    };
  });

export const rollTestKeyProcedure = viewerProcedure
  .input(ZRollTestKeyRequest)
  .output(ZRollTestKeyResponse)
  .mutation(async ({ ctx, input }) => {
    const result = await ctx.deps.services.dashboard.keys.rollTest({
      viewer: ctx.viewer,
      projectId: input.project_id,
    });
    if (!result.ok) return refused(result);
    ctx.state.projectId = result.projectId;
    ctx.state.log.info(
      { key_id: result.keyId, revoked: result.revoked.length },
      "dashboard: test key rolled",
    );
    return {
      ok: true as const,
      key: { id: result.keyId, mode: "test" as const, prefix: result.prefix, api_key: result.apiKey },
      revoked: result.revoked.map((key) => ({ id: key.keyId, prefix: key.prefix })),
    };
  });
