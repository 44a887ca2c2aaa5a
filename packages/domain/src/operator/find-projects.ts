// Operator: find projects by what a support request usually names: the
// project id, a key's displayable prefix (`sk_live_AbCd`; a whole key is
// refused, never looked up), or the account's e-mail address (exact).
import { API_KEY_PATTERN, isId } from "@sms/crypto";
import type { FoundProject } from "../store/index.ts";
import { KEY_PREFIX_PATTERN } from "./revoke-api-key.ts";
import {
  checkCommon,
  invalid,
  type OperatorDeps,
  type OperatorInput,
  type OperatorRefusal,
} from "./operator-support.ts";

export const FIND_PROJECTS_LIMIT = 50;

export type FindProjectsResult =
  | { ok: true; by: "project_id" | "key_prefix" | "email"; projects: FoundProject[] }
  | OperatorRefusal;

export async function findProjects(
  deps: Pick<OperatorDeps, "store">,
  input: OperatorInput & { query: string },
): Promise<FindProjectsResult> {
  const refused = checkCommon(input);
  if (refused) return refused;
  const query = input.query.trim();
  if (API_KEY_PATTERN.test(query)) return { ok: false, code: "whole_key_given" };
  const by = isId("prj", query)
    ? "project_id"
    : KEY_PREFIX_PATTERN.test(query)
      ? "key_prefix"
      : /^[^\s@]{1,64}@[^\s@]{1,255}$/.test(query)
        ? "email"
        : null;
  if (by === null) return invalid("query");
  const projects = await deps.store.projects.search({
    projectId: by === "project_id" ? query : null,
    keyPrefix: by === "key_prefix" ? query : null,
    email: by === "email" ? query : null,
    limit: FIND_PROJECTS_LIMIT,
  });
  return { ok: true, by, projects };
}
