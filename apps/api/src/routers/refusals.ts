// How a procedure answers an account holder's or operator's refusal: a value
// (`{ ok: false, code, message }`), worded once in contract/refusals.ts in the
// caller's register (the dashboard's browser, the operator tool's terminal).
import { type ActionRefusal, type Register, refusalText } from "../contract/refusals.ts";

export type DashboardActionRefusal = ActionRefusal;

/** The sentence a refusal is shown as (the dashboard's wording unless a register is given). */
export function refusalMessage(refusal: ActionRefusal, register: Register = "browser"): string {
  return refusalText(refusal, register);
}

/** A refusal as a procedure returns it: the code, and the sentence in the caller's register. */
export function refused(
  refusal: ActionRefusal,
  register: Register = "browser",
): { ok: false; code: string; message: string } {
  return { ok: false, code: refusal.code, message: refusalText(refusal, register) };
}
