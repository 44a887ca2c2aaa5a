// GET /v1/messages/{message_id} (spec 4.3). Absent ids, malformed ids and
// other projects' ids are indistinguishable: the same single indexed query
// runs for all of them, and all three answer null.
import { isId } from "@sms/crypto";
import type { PrismaClient } from "@sms/db";
import {
  fromResourceRow,
  MESSAGE_RESOURCE_COLUMNS,
  type MessageResource,
  type MessageResourceRow,
  toMessageResource,
} from "./message-resource.ts";
import { prismaSql, type Sql } from "./message-store.ts";

const READ_SQL = `SELECT ${MESSAGE_RESOURCE_COLUMNS} FROM messages WHERE id = $1 AND project_id = $2`;

export async function getMessage(options: {
  prisma: PrismaClient;
  /** The database's pooled query function (no Prisma overhead); Prisma's raw query when absent. */
  sql?: Sql;
  projectId: string;
  messageId: string;
}): Promise<MessageResource | null> {
  // A malformed id still costs one lookup, so timing does not tell it apart.
  const id = isId("msg", options.messageId) ? options.messageId : "msg_invalid";
  const sql = options.sql ?? prismaSql(options.prisma);
  const [row] = await sql.query<MessageResourceRow>(READ_SQL, [id, options.projectId]);
  if (!row) return null;
  return toMessageResource(fromResourceRow(row));
}
