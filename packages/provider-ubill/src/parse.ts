// Tolerant readers for uBill's JSON answers. uBill's documentation and SDKs
// disagree on some types (ids and counts as numbers or strings), so every
// reader accepts both and answers null for anything it cannot make sense of.

type JsonObject = Record<string, unknown>;

function asObject(value: unknown): JsonObject | null {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonObject) : null;
}

/** An integer given as a JSON number or a numeric string. */
function readInteger(value: unknown): number | null {
  if (typeof value === "number") return Number.isSafeInteger(value) ? value : null;
  if (typeof value === "string" && /^\s*-?\d{1,15}\s*$/.test(value)) return Number.parseInt(value, 10);
  return null;
}

/** A finite number given as a JSON number or a numeric string. */
function readNumber(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "string" && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) return Number.parseFloat(value);
  return null;
}

/** The top-level `statusID` of an answer (0 means success). */
export function readStatusId(body: unknown): number | null {
  return readInteger(asObject(body)?.statusID);
}

const SMS_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Whether a string can be a uBill message id (and so go into a report URL). */
export function isSmsId(value: string): boolean {
  return SMS_ID_PATTERN.test(value);
}

/** The `smsID` of a send answer, as a string; uBill sends it as a string, some SDKs type it as a number. */
export function readSmsId(body: unknown): string | null {
  const raw = asObject(body)?.smsID;
  const text = typeof raw === "number" && Number.isSafeInteger(raw) ? String(raw) : raw;
  return typeof text === "string" && isSmsId(text) ? text : null;
}

export type ReportReading =
  | { kind: "status"; status: string }
  /** uBill has no per-number line yet. */
  | { kind: "not_yet" }
  | { kind: "unreadable" };

/**
 * The per-number status string of a report answer for `number` (digits only,
 * "995…"). A line for another number is not trusted; a single line without
 * any number is taken to be ours (one number per submission).
 */
export function readReportStatus(body: unknown, number: string): ReportReading {
  const result = asObject(body)?.result;
  if (!Array.isArray(result)) return { kind: "unreadable" };
  if (result.length === 0) return { kind: "not_yet" };
  const lines = result.map(asObject).filter((entry) => entry !== null);
  const numberOf = (entry: JsonObject): unknown =>
    typeof entry.number === "number" ? String(entry.number) : entry.number;
  const line =
    lines.find((entry) => {
      const lineNumber = numberOf(entry);
      return typeof lineNumber === "string" && lineNumber.trim().replace(/^\+/, "") === number;
    }) ??
    (lines.length === 1 && lines[0] !== undefined && numberOf(lines[0]) === undefined ? lines[0] : undefined);
  if (line === undefined) return { kind: "unreadable" };
  const status = typeof line.statusID === "number" ? String(line.statusID) : line.statusID;
  return typeof status === "string" ? { kind: "status", status: status.trim() } : { kind: "unreadable" };
}

export type UbillBrand = {
  id: number;
  name: string;
  /** Whether uBill lets messages go out under this brand. */
  approved: boolean;
};

function readApproved(entry: JsonObject): boolean {
  for (const field of ["authorized", "approved", "status"]) {
    const value = entry[field];
    if (value === true || value === 1) return true;
    if (typeof value === "string" && /^(1|true|approved|authori[sz]ed|active)$/i.test(value.trim()))
      return true;
  }
  return false;
}

/** The brand list of a brandNames answer, or null when the answer has none. */
export function readBrands(body: unknown): UbillBrand[] | null {
  const object = asObject(body);
  const list = object?.brands ?? object?.result ?? object?.brandNames;
  if (!Array.isArray(list)) return null;
  const brands: UbillBrand[] = [];
  for (const item of list) {
    const entry = asObject(item);
    if (entry === null) continue;
    const id = readInteger(entry.id ?? entry.brandID ?? entry.ID);
    const rawName = entry.name ?? entry.brandName ?? entry.title;
    if (id === null || typeof rawName !== "string") continue;
    brands.push({ id, name: rawName, approved: readApproved(entry) });
  }
  return brands;
}

/** The remaining SMS count of a balance answer, or null when the answer has none. */
export function readBalance(body: unknown): number | null {
  const object = asObject(body);
  return readNumber(object?.sms ?? object?.balance ?? object?.result);
}
