// Benchmark of the dashboard's pages on a big project: how long the real
// Deno server (NODE_ENV=production, PostgreSQL) takes to render a project's
// overview (usage charts over 30 days, the balance checked against the whole
// ledger), its message log (first page, a deep page, filtered), one message
// with its timeline, and the credits page, when the project has 100,000
// messages (and another project as many, so the indexes have to choose).
// On demand only, never in CI:
//
//   node scripts/bootstrap.mjs bench dashboard [--messages=100000] [--runs=30] [--explain]
//
// It creates a fresh PostgreSQL database (TEST_POSTGRES_URL, default
// postgresql://postgres@127.0.0.1:5432/postgres), seeds it with SQL
// (generate_series: messages of both modes, every status, all three
// templates, spread over the last 30 days, with their timeline events and
// ledger entries), opens a dashboard session the way sign-in does (a
// dashboard_sessions row and the sealed cookie), requests each page `--runs`
// times after 5 warm-up requests, and prints one JSON line per page with the
// latency seen by the client (p50, p90, max) and the page size. --explain also
// prints PostgreSQL's plan of the three heaviest statements.
import { createCookieSealer } from "@sms/crypto";
import { createPostgresTestDatabase } from "@sms/db/testing";
import pg from "pg";
import { API_ENV, type ServerProcess, benchArgs, startApi } from "./support.ts";

const args = benchArgs();
const MESSAGES = Number(args.messages ?? 100_000);
const RUNS = Number(args.runs ?? 30);
const EXPLAIN = args.explain === "true";

/** A fixed id of the shape newId makes: prefix, "_", 26 characters of lowercase Crockford base32. */
const fixedId = (prefix: string, tag: string) => `${prefix}_0bench${tag.padStart(20, "0")}`;
const PROJECT = fixedId("prj", "1");
const OTHER = fixedId("prj", "2");
const ACCOUNT = fixedId("acc", "1");

type Client = { query(text: string, params?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }> };

/** One project's messages, timeline events and ledger entries, all in SQL. */
async function seedProject(client: Client, projectId: string, keyTag: string, count: number): Promise<void> {
  const testKey = fixedId("key", `${keyTag}1`);
  const liveKey = fixedId("key", `${keyTag}2`);
  await client.query(
    `INSERT INTO api_keys (id, project_id, mode, key_hash, prefix, created_at, last_used_at) VALUES
       ($1, $3, 'test', md5($1) || md5($3), 'sk_test_' || substr(md5($1), 1, 4), now() - interval '31 days', now()),
       ($2, $3, 'live', md5($2) || md5($3), 'sk_live_' || substr(md5($2), 1, 4), now() - interval '31 days', now())`,
    [testKey, liveKey, projectId],
  );
  // Statuses by i % 100: 84 delivered, 5 submitted, 4 undeliverable, 3 failed, 2 unknown, 2 queued.
  // One message every 30 days / count, newest first; every fourth is live; one in seven has 2 segments.
  await client.query(
    `INSERT INTO messages (id, project_id, api_key_id, mode, recipient_masked, template, locale, sender, segments,
                           encoding, status, error_code, error_message, provider, credits_reserved, created_at,
                           updated_at, submitted_at)
     SELECT m.id, $1, CASE WHEN m.live THEN $3 ELSE $2 END, CASE WHEN m.live THEN 'live' ELSE 'test' END::"KeyMode",
            '+9955••••••' || lpad((m.i % 100)::text, 2, '0'), m.template, 'en', 'SMSGE', m.segments, 'gsm7',
            m.status::"MessageStatus",
            CASE m.status WHEN 'undeliverable' THEN 'invalid_recipient' WHEN 'failed' THEN 'provider_rejected'
                          WHEN 'unknown' THEN 'provider_unavailable' END,
            NULL, CASE WHEN m.live THEN 'ubill' ELSE 'simulator' END, CASE WHEN m.live THEN m.segments ELSE 0 END,
            m.at, m.at + interval '5 seconds',
            CASE WHEN m.status NOT IN ('queued', 'failed') THEN m.at + interval '1 second' END
     FROM (
       SELECT i, 'msg_0' || $4 || lpad(i::text, 24, '0') AS id, i % 4 = 0 AS live,
              (ARRAY['verification_code', 'login_code', 'password_reset_code'])[1 + i % 3] AS template,
              1 + (i % 7 = 0)::int AS segments,
              CASE WHEN i % 100 < 84 THEN 'delivered' WHEN i % 100 < 89 THEN 'submitted'
                   WHEN i % 100 < 93 THEN 'undeliverable' WHEN i % 100 < 96 THEN 'failed'
                   WHEN i % 100 < 98 THEN 'unknown' ELSE 'queued' END AS status,
              now() - (i * (interval '30 days' / $5)) AS at
       FROM generate_series(1, $5) AS i
     ) m`,
    [projectId, testKey, liveKey, keyTag, count],
  );
  await client.query(
    `INSERT INTO message_events (message_id, status, error_code, created_at, message_created_at)
     SELECT id, CAST('queued' AS "MessageStatus"), NULL, created_at, created_at FROM messages WHERE project_id = $1
     UNION ALL SELECT id, CAST('submitted' AS "MessageStatus"), NULL, submitted_at, created_at FROM messages WHERE project_id = $1 AND submitted_at IS NOT NULL
     UNION ALL SELECT id, status, error_code, updated_at, created_at FROM messages
               WHERE project_id = $1 AND status NOT IN ('queued', 'submitted')`,
    [projectId],
  );
  await client.query(
    `INSERT INTO credit_ledger (id, project_id, kind, amount, message_id, note, created_at)
     SELECT 'cre_0r' || substr(id, 6, 1) || substr(id, 8), project_id, CAST('reservation' AS "CreditEntryKind"), -credits_reserved, id, NULL, created_at
     FROM messages WHERE project_id = $1 AND mode = 'live'
     UNION ALL
     SELECT 'cre_0f' || substr(id, 6, 1) || substr(id, 8), project_id, CAST('refund' AS "CreditEntryKind"), credits_reserved, id, 'rejected', updated_at
     FROM messages WHERE project_id = $1 AND mode = 'live' AND status = 'failed'`,
    [projectId],
  );
  await client.query(
    `INSERT INTO credit_ledger (id, project_id, kind, amount, note, created_at)
     VALUES ('cre_0g' || substr($1, 7), $1, 'grant_paid', 1000000, 'reference:BENCH', now() - interval '31 days')`,
    [projectId],
  );
  await client.query(
    `UPDATE projects SET credit_balance = (SELECT sum(amount) FROM credit_ledger WHERE project_id = $1),
                         has_paid_credits = true WHERE id = $1`,
    [projectId],
  );
}

