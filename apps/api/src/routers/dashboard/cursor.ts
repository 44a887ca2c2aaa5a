// The dashboard's page cursors on the wire: the (created_at, id) position of
// the last row of the previous page, as one opaque base64url string.
import { Buffer } from "node:buffer";
import { TRPCError } from "@trpc/server";

export type Position = { createdAt: Date; id: string };

export function encodeCursor(position: Position | null): string | null {
  if (!position) return null;
  return Buffer.from(JSON.stringify([position.createdAt.toISOString(), position.id])).toString("base64url");
}

/** The position a cursor names; a malformed one is a bad request. */
export function decodeCursor(cursor: string | undefined): Position | null {
  if (cursor === undefined) return null;
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown[];
    const createdAt = new Date(String(at));
    // A time the database can compare (a JavaScript date may lie far outside its range).
    const year = createdAt.getUTCFullYear();
    if (typeof id !== "string" || !/^[a-z]{2,4}_[0-9a-z]{26}$/.test(id) || !(year >= 1970 && year <= 9999))
      throw new Error("bad cursor");
    return { createdAt, id };
  } catch {
    throw new TRPCError({ code: "BAD_REQUEST", message: "The cursor is malformed." });
  }
}
