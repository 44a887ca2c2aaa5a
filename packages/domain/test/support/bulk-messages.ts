// Many delivered test messages of one project in one statement, for tests that
// need a table of some size (plans, partitions): ids `${idPrefix}1` to
// `${idPrefix}${count}`, the g-th created at `at` + g × `stepMs` (0: all at
// `at`). No timeline events, no text: only the columns the statements read.
import type { Sql } from "@sms/db";

export async function insertMessages(
  db: Pick<Sql, "query">,
  options: { idPrefix: string; projectId: string; count: number; at: Date; stepMs?: number },
): Promise<void> {
  await db.query(
    `INSERT INTO messages (id, project_id, mode, recipient_masked, template, locale, sender, segments, encoding,
                           provider, status, created_at, updated_at)
     SELECT $1 || g, $2, 'test', '+9955••••••12', 'verification_code', 'en', 'SMSGE', 1, 'gsm7', 'simulator',
            'delivered', t, t
     FROM (SELECT g, CAST($3 AS timestamptz) + g * CAST($4 AS integer) * interval '1 millisecond' AS t
           FROM generate_series(1, CAST($5 AS integer)) AS g) s`,
    [options.idPrefix, options.projectId, options.at, options.stepMs ?? 0, options.count],
  );
}
