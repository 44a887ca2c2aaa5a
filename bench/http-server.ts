// The HTTP layer alone: Deno.serve against the service's listener
// (apps/api/src/http/server.ts: connections accepted by the service, each
// served by Deno's serveHttpOnConnection, with the cap and the deadlines), both
// answering "ok" to every request, so that only the transport differs. Reports
// throughput and the server's CPU time per request, with keep-alive
// connections (as behind a proxy or with wrk) and with a new connection per
// request (Connection: close). See bench/README.md.
//
//   node scripts/bootstrap.mjs bench http-server [--duration=5] [--rounds=3] [--connections=64]
//
// It starts itself twice in server mode (--serve=deno|service --port=N).
import { parseArgs } from "node:util";
import { DENO_RUN_FLAGS } from "../scripts/deno.mjs";
import { freePort } from "./support.ts";

const { values: args } = parseArgs({
  args: Deno.args,
  options: {
    serve: { type: "string" },
    port: { type: "string" },
    duration: { type: "string", default: "5" },
    rounds: { type: "string", default: "3" },
    connections: { type: "string", default: "64" },
  },
});

const ok = () => new Response("ok");

if (args.serve) {
  const port = Number(args.port);
  if (args.serve === "deno") {
    Deno.serve({ hostname: "127.0.0.1", port, onListen: () => console.log("ready") }, (_request, _info) =>
      ok(),
    );
  } else {
    const { serveHttp } = await import("../apps/api/src/http/server.ts");
    const { createLogger } = await import("../apps/api/src/logger.ts");
    serveHttp({
      name: "bench",
      hostname: "127.0.0.1",
      port,
      handler: async () => ok(),
      maxConnections: 10_000,
      maxConnectionsPerPeer: 10_000,
      maxUnfinishedBodiesPerPeer: 10_000,
      headersTimeoutMs: 10_000,
      bodyTimeoutMs: 30_000,
      bodyReadTimeoutMs: 10_000,
      bodyMinBytesPerSecond: 240,
      idleTimeoutMs: 60_000,
      logger: createLogger({ level: "silent" }),
    });
    console.log("ready");
  }
} else {
  await main();
}

/** utime + stime of a process, in milliseconds (read with cat: Deno guards /proc). */
function cpuMs(pid: number): number {
  const output = new Deno.Command("cat", { args: [`/proc/${pid}/stat`], stderr: "null" }).outputSync();
  const stat = new TextDecoder().decode(output.stdout);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

async function startServer(kind: "deno" | "service") {
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...DENO_RUN_FLAGS, new URL(import.meta.url).pathname, `--serve=${kind}`, `--port=${port}`],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  for (let seen = ""; !seen.includes("ready"); ) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${kind} server exited`);
    seen += value;
  }
  return { port, pid: child.pid, stop: () => child.kill("SIGKILL") };
}

async function wrk(
  port: number,
  connections: number,
  close: boolean,
): Promise<{ requests: number; rps: number }> {
  const output = await new Deno.Command("wrk", {
    args: [
      "-t1",
      `-c${connections}`,
      `-d${args.duration}s`,
      ...(close ? ["-H", "Connection: close"] : []),
      `http://127.0.0.1:${port}/`,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout);
  const requests = Number(/(\d+) requests in/.exec(text)?.[1] ?? 0);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1] ?? 0);
  return { requests, rps };
}

async function main() {
  const servers = { deno: await startServer("deno"), service: await startServer("service") };
  try {
    for (let round = 1; round <= Number(args.rounds); round++) {
      for (const mode of ["keep-alive", "close"] as const) {
        for (const kind of ["deno", "service"] as const) {
          const server = servers[kind];
          const connections =
            mode === "close" ? Math.min(16, Number(args.connections)) : Number(args.connections);
          const before = cpuMs(server.pid);
          const result = await wrk(server.port, connections, mode === "close");
          const cpu = cpuMs(server.pid) - before;
          console.log(
            JSON.stringify({
              round,
              server: kind === "deno" ? "Deno.serve" : "service listener",
              mode,
              connections,
              requests_per_s: Math.round(result.rps),
              cpu_us_per_request:
                result.requests > 0 ? Math.round((cpu * 1000 * 10) / result.requests) / 10 : null,
            }),
          );
        }
      }
    }
  } finally {
    servers.deno.stop();
    servers.service.stop();
  }
}
