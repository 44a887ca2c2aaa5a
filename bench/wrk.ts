// Driving wrk from a benchmark: a Lua string literal, the part every script
// shares (thread ids, the JSON summary wrk prints at the end), and one run of
// a script read back as figures. bench/messages.ts and bench/live.ts build
// their own request() on top.

export type WrkFigures = {
  requests: number;
  requests_per_s: number;
  non_2xx: number;
  errors: number;
  latency_ms: { avg: number; p50: number; p90: number; p99: number; max: number };
};

export function luaString(text: string): string {
  return `"${text.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

/** A wrk script around `body` (which defines request()): numbered threads and a JSON summary. */
export function wrkScript(body: string): string {
  return `
local counter = 0
thread_id = 0
local threads = {}
function setup(thread)
  thread:set("thread_id", #threads + 1)
  table.insert(threads, thread)
end
${body}
function done(summary, latency, requests)
  io.write(string.format('BENCH_JSON {"requests":%d,"duration_us":%d,"non_2xx":%d,"errors":%d,"avg":%f,"p50":%d,"p90":%d,"p99":%d,"max":%d}\\n',
    summary.requests, summary.duration, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency.mean, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
`;
}

/** Runs `script` (from wrkScript) against `baseUrl` and reads its summary. */
export async function runWrk(options: {
  baseUrl: string;
  script: string;
  threads: number;
  connections: number;
  seconds: number;
  timeoutSeconds: number;
}): Promise<WrkFigures> {
  const file = await Deno.makeTempFile({ suffix: ".lua" });
  await Deno.writeTextFile(file, options.script);
  try {
    const output = await new Deno.Command("wrk", {
      args: [
        "-t",
        String(options.threads),
        "-c",
        String(options.connections),
        "-d",
        `${options.seconds}s`,
        "--timeout",
        `${options.timeoutSeconds}s`,
        "-s",
        file,
        options.baseUrl,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(output.stdout);
    const line = text.split("\n").find((candidate) => candidate.startsWith("BENCH_JSON "));
    if (!line)
      throw new Error(`wrk printed no summary:\n${text}\n${new TextDecoder().decode(output.stderr)}`);
    const raw = JSON.parse(line.slice("BENCH_JSON ".length));
    const ms = (us: number) => Math.round(us / 10) / 100;
    return {
      requests: raw.requests,
      requests_per_s: Math.round(raw.requests / (raw.duration_us / 1e6)),
      non_2xx: raw.non_2xx,
      errors: raw.errors,
      latency_ms: {
        avg: ms(raw.avg),
        p50: ms(raw.p50),
        p90: ms(raw.p90),
        p99: ms(raw.p99),
        max: ms(raw.max),
      },
    };
  } finally {
    await Deno.remove(file);
  }
}
