import { TEMPLATE_IDS } from "@sms/templates";
import { z } from "zod";
import { KEY_MODES, MESSAGE_STATUSES } from "../vocabulary.ts";
import { ZCursor } from "./cursor.types.ts";
import {
  ZDay,
  ZLedgerEntry,
  ZMessageDetail,
  ZMessageEvent,
  ZMessageRow,
  ZProjectId,
} from "./records.types.ts";

export const ZListMessagesRequest = z.strictObject({
  project_id: ZProjectId,
  status: z.enum(MESSAGE_STATUSES).optional(),
  mode: z.enum(KEY_MODES).optional(),
  template: z.enum(TEMPLATE_IDS).optional(),
  /** Created on or after this day (UTC). */
  from: ZDay.optional(),
  /** Created on or before this day (UTC). */
  to: ZDay.optional(),
  cursor: ZCursor,
});
export const ZListMessagesResponse = z.object({
  messages: z.array(ZMessageRow),
  next: z.string().nullable(),
});

export const ZGetMessageRequest = z.strictObject({
  project_id: ZProjectId,
  message_id: z.string().max(40),
});
export const ZGetMessageResponse = z.object({
  message: ZMessageDetail,
  timeline: z.array(ZMessageEvent),
  ledger: z.array(ZLedgerEntry),
});
