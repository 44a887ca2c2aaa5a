// Slow-body memory (issue 53, G2): the real API (apps/api/src/main.ts, on a
// fresh PostgreSQL database) and its resident memory (VmRSS) before, during
// and after a flood of connections that each send a request's headers and
// then a body that never finishes (one byte every --drip-ms), from many
// loopback addresses (127.0.0.x), so that the default per-address caps hold
// them all: MAX_UNFINISHED_BODIES_PER_PEER (16) × 64 addresses = 1,024. The
// body deadlines are raised for the run (HTTP_BODY_TIMEOUT_SECONDS,
// HTTP_BODY_READ_TIMEOUT_SECONDS, HTTP_BODY_MIN_BYTES_PER_SECOND=0), so that
// every body stays unfinished for the whole --hold. Then the flood closes
// every connection, and RSS is read again 5 s and 35 s later. See
// bench/README.md#slow-body-memory.
//
//   node scripts/bootstrap.mjs bench slow-bodies [--connections=1024] [--hold=20] [--per-address=16] [--drip-ms=5000] [--rounds=1] [--env=A=1,…] [--v8-flags=…]
//
// `--target=listener-unread` and `--target=listener-read` measure the service's
// listener alone (apps/api/src/http/server.ts with the same caps, a handler that
// never answers): one that never touches the body, and one that reads it
// (readBodyText, as the gateway does). They say which part of the cost is the
// connection and which the body being read. Those servers also report V8's
// heap (Deno.memoryUsage) at each reading.
import net from "node:net";
import { createPostgresTestDatabase } from "@sms/db/testing";
import { benchArgs, freePort, rssMb, sleep, startApi, startServerProcess } from "./support.ts";

const args = benchArgs();
const CONNECTIONS = Number(args.connections ?? 1024);
const HOLD_S = Number(args.hold ?? 20);
const PER_ADDRESS = Number(args["per-address"] ?? 16);
const DRIP_MS = Number(args["drip-ms"] ?? 5000);
const ROUNDS = Number(args.rounds ?? 1);
const EXTRA_ENV = Object.fromEntries(
  (args.env ?? "")
    .split(",")
    .filter(Boolean)
    .map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]),
);
const V8_FLAGS = args["v8-flags"];
const TARGET = args.target ?? "api";

if (args.serve) await serveListener(args.serve, Number(args.port));

/** Server mode for --target=listener-*: the service's listener, a handler that never answers. */
async function serveListener(mode: string, listenPort: number): Promise<never> {
  const { serveHttp } = await import("../apps/api/src/http/server.ts");
  const { readBodyText } = await import("../apps/api/src/http/read-body.ts");
  const { createLogger } = await import("../apps/api/src/logger.ts");
  serveHttp({
    name: "bench",
    hostname: "127.0.0.1",
    port: listenPort,
    handler: async (request) => {
      if (new URL(request.url).pathname === "/memory") {
        const { heapUsed, heapTotal, external } = Deno.memoryUsage();
        return Response.json({ heapUsed, heapTotal, external });
      }
      if (new URL(request.url).pathname === "/healthz") return new Response("ok");
      if (mode === "read") await readBodyText(request, 16 * 1024).catch(() => null);
      else await new Promise(() => {});
      return new Response("done");
    },
    maxConnections: 1024,
    maxConnectionsPerPeer: 128,
    maxUnfinishedBodiesPerPeer: 16,
    headersTimeoutMs: 10_000,
    bodyTimeoutMs: 600_000,
    bodyReadTimeoutMs: 600_000,
    bodyMinBytesPerSecond: 0,
    idleTimeoutMs: 60_000,
    logger: createLogger({ level: "silent" }),
  });
  return await new Promise<never>(() => {});
}

const HEAD =
  "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nIdempotency-Key: slow\r\nContent-Length: 4096\r\n\r\n{";

/** One connection that sent its headers and the body's first byte, then a byte every DRIP_MS. */
function slowBody(port: number, localAddress: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: "127.0.0.1", localAddress });
    socket.setNoDelay(true);
    socket.on("data", () => {});
    socket.once("error", reject);
    socket.once("connect", () => {
      socket.off("error", reject);
      socket.on("error", () => {});
      socket.write(HEAD);
      const drip = setInterval(() => socket.write(" "), DRIP_MS);
      socket.on("close", () => clearInterval(drip));
      resolve(socket);
    });
  });
}

