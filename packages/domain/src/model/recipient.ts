// A recipient (spec 4.2): a Georgian mobile number, and the only form of it
// that ever leaves the service.

/** Exactly "+9955" and eight ASCII digits; never trimmed or normalised (@sms/contract). */
export { RECIPIENT_PATTERN } from "@sms/contract";

/** "+995512345678" → "+9955••••••78" (spec 2.1). */
export function maskRecipient(to: string): string {
  return `+9955${"\u2022".repeat(6)}${to.slice(-2)}`;
}
