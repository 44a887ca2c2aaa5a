// The dashboard's wording of the domain's refusals (the account holder's and
// the operator's): one sentence each, saying what to change. The command-line
// tool words the same codes for a terminal (operator/operator-cli.ts).
import {
  type DashboardRefusal,
  MAX_CREDIT_GRANT,
  MAX_REASON_LENGTH,
  type OperatorRefusal,
  type RequestSenderResult,
  type SenderRequestRefusal,
} from "@sms/domain";

export type DashboardActionRefusal =
  | OperatorRefusal
  | DashboardRefusal
  | SenderRequestRefusal
  | Extract<RequestSenderResult, { ok: false }>;

type InvalidField = Extract<DashboardActionRefusal, { code: "invalid_input" }>["field"];

const FIELD_TEXT: Record<InvalidField, string> = {
  actor: "Your identity cannot be written to the audit log.",
  project_id: "That is not a project id.",
  key: "Name one key.",
  key_id: "That is not a key id.",
  key_prefix: "A key prefix is sk_test_ or sk_live_ and four more characters.",
  reason: `Give a reason of 1 to ${MAX_REASON_LENGTH} characters.`,
  amount: `The amount must be a whole number from 1 to ${MAX_CREDIT_GRANT.toLocaleString("en-US")}.`,
  reference: "The reference must be 1 to 200 printable characters, without spaces at either end.",
  sender_name:
    "A sender name is 1 to 11 characters: letters, digits, space and . & _ -, with at least one letter.",
  brand_id: "Give the uBill brand id (a whole number): no brand list is configured to look it up.",
  batch_size: "The batch size must be from 1 to 10,000.",
  query: "Search by a project id (prj_…), a key prefix (sk_live_AbCd) or an e-mail address.",
  message_id: "That is not a message id.",
  purpose: "Say in 3 to 500 characters what the name is for.",
  filter: "One of the filters is not valid.",
};

/** The sentence a refusal is shown as. */
export function refusalMessage(refusal: DashboardActionRefusal): string {
  switch (refusal.code) {
    case "invalid_input":
      return FIELD_TEXT[refusal.field] ?? "Something in the form is not valid.";
    case "whole_key_given":
      return "That is a whole API key: never paste one anywhere. Use its prefix, the first 12 characters.";
    case "project_not_found":
      return "No such project.";
    case "project_not_claimed":
      return "This project has not been claimed: live keys and paid credits are only for claimed projects.";
    case "project_suspended":
      return "This project is suspended, so this cannot be done until it is reinstated.";
    case "message_not_found":
      return "No such message in this project.";
    case "key_not_found":
      return "No such key in this project.";
    case "key_ambiguous":
      return "Several keys have that prefix: revoke by key id instead.";
    case "reference_conflict":
      return `Reference ${refusal.reference} was already used for a grant of ${refusal.earlierAmount} credits to this project; nothing changed.`;
    case "brand_not_found":
      if (refusal.approvedIds.length > 1)
        return `Several approved uBill brands are named "${refusal.name}" (ids ${refusal.approvedIds.join(", ")}): give the brand id.`;
      if (refusal.brandId !== null && refusal.providerName !== null)
        return `uBill brand ${refusal.brandId} is named "${refusal.providerName}", not "${refusal.name}".`;
      if (refusal.brandId !== null) return `uBill has no brand with id ${refusal.brandId}.`;
      return `uBill has no brand named "${refusal.name}": register it with uBill first.`;
    case "brand_not_approved":
      return `uBill has not approved brand "${refusal.providerName}" (id ${refusal.brandId}) yet.`;
    case "brand_check_failed":
      return "uBill's brand list could not be read; nothing changed. Try again in a moment.";
    case "sender_request_pending":
      return `A request for "${refusal.request.name}" is already waiting for the operator: one at a time.`;
    case "sender_already_set":
      return `This project already sends as ${refusal.sender}.`;
    case "sender_request_not_found":
      return "No such sender request.";
    case "sender_request_decided":
      return `That request was already ${refusal.status}.`;
  }
}

/** A refusal as a procedure returns it: the code, and the sentence. */
export function refused(refusal: DashboardActionRefusal): { ok: false; code: string; message: string } {
  return { ok: false, code: refusal.code, message: refusalMessage(refusal) };
}
