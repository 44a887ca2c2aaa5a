// What the access line costs, piece by piece: the service's logger (apps/api/src/logger.ts) writing the
// line every request writes, in a process that yields to its event loop as a server does (every
// --per-turn lines, a timer's turn). Three variants, each its own Deno process with the service's flags,
// in alternating rounds:
//
//   off      LOG_LEVEL=warn: the call is made, nothing is formatted or written (what a request pays for
//            the line's arguments alone)
//   format   info, to a destination that drops the line: pino, the redaction and the scrub
//   written  info, to the service's own destination (log-destination.ts) on standard output (/dev/null)
//
// Reports each variant's CPU per line (user + system time of the whole process, every thread) and the
// differences: format − off is the formatting, written − format the destination. See bench/README.md.
//
//   node scripts/bootstrap.mjs bench log-line [--lines=60000] [--per-turn=20] [--rounds=3]
//
// It starts itself in child mode (--variant=off|format|written).
import process from "node:process";
import { parseArgs } from "node:util";
import { DENO_RUN_FLAGS } from "../scripts/deno.mjs";
import { median } from "./support.ts";

const { values: args } = parseArgs({
  args: Deno.args,
  options: {
    variant: { type: "string" },
    lines: { type: "string", default: "60000" },
    "per-turn": { type: "string", default: "20" },
    rounds: { type: "string", default: "3" },
  },
});

const VARIANTS = ["off", "format", "written"] as const;
type Variant = (typeof VARIANTS)[number];
/** One child's figures. */
type Figure = { us_per_line: number; lines_per_s: number };

/** Child mode: warms up, then writes `lines` access lines, yielding every `perTurn`; prints its CPU. */
async function child(variant: Variant, lines: number, perTurn: number): Promise<void> {
  const { createLogger } = await import("../apps/api/src/logger.ts");
  const { fdDestination } = await import("../apps/api/src/log-destination.ts");
  const destination = variant === "format" ? { write: (_line: string) => true } : fdDestination();
  const logger = createLogger({ level: variant === "off" ? "warn" : "info", destination });
  const turn = () => new Promise((resolve) => setTimeout(resolve, 0));
  // The access line's shape (gateway.ts, logAccess), with a new request id each time.
  const run = async (count: number) => {
    for (let i = 0; i < count; i++) {
      logger.info(
        {
          request_id: `req_${(1e15 + i).toString(36)}`,
          method: "POST",
          route: "/v1/messages",
          status: 200,
          duration_ms: (i % 1000) / 10,
          project_id: "prj_01jd5x4z8k2m9q7w3e6r1t0y",
        },
        "request",
      );
      if (i % perTurn === perTurn - 1) await turn();
    }
  };
  await run(Math.min(lines, 20_000));
  const before = process.cpuUsage();
  const started = performance.now();
  await run(lines);
  await turn();
  const used = process.cpuUsage(before);
  const seconds = (performance.now() - started) / 1000;
  console.error(
    JSON.stringify({
      variant,
      us_per_line: (used.user + used.system) / lines,
      lines_per_s: Math.round(lines / seconds),
    }),
  );
}

async function runChild(variant: Variant): Promise<Figure> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...DENO_RUN_FLAGS,
      new URL(import.meta.url).pathname,
      `--variant=${variant}`,
      `--lines=${args.lines}`,
      `--per-turn=${args["per-turn"]}`,
    ],
    stdout: "null",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stderr).trim();
  if (!output.success) throw new Error(`variant ${variant} failed: ${text}`);
  return JSON.parse(text.split("\n").at(-1) ?? "{}");
}

async function main(): Promise<void> {
  const rounds = Math.max(1, Number(args.rounds));
  const figures: Record<Variant, Figure[]> = { off: [], format: [], written: [] };
  for (let round = 0; round < rounds; round++) {
    // Each round starts with the next variant in turn, so none always runs first.
    for (let i = 0; i < VARIANTS.length; i++) {
      const variant = VARIANTS[(round + i) % VARIANTS.length] as Variant;
      figures[variant].push(await runChild(variant));
    }
  }
  const us = (variant: Variant) => median(figures[variant].map((figure) => figure.us_per_line));
  const round2 = (value: number) => Math.round(value * 100) / 100;
  console.log(
    JSON.stringify({
      bench: "log-line",
      lines: Number(args.lines),
      per_turn: Number(args["per-turn"]),
      rounds,
      line_us: round2(us("written") - us("off")),
      format_us: round2(us("format") - us("off")),
      destination_us: round2(us("written") - us("format")),
      us_per_line: Object.fromEntries(VARIANTS.map((variant) => [variant, round2(us(variant))])),
      per_round: Object.fromEntries(
        VARIANTS.map((variant) => [variant, figures[variant].map((figure) => round2(figure.us_per_line))]),
      ),
      lines_per_s: Object.fromEntries(
        VARIANTS.map((variant) => [
          variant,
          Math.round(median(figures[variant].map((figure) => figure.lines_per_s))),
        ]),
      ),
    }),
  );
}

if (args.variant) {
  await child(args.variant as Variant, Number(args.lines), Number(args["per-turn"]));
} else {
  await main();
}