function startServer(databaseUrl: string): Promise<ServerProcess> {
  return startApi({
    env: {
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: "info",
      // Page latency only: the status check and the sweeps would touch the seeded rows.
      JOBS_ENABLED: "false",
    },
  });
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;

async function timePage(baseUrl: string, cookie: string, name: string, path: string) {
  const request = async () => {
    const started = performance.now();
    const response = await fetch(`${baseUrl}${path}`, { headers: { Cookie: cookie } });
    const body = await response.text();
    const ms = performance.now() - started;
    if (response.status !== 200) throw new Error(`${name}: ${path} answered ${response.status}`);
    return { ms, bytes: body.length, body };
  };
  for (let i = 0; i < 5; i++) await request();
  const times: number[] = [];
  let last = { ms: 0, bytes: 0, body: "" };
  for (let i = 0; i < RUNS; i++) {
    last = await request();
    times.push(last.ms);
  }
  times.sort((a, b) => a - b);
  const round = (ms: number) => Math.round(ms * 10) / 10;
  console.log(
    JSON.stringify({
      page: name,
      path: path.replace(/cursor=[^&]+/, "cursor=…"),
      runs: RUNS,
      p50_ms: round(percentile(times, 50)),
      p90_ms: round(percentile(times, 90)),
      max_ms: round(times[times.length - 1] ?? 0),
      html_kb: Math.round(last.bytes / 102.4) / 10,
    }),
  );
  return last.body;
}

const database = await createPostgresTestDatabase();
let server: ServerProcess | undefined;
const client = new pg.Client({ connectionString: database.databaseUrl });
try {
  // The server migrates the fresh database on start.
  server = await startServer(database.databaseUrl);
  await client.connect();
  const seeded = performance.now();
  await client.query(`INSERT INTO accounts (id, email, name) VALUES ($1, 'bench@example.com', 'Bench')`, [
    ACCOUNT,
  ]);
  await client.query(
    `INSERT INTO account_identities (id, account_id, provider, subject) VALUES ($2, $1, 'dev', 'bench')`,
    [ACCOUNT, fixedId("aid", "1")],
  );
  await client.query(
    `INSERT INTO projects (id, account_id, claimed_at, created_at, updated_at) VALUES
       ($1, $3, now() - interval '31 days', now() - interval '31 days', now()),
       ($2, NULL, NULL, now() - interval '31 days', now())`,
    [PROJECT, OTHER, ACCOUNT],
  );
  await seedProject(client, PROJECT, "a", MESSAGES);
  await seedProject(client, OTHER, "b", MESSAGES);
  await client.query("ANALYZE");
  const counts = await client.query(
    `SELECT (SELECT count(*) FROM messages WHERE project_id = $1)::int AS messages,
            (SELECT count(*) FROM message_events e JOIN messages m ON m.id = e.message_id WHERE m.project_id = $1)::int AS events,
            (SELECT count(*) FROM credit_ledger WHERE project_id = $1)::int AS ledger,
            (SELECT count(*) FROM messages)::int AS all_messages`,
    [PROJECT],
  );
  console.error(
    `bench: seeded ${JSON.stringify(counts.rows[0])} in ${Math.round(performance.now() - seeded)} ms; ${RUNS} runs per page, ${navigator.hardwareConcurrency} CPUs`,
  );

  // A session, as sign-in makes one: the row with the token's hash, the sealed cookie.
  const token = crypto.getRandomValues(new Uint8Array(32));
  const tokenText = btoa(String.fromCharCode(...token))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
  const hash = Array.from(
    new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(tokenText))),
  )
    .map((byte) => byte.toString(16).padStart(2, "0"))
    .join("");
  await client.query(
    `INSERT INTO dashboard_sessions (id, token_hash, provider, subject, name, last_seen_at, idle_expires_at, expires_at)
     VALUES ($2, $1, 'dev', 'bench', 'Bench', now(), now() + interval '1 day', now() + interval '1 day')`,
    [hash, fixedId("dss", "1")],
  );
  const sealer = await createCookieSealer(API_ENV.CLAIM_COOKIE_SECRET);
  const cookie = `sms_dashboard=${await sealer.seal("sms_dashboard", { t: tokenText }, 86_400_000, new Date())}`;

  const base = `/dashboard/projects/${PROJECT}`;
  await timePage(server.baseUrl, cookie, "projects", "/dashboard/projects");
  await timePage(server.baseUrl, cookie, "overview (charts, 30 days)", base);
  await timePage(server.baseUrl, cookie, "overview, live only", `${base}?mode=live`);
  const first = await timePage(server.baseUrl, cookie, "messages, first page", `${base}/messages`);
  // A page 40 pages (2,000 messages) deep, by following the cursors.
  let next = /href="([^"]+)" rel="next"/.exec(first)?.[1]?.replaceAll("&amp;", "&");
  for (let page = 0; page < 39 && next; page++) {
    const html = await (await fetch(`${server.baseUrl}${next}`, { headers: { Cookie: cookie } })).text();
    next = /href="([^"]+)" rel="next"/.exec(html)?.[1]?.replaceAll("&amp;", "&");
  }
  if (next) await timePage(server.baseUrl, cookie, "messages, page 41", next);
  await timePage(server.baseUrl, cookie, "messages, failed only (3 %)", `${base}/messages?status=failed`);
  await timePage(
    server.baseUrl,
    cookie,
    "messages, queued, live, login_code",
    `${base}/messages?status=queued&mode=live&template=login_code`,
  );
  const day = new Date(Date.now() - 20 * 86_400_000).toISOString().slice(0, 10);
  await timePage(
    server.baseUrl,
    cookie,
    "messages, one day 20 days ago",
    `${base}/messages?from=${day}&to=${day}`,
  );
  const messageId = /href="[^"]+\/messages\/(msg_[0-9a-z]+)"/.exec(first)?.[1];
  if (messageId)
    await timePage(server.baseUrl, cookie, "message with timeline", `${base}/messages/${messageId}`);
  await timePage(server.baseUrl, cookie, "credits (ledger, balance check)", `${base}/credits`);
  await timePage(server.baseUrl, cookie, "keys", `${base}/keys`);

  if (EXPLAIN) {
    const explain = async (name: string, sql: string, params: unknown[]) => {
      const plan = await client.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${sql}`, params);
      console.error(`\n-- ${name}\n${plan.rows.map((row) => row["QUERY PLAN"]).join("\n")}`);
    };
    await explain(
      "message log, first page",
      `SELECT id FROM messages WHERE project_id = $1 ORDER BY created_at DESC, id DESC LIMIT 51`,
      [PROJECT],
    );
    await explain(
      "message log, failed only",
      `SELECT id FROM messages WHERE project_id = $1 AND status = 'failed' ORDER BY created_at DESC, id DESC LIMIT 51`,
      [PROJECT],
    );
    await explain(
      "usage per day, 30 days",
      `SELECT floor(extract(epoch FROM created_at) / 86400)::int, mode, status, count(*), sum(segments)
       FROM messages WHERE project_id = $1 AND created_at >= now() - interval '30 days' GROUP BY 1, 2, 3`,
      [PROJECT],
    );
  }
} finally {
  await client.end().catch(() => undefined);
  await server?.stop();
  await database.drop();
}
