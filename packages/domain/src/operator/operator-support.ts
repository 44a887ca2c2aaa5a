// What every operator action shares (the command-line tool and the dashboard
// call the same functions): its dependencies, its refusals (values, not
// exceptions, with the facts to word them by) and the input checks.
import { isId } from "@sms/crypto";
import { ACTOR_PATTERN } from "../model/audit.ts";
import type { Clock } from "../ports.ts";
import type { Store } from "../store/index.ts";

export type OperatorDeps = { store: Store; clock: Clock };

/** Who acts (an operator's name, an OS user or a signed-in identity); written to the audit log. */
export type OperatorInput = { actor: string };

/** The inputs an operator action checks, named as the caller named them. */
export type OperatorField =
  | "actor"
  | "project_id"
  | "key"
  | "key_id"
  | "key_prefix"
  | "reason"
  | "amount"
  | "cap"
  | "reference"
  | "sender_name"
  | "brand_id"
  | "batch_size"
  | "query"
  | "key_name";

export type OperatorRefusal =
  | { ok: false; code: "invalid_input"; field: OperatorField }
  /** A whole API key was passed where its id or prefix belongs: never echo it. */
  | { ok: false; code: "whole_key_given" }
  | { ok: false; code: "project_not_found"; projectId: string }
  | { ok: false; code: "project_not_claimed"; projectId: string }
  | { ok: false; code: "project_suspended"; projectId: string }
  | { ok: false; code: "key_not_found" }
  | { ok: false; code: "key_ambiguous"; keyIds: string[] }
  | { ok: false; code: "reference_conflict"; reference: string; earlierAmount: number }
  | {
      ok: false;
      code: "brand_not_found";
      name: string;
      brandId: number | null;
      providerName: string | null;
      approvedIds: number[];
    }
  | { ok: false; code: "brand_not_approved"; brandId: number; providerName: string }
  | { ok: false; code: "brand_check_failed"; reason: string };

export type OperatorRefusalCode = OperatorRefusal["code"];

export const invalid = (field: OperatorField): OperatorRefusal => ({
  ok: false,
  code: "invalid_input",
  field,
});
export const projectNotFound = (projectId: string): OperatorRefusal => ({
  ok: false,
  code: "project_not_found",
  projectId,
});

/** Checks what every action takes: the actor, and a project id when given. */
export function checkCommon(input: OperatorInput, projectId?: string): OperatorRefusal | null {
  if (!ACTOR_PATTERN.test(input.actor)) return invalid("actor");
  if (projectId !== undefined && !isId("prj", projectId)) return invalid("project_id");
  return null;
}
