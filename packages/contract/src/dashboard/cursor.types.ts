// The dashboard's page cursors on the wire: an opaque base64url string (its
// encoding is apps/api's, routers/dashboard/cursor.ts).
import { z } from "zod";

/** An optional `cursor` input field. */
export const ZCursor = z
  .string()
  .max(200)
  .regex(/^[A-Za-z0-9_-]+$/)
  .optional()
  .meta({ description: "`next` of the previous page; omit for the first page." });