/** The API's RSS every 500 ms while `during` runs: the highest reading. */
async function peakRss(pid: number, during: Promise<unknown>): Promise<number> {
  let peak = rssMb(pid);
  let done = false;
  void during.finally(() => {
    done = true;
  });
  while (!done) {
    peak = Math.max(peak, rssMb(pid));
    await sleep(500);
  }
  return Math.max(peak, rssMb(pid));
}

/** V8's heap in MB (listener targets only: the API has no such route). */
async function heapMb(baseUrl: string): Promise<Record<string, number> | undefined> {
  if (TARGET === "api") return undefined;
  const response = await fetch(`${baseUrl}/memory`, { headers: { Connection: "close" } });
  const usage = (await response.json()) as Record<string, number>;
  return Object.fromEntries(Object.entries(usage).map(([key, bytes]) => [key, Math.round(bytes / 2 ** 20)]));
}

async function startListener(mode: string) {
  const listenPort = freePort();
  const baseUrl = `http://127.0.0.1:${listenPort}`;
  const started = await startServerProcess({
    args: [
      ...(V8_FLAGS ? [`--v8-flags=${V8_FLAGS}`] : []),
      new URL(import.meta.url).pathname,
      `--serve=${mode}`,
      `--port=${listenPort}`,
    ],
    cwd: Deno.cwd(),
    env: { ...Deno.env.toObject(), ...EXTRA_ENV },
    ready: async () => (await fetch(`${baseUrl}/healthz`)).ok,
    what: "the listener",
  });
  return { baseUrl, ...started };
}

const database = TARGET === "api" ? await createPostgresTestDatabase() : null;
const server =
  database === null
    ? await startListener(TARGET.replace("listener-", ""))
    : await startApi({
        env: {
          DATABASE_URL: database.databaseUrl,
          JOBS_ENABLED: "false",
          LOG_LEVEL: "warn",
          HTTP_BODY_TIMEOUT_SECONDS: String(HOLD_S + 60),
          HTTP_BODY_READ_TIMEOUT_SECONDS: String(HOLD_S + 60),
          HTTP_BODY_MIN_BYTES_PER_SECOND: "0",
          ...EXTRA_ENV,
        },
        ...(V8_FLAGS ? { denoArgs: [`--v8-flags=${V8_FLAGS}`] } : {}),
      });
const port = Number(new URL(server.baseUrl).port);
try {
  // A few ordinary requests first, so that "before" is a warmed-up instance.
  for (let i = 0; i < 50; i++) {
    const response = await fetch(`${server.baseUrl}/healthz`);
    await response.body?.cancel();
  }
  await sleep(2000);
  for (let round = 1; round <= ROUNDS; round++) {
    const before = rssMb(server.pid);
    const addresses = Math.ceil(CONNECTIONS / PER_ADDRESS);
    const sockets: net.Socket[] = [];
    const opening = (async () => {
      for (let i = 0; i < CONNECTIONS; i++) {
        // 127.0.1.x upwards: clear of 127.0.0.1, which the bench's own requests use.
        const n = 256 + (i % addresses);
        sockets.push(await slowBody(port, `127.0.${n >> 8}.${n & 255}`));
      }
    })();
    const holding = opening.then(() => sleep(HOLD_S * 1000));
    const during = await peakRss(server.pid, holding);
    const stillOpen = sockets.filter((socket) => !socket.destroyed).length;
    const endOfHold = rssMb(server.pid);
    const heapEndOfHold = await heapMb(server.baseUrl);
    for (const socket of sockets) socket.destroy();
    await sleep(5000);
    const after5 = rssMb(server.pid);
    await sleep(30_000);
    const after35 = rssMb(server.pid);
    const heapAfter35 = await heapMb(server.baseUrl);
    const health = await fetch(`${server.baseUrl}/healthz`);
    await health.body?.cancel();
    console.log(
      JSON.stringify({
        round,
        target: TARGET,
        connections: CONNECTIONS,
        addresses,
        hold_s: HOLD_S,
        open_at_end_of_hold: stillOpen,
        rss_mb_before: before,
        rss_mb_peak_during: during,
        rss_mb_end_of_hold: endOfHold,
        rss_mb_after_5s: after5,
        rss_mb_after_35s: after35,
        kb_per_connection: Math.round(((during - before) * 1024) / CONNECTIONS),
        healthz_after: health.status,
        ...(heapEndOfHold ? { v8_mb_end_of_hold: heapEndOfHold, v8_mb_after_35s: heapAfter35 } : {}),
      }),
    );
  }
} finally {
  await server.stop();
  await database?.drop();
}
