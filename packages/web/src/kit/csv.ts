// CSV downloads (RFC 4180): a header row, then rows read page by page through
// a keyset cursor and written as they arrive, so an export of any size never
// sits in memory whole. A cell that a spreadsheet would run as a formula
// (starting with =, +, -, @, a tab or CR) is prefixed with ' (OWASP's CSV
// injection advice): "+1+cmd|' /C calc'!A0" and "-2+3" are formulas too, so
// a leading + or - passes unprefixed only when the whole cell is a plain
// number ("-5", "+12.5") or a masked Georgian number ("+9955••••••56"), which
// no spreadsheet runs.
import { pageHeaders } from "./http.ts";

export type CsvCell = string | number | boolean | null;

/** A plain number or a masked number: the only cells starting with + or - that pass as they are. */
const INERT = /^(?:[+-]?\d+(?:\.\d+)?|\+9955[•\d]{8})$/u;

export function csvCell(value: CsvCell): string {
  if (value === null) return "";
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text) && !INERT.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export const csvRow = (cells: CsvCell[]) => `${cells.map(csvCell).join(",")}\r\n`;

/**
 * A streamed CSV download. `first` is the first page, read before answering
 * (so a refusal is still a page); `next(cursor)` reads each following page.
 */
export function csvResponse<T>(options: {
  filename: string;
  header: string[];
  first: { rows: T[]; next: string | null };
  next(cursor: string): Promise<{ rows: T[]; next: string | null }>;
  cells(row: T): CsvCell[];
}): Response {
  const encoder = new TextEncoder();
  let page: { rows: T[]; next: string | null } | null = options.first;
  let headerSent = false;
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!headerSent) {
        headerSent = true;
        controller.enqueue(encoder.encode(csvRow(options.header)));
      }
      if (page === null) {
        controller.close();
        return;
      }
      const current: { rows: T[]; next: string | null } = page;
      if (current.rows.length > 0)
        controller.enqueue(encoder.encode(current.rows.map((row) => csvRow(options.cells(row))).join("")));
      page = current.next === null ? null : await options.next(current.next);
    },
  });
  const headers = pageHeaders("dashboard");
  return new Response(stream, {
    headers: {
      ...headers,
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": `attachment; filename="${options.filename}"`,
    },
  });
}
