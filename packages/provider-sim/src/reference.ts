// The simulator's provider reference: opaque-looking, self-checking, and
// carrying the one fact the status check needs (the planned final outcome), so
// any instance can read a reference another instance issued. It is derived
// from our message id and the submission time only, never from the recipient.

export type PlannedOutcome = "delivered" | "undeliverable";

const PLANNED_OUTCOMES: readonly PlannedOutcome[] = ["delivered", "undeliverable"];
const REFERENCE_PATTERN = /^sim_([0-9a-f]{16})([0-9a-f]{4})$/;

/** 32-bit FNV-1a over the UTF-16 code units of `text`, starting from `seed`. */
function fnv1a(text: string, seed: number): number {
  let hash = seed >>> 0;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

const hex = (value: number, width: number): string => value.toString(16).padStart(width, "0").slice(-width);

/** The check tag of a body; the planned outcome is added to it, so the two outcomes never share a tag. */
const baseTag = (body: string): number => fnv1a(body, 0x9e3779b9) & 0xffff;

export function encodeReference(options: {
  messageId: string;
  submittedAtMs: number;
  planned: PlannedOutcome;
}): string {
  const seedText = `${options.messageId}|${options.submittedAtMs}`;
  const body = hex(fnv1a(seedText, 0x811c9dc5), 8) + hex(fnv1a(seedText, 0x050c5d1f), 8);
  const tag = (baseTag(body) + PLANNED_OUTCOMES.indexOf(options.planned)) & 0xffff;
  return `sim_${body}${hex(tag, 4)}`;
}

/** The planned outcome a reference carries, or null when it is not one the simulator issued. */
export function decodeReference(reference: string): PlannedOutcome | null {
  const match = REFERENCE_PATTERN.exec(reference);
  const body = match?.[1];
  const tag = match?.[2];
  if (body === undefined || tag === undefined) return null;
  const offset = (Number.parseInt(tag, 16) - baseTag(body)) & 0xffff;
  return PLANNED_OUTCOMES[offset] ?? null;
}
