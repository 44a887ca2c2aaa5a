// The account holder's and the operator's refusals (the domain's codes and
// data), each worded once in two registers side by side: `terminal` for the
// operator's command-line tool, `browser` for the dashboard. The procedures
// word a refusal in their caller's register (trpc/trpc.ts Context.register).
// A leaf: imports nothing of the app.
import {
  type DashboardRefusal,
  MAX_CREDIT_GRANT,
  MAX_DAILY_CREDIT_CAP,
  MAX_REASON_LENGTH,
  type OperatorRefusal,
  PROJECT_NAME_MAX_LENGTH,
  type RequestSenderResult,
  type SenderRequestRefusal,
} from "@sms/domain";

/** Who reads the sentence: a person at a terminal (the operator's tool) or in a browser (the dashboard). */
export type Register = "terminal" | "browser";

export type ActionRefusal =
  | OperatorRefusal
  | DashboardRefusal
  | SenderRequestRefusal
  | Extract<RequestSenderResult, { ok: false }>;

type InvalidField = Extract<ActionRefusal, { code: "invalid_input" }>["field"];
type Worded = { readonly terminal: string; readonly browser: string };
const same = (text: string): Worded => ({ terminal: text, browser: text });

/** What each input must be. */
export const INPUT_RULES: Readonly<Record<InvalidField, Worded>> = {
  actor: {
    terminal: "The actor must be 1–128 characters: letters, digits and . _ @ + : -.",
    browser: "Your identity cannot be written to the audit log.",
  },
  project_id: {
    terminal: "The project id must look like prj_ followed by 26 characters.",
    browser: "That is not a project id.",
  },
  key: {
    terminal: "Name the key by exactly one of: its id (key_…) or its prefix (sk_live_XXXX).",
    browser: "Name one key.",
  },
  key_id: {
    terminal: "The key id must look like key_ followed by 26 characters.",
    browser: "That is not a key id.",
  },
  key_prefix: {
    terminal: "The key prefix must be sk_test_ or sk_live_ followed by 4 characters.",
    browser: "A key prefix is sk_test_ or sk_live_ and four more characters.",
  },
  reason: {
    terminal: `The reason must be 1–${MAX_REASON_LENGTH} characters.`,
    browser: `Give a reason of 1 to ${MAX_REASON_LENGTH} characters.`,
  },
  amount: {
    terminal: `The amount must be a whole number from 1 to ${MAX_CREDIT_GRANT}.`,
    browser: `The amount must be a whole number from 1 to ${MAX_CREDIT_GRANT.toLocaleString("en-US")}.`,
  },
  reference: {
    terminal: "The reference must be 1–200 printable ASCII characters, not starting or ending with a space.",
    browser: "The reference must be 1 to 200 printable characters, without spaces at either end.",
  },
  sender_name: {
    terminal:
      "The sender name must be 1–11 characters (letters, digits, space . & _ -), start with a letter or digit and contain a letter.",
    browser:
      "A sender name is 1 to 11 characters: letters, digits, space and . & _ -, with at least one letter.",
  },
  brand_id: {
    terminal:
      "The brand id must be a positive whole number (and is needed when no live provider credentials are configured, since the brand cannot be looked up).",
    browser: "Give the uBill brand id (a whole number): no brand list is configured to look it up.",
  },
  batch_size: {
    terminal: "--batch-size must be 1 to 10000.",
    browser: "The batch size must be from 1 to 10,000.",
  },
  query: {
    terminal: "Search by a project id (prj_…), a key prefix (sk_live_XXXX) or an e-mail address.",
    browser: "Search by a project id (prj_…), a key prefix (sk_live_AbCd) or an e-mail address.",
  },
  message_id: same("That is not a message id."),
  purpose: same("Say in 3 to 500 characters what the name is for."),
  filter: same("One of the filters is not valid."),
  search: same(
    "Paste a message id (msg_…), a request id (req_…), a verification id (vrf_…) or an Idempotency-Key, at most 255 characters.",
  ),
  cap: {
    terminal: `The daily credit cap must be a whole number from 1 to ${MAX_DAILY_CREDIT_CAP}, or none for no cap.`,
    browser: `The daily credit cap must be a whole number from 1 to ${MAX_DAILY_CREDIT_CAP.toLocaleString("en-US")}, or empty for no cap.`,
  },
  threshold: same(
    "The low-balance threshold must be a whole number from 1 to 1,000,000, or empty for no warning.",
  ),
  key_name: same("A key's name is at most 64 characters, without control characters."),
  project_name: same(
    `A project's name is 1 to ${PROJECT_NAME_MAX_LENGTH} characters, without control characters (empty removes it).`,
  ),
};

