// The raw baseline the service is measured against (bench/messages.ts
// --baseline): the least a send, a replay and a read can cost on this
// machine, written directly on Deno.serve and pg with the service's schema.
//
//   send    key lookup, then one transaction inserting the idempotency record
//           and the message (one commit)
//   replay  key lookup, then one query of the idempotency record
//   read    key lookup, then one query of the message as the service reads it (`project_id || ''`:
//           the monthly partitions' primary key, statistics or not; `created_at` within a day of
//           the id's time, as constants: one month's partition, not every month's)
//
// No validation, no rate limit, no encryption, no logging, no framework: a
// ceiling, not an alternative. Started by bench/messages.ts as its own
// process: deno run … bench/raw-baseline.ts <port> <databaseUrl>
//
// With MINIMAL=1 it is the minimal baseline (issue 26): a send does not read
// the idempotency record first, so it is exactly a key lookup and one
// transaction with two inserts and one commit.
import { idTimestamp } from "@sms/crypto";
import pg from "pg";

const [portText, databaseUrl] = Deno.args;
if (!portText || !databaseUrl) throw new Error("usage: raw-baseline.ts <port> <databaseUrl>");

const MINIMAL = Deno.env.get("MINIMAL") === "1";
// Connections are kept however long the pool sits idle, as the service's are (packages/db's
// idleTimeoutMillis: 0): with pg's default of 10 s, a baseline that waited out two other servers' rounds
// opened its whole pool again at the start of its own, inside the measured window.
const pool = new pg.Pool({
  connectionString: databaseUrl,
  max: Number(Deno.env.get("POOL") ?? 20),
  idleTimeoutMillis: 0,
});
const encoder = new TextEncoder();

async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
  let out = "";
  for (const byte of digest) out += byte.toString(16).padStart(2, "0");
  return out;
}

let counter = 0;
const newId = (prefix: string) =>
  `${prefix}_raw${Date.now().toString(36)}${(++counter).toString(36).padStart(10, "0")}`;

async function keyOf(request: Request): Promise<{ projectId: string; mode: string; keyId: string } | null> {
  const key = request.headers.get("authorization")?.slice("Bearer ".length) ?? "";
  const { rows } = await pool.query({
    name: "raw_key",
    text: "SELECT id, project_id, mode::text AS mode FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL",
    values: [await sha256Hex(key)],
  });
  const row = rows[0];
  return row ? { projectId: row.project_id, mode: row.mode, keyId: row.id } : null;
}

/** `created_at` within the months within a day of `time`, as constants (the service's near-id-time.ts). */
function monthsAround(time: number): { key: string; bound: string } {
  const start = (at: Date, add: number) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + add, 1));
  const from = start(new Date(time - 86_400_000), 0).toISOString();
  const to = start(new Date(time + 86_400_000), 1).toISOString();
  return {
    key: `${from.slice(0, 7)}_${to.slice(0, 7)}`,
    bound: `created_at >= TIMESTAMPTZ '${from}' AND created_at < TIMESTAMPTZ '${to}'`,
  };
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });

Deno.serve(
  { port: Number(portText), hostname: "127.0.0.1", onListen: () => console.log("listening") },
  async (request) => {
    const url = new URL(request.url);
    const key = await keyOf(request);
    if (!key) return json(401, { error: { code: "invalid_api_key" } });
    if (request.method === "GET" && url.pathname.startsWith("/v1/messages/")) {
      const id = url.pathname.slice("/v1/messages/".length);
      const months = monthsAround(idTimestamp(id) ?? 0);
      const { rows } = await pool.query({
        name: `raw_read_${months.key}`,
        text: `SELECT id, recipient_masked, status::text AS status, segments, error_code, error_message, created_at, updated_at FROM messages WHERE id = $1 AND project_id || '' = $2 AND ${months.bound}`,
        values: [id, key.projectId],
      });
      return rows[0] ? json(200, rows[0]) : json(404, { error: { code: "message_not_found" } });
    }
    if (request.method === "POST" && url.pathname === "/v1/messages") {
      const idempotencyKey = request.headers.get("idempotency-key") ?? "";
      const body = (await request.json()) as { to: string; template: string; locale?: string };
      if (!MINIMAL) {
        const prior = await pool.query({
          name: "raw_prior",
          text: 'SELECT response_body FROM idempotency_records WHERE project_id = $1 AND mode = CAST($2 AS "KeyMode") AND key = $3',
          values: [key.projectId, key.mode, idempotencyKey],
        });
        if (prior.rows[0]) return json(200, prior.rows[0].response_body);
      }
      const now = new Date();
      const id = newId("msg");
      const message = {
        id,
        object: "message",
        to: `+9955••••••${body.to.slice(-2)}`,
        status: "submitted",
        segments: 1,
        error: null,
        created_at: now.toISOString().replace(/\.\d{3}Z$/, "Z"),
        updated_at: now.toISOString().replace(/\.\d{3}Z$/, "Z"),
      };
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        await client.query({
          name: "raw_idem",
          text: `INSERT INTO idempotency_records (id, project_id, mode, key, fingerprint, message_id, response_body, expires_at, created_at)
               VALUES ($1, $2, CAST($3 AS "KeyMode"), $4, $5, $6, CAST($7 AS jsonb), $8, $9)`,
          values: [
            newId("idem"),
            key.projectId,
            key.mode,
            idempotencyKey,
            "raw",
            id,
            JSON.stringify(message),
            new Date(now.getTime() + 86_400_000),
            now,
          ],
        });
        await client.query({
          name: "raw_msg",
          text: `INSERT INTO messages (id, project_id, api_key_id, mode, recipient_masked, template, locale, sender, segments, encoding, status, provider, provider_ref, submitted_at, next_check_at, created_at, updated_at)
               VALUES ($1, $2, $3, CAST($4 AS "KeyMode"), $5, $6, $7, 'SMSGE', 1, 'gsm7', 'submitted', 'simulator', 'raw', $8, $8, $8, $8)`,
          values: [
            id,
            key.projectId,
            key.keyId,
            key.mode,
            message.to,
            body.template,
            body.locale ?? "ka",
            now,
          ],
        });
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      } finally {
        client.release();
      }
      return json(201, message);
    }
    return json(404, { error: { code: "route_not_found" } });
  },
);
