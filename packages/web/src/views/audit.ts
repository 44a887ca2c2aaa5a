// The audit log in words: each action as a sentence built from its details,
// every value escaped by the `html` tag (a reason, a name or a reference is
// whatever an operator or an account holder typed). An action this file does
// not know is shown by its name and its details' names, never raw JSON.
import type { AuditRecord } from "@sms/contract";
import { type Child, type Html, html } from "../kit/html.ts";
import { number } from "./layout.ts";

const text = (value: unknown): string | null =>
  typeof value === "string" && value !== "" ? value : typeof value === "number" ? String(value) : null;
const count = (value: unknown): string => (typeof value === "number" ? number(value) : "?");
const id = (value: unknown): Child => {
  const shown = text(value);
  return shown ? html`<code>${shown}</code>` : "?";
};
const nothingChanged = (details: Record<string, unknown>, already: string): Child =>
  details.changed === false || details.already_granted === true || details.already_revoked === true
    ? html` <span class="muted">(${already}; nothing changed)</span>`
    : "";
const withReason = (details: Record<string, unknown>): Child => {
  const reason = text(details.reason);
  return reason ? html`: “${reason}”` : "";
};
const limit = (value: unknown, none: string): Child =>
  typeof value === "number" ? html`${number(value)} credits` : none;

/** What happened, in words (the actor and the project are shown beside it). */
export function auditSentence(entry: AuditRecord): Html {
  const d = entry.details;
  switch (entry.action) {
    case "api_key.created":
      return html`Created a ${text(d.mode) ?? ""} key ${id(d.key_id)}${text(d.name) ? html` named “${text(d.name)}”` : ""}`;
    case "api_key.revoked":
      return html`Revoked the ${text(d.mode) ?? ""} key ${id(d.key_id)}${nothingChanged(d, "already revoked")}`;
    case "test_key.rolled": {
      const revoked = Array.isArray(d.revoked_key_ids) ? d.revoked_key_ids.length : 0;
      return html`Rolled the test key: new key ${id(d.key_id)}, ${number(revoked)} old ${revoked === 1 ? "key" : "keys"} revoked`;
    }
    case "project.suspended":
      return html`Suspended the project${withReason(d)}${nothingChanged(d, "already suspended")}`;
    case "project.reinstated":
      return html`Reinstated the project${withReason(d)}${nothingChanged(d, "already active")}`;
    case "credits.granted":
      return html`Granted ${count(d.amount)} paid credits${text(d.reference) ? html` (reference “${text(d.reference)}”)` : ""}${typeof d.balance === "number" ? html`; balance ${number(d.balance)}` : ""}${nothingChanged(d, "reference already granted")}`;
    case "sender.set":
      return html`Set the sender name to “${text(d.sender) ?? "?"}” (uBill brand ${text(d.brand_id) ?? "?"}${d.validated === false ? ", not checked against uBill" : ""})${nothingChanged(d, "already set")}`;
    case "sender.cleared":
      return html`Cleared the sender name: back to the shared default${nothingChanged(d, "already the default")}`;
    case "sender.requested":
      return html`Asked for the sender name “${text(d.name) ?? "?"}”`;
    case "sender.request_approved":
      return html`Approved the sender name “${text(d.sender) ?? "?"}” (uBill brand ${text(d.brand_id) ?? "?"})`;
    case "sender.request_refused":
      return html`Refused the sender name “${text(d.name) ?? "?"}”${withReason(d)}`;
    case "project.spending_set": {
      const cap = limit(d.daily_credit_cap, "none");
      return "low_balance_threshold" in d
        ? html`Set the spending limits: daily credit cap ${cap}, low-balance warning ${limit(d.low_balance_threshold, "off")}`
        : html`Set the daily credit cap to ${cap}`;
    }
    case "project.named":
      return text(d.name) ? html`Named the project “${text(d.name)}”` : html`Removed the project's name`;
    case "message_keys.rotated":
      return html`Re-encrypted ${count(d.rotated)} messages under key ${id(d.current_key_id)}${typeof d.failed === "number" && d.failed > 0 ? html`; ${number(d.failed)} could not be read` : ""}`;
    case "project.viewed":
      return html`Opened the project (written by earlier versions)`;
    default: {
      const names = Object.keys(d);
      return html`<code>${entry.action}</code>${names.length > 0 ? html` <span class="muted">(${names.join(", ")})</span>` : ""}`;
    }
  }
}