/** The sentence a refusal is shown as, in the reader's register. */
export function refusalText(refusal: ActionRefusal, register: Register): string {
  return worded(refusal)[register];
}

function worded(refusal: ActionRefusal): Worded {
  switch (refusal.code) {
    case "invalid_input":
      return INPUT_RULES[refusal.field] ?? same("Something in the input is not valid.");
    case "whole_key_given":
      return {
        terminal:
          "That is a whole API key: never paste one into a command. Use its prefix, the first 12 characters.",
        browser:
          "That is a whole API key: never paste one anywhere. Use its prefix, the first 12 characters.",
      };
    case "project_not_found":
      return {
        terminal: "projectId" in refusal ? `No project ${refusal.projectId}.` : "No such project.",
        browser: "No such project.",
      };
    case "project_not_claimed":
      return {
        terminal: `Project ${refusal.projectId} has not been claimed: live keys and paid credits are only for projects a human has claimed in the browser.`,
        browser:
          "This project has not been claimed: live keys and paid credits are only for claimed projects.",
      };
    case "project_suspended":
      return {
        terminal: `Project ${refusal.projectId} is suspended: reinstate it first.`,
        browser: "This project is suspended, so this cannot be done until it is reinstated.",
      };
    case "message_not_found":
      return same("No such message in this project.");
    case "request_not_found":
      return same("No such request in this project's log (requests are kept for a limited time).");
    case "key_not_found":
      return { terminal: "No such API key.", browser: "No such key in this project." };
    case "key_ambiguous":
      return {
        terminal: `Several keys have that prefix (${refusal.keyIds.join(", ")}): revoke by key id instead.`,
        browser: "Several keys have that prefix: revoke by key id instead.",
      };
    case "reference_conflict":
      return same(
        `Reference ${refusal.reference} was already used for a grant of ${refusal.earlierAmount} credits to this project; nothing changed.`,
      );
    case "brand_not_found":
      if (refusal.approvedIds.length > 1)
        return {
          terminal: `Several approved brands are named "${refusal.name}" (ids ${refusal.approvedIds.join(", ")}): pass --brand-id.`,
          browser: `Several approved uBill brands are named "${refusal.name}" (ids ${refusal.approvedIds.join(", ")}): give the brand id.`,
        };
      if (refusal.brandId !== null && refusal.providerName !== null)
        return {
          terminal: `Brand ${refusal.brandId} is named "${refusal.providerName}" at the provider, not "${refusal.name}".`,
          browser: `uBill brand ${refusal.brandId} is named "${refusal.providerName}", not "${refusal.name}".`,
        };
      if (refusal.brandId !== null)
        return {
          terminal: `The provider has no brand with id ${refusal.brandId}.`,
          browser: `uBill has no brand with id ${refusal.brandId}.`,
        };
      return {
        terminal: `The provider has no brand named "${refusal.name}".`,
        browser: `uBill has no brand named "${refusal.name}": register it with uBill first.`,
      };
    case "brand_not_approved":
      return {
        terminal: `Brand "${refusal.providerName}" (id ${refusal.brandId}) is not approved at the provider yet.`,
        browser: `uBill has not approved brand "${refusal.providerName}" (id ${refusal.brandId}) yet.`,
      };
    case "brand_check_failed":
      return {
        terminal: `The provider's brand list could not be read (${refusal.reason}); nothing changed.`,
        browser: "uBill's brand list could not be read; nothing changed. Try again in a moment.",
      };
    case "sender_request_pending":
      return same(
        `A request for "${refusal.request.name}" is already waiting for the operator: one at a time.`,
      );
    case "sender_already_set":
      return same(`This project already sends as ${refusal.sender}.`);
    case "sender_request_not_found":
      return same("No such sender request.");
    case "sender_request_decided":
      return same(`That request was already ${refusal.status}.`);
  }
}
