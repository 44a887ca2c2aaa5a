// The operator's command-line tool (spec 1.7): an internal tool that calls
// the running service's operator procedures (operator.*, the same ones the
// dashboard's operator pages call) through the typed @trpc/client on the
// internal listener (@sms/api's createInternalClient), naming the operator for
// the audit rows. main.ts is the Deno entry; this module holds the command
// table, the parsing and the printing, so tests run it in-process against an
// app's internal handler.
//
//   npm run operator -- <command> [flags]      (see USAGE)
import { parseArgs } from "node:util";
import { apiErrorCode, INPUT_RULES, type InternalClient } from "@sms/api";
// A procedure's refusal (its code and its sentence, worded for a terminal by the service) and what
// operator.projects.get describes: the wire shapes, declared once (@sms/contract).
import type { Described, Refusal } from "@sms/contract";
import { isTRPCClientError } from "@trpc/client";

export type OperatorCliResult = { exitCode: number; stdout: string[]; stderr: string[] };

export type OperatorCliOptions = {
  argv: string[];
  /** The typed client of the service's internal listener, acting for `actor` (createInternalClient). */
  client: (actor: string) => InternalClient;
  /** Used when --actor is not given (the OS user). */
  defaultActor: string;
  /** API_KEY_CACHE_TTL_MS: how soon running API instances see a revocation or suspension. */
  cacheTtlMs: number;
};

export class UsageError extends Error {}

type Flags = Record<string, string | undefined>;

/** What a command hands back: the data for --json and the lines for a human, or a refusal. */
type Outcome = { ok: true; json: Record<string, unknown>; lines: string[]; exitCode?: number } | Refusal;

type Context = { operator: InternalClient["operator"]; cacheTtlMs: number };

type Command = {
  name: string;
  /** The flags it takes (beyond --actor and --json), and which of them it needs. */
  flags: string[];
  required: string[];
  usage: string;
  run(flags: Flags, context: Context): Promise<Outcome>;
};

const optional = <K extends string>(key: K, value: string | undefined) =>
  (value === undefined ? {} : { [key]: value }) as Partial<Record<K, string>>;

function wholeNumber(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9]{1,15}$/.test(value)) throw new UsageError(`--${flag} must be a whole number.`);
  return Number(value);
}

function describeLines(description: Described, cacheTtlMs: number): string[] {
  const { project, credits, free_tier: freeTier, keys, messages } = description;
  const lines = [
    `Project ${project.id}`,
    `  created     ${project.created_at}`,
    `  claimed     ${project.claimed_at ? `${project.claimed_at} (account ${project.account_id ?? "-"})` : "no"}`,
    `  suspended   ${project.suspended_at ? `since ${project.suspended_at}` : "no"}`,
    `  sender      ${project.sender ? `${project.sender} (uBill brand ${project.sender_brand_id ?? "-"})` : "the shared default"}`,
    `  credits     ${credits.balance}${credits.consistent ? " (matches the ledger)" : ` (LEDGER SUMS TO ${credits.ledger_sum}: investigate)`}`,
    `  paid        ${credits.has_paid_credits ? "yes (no free-tier allowance)" : "no"}`,
    `  daily cap   ${project.daily_credit_cap === null ? "none" : `${project.daily_credit_cap} live credits a UTC day`}`,
    freeTier.applies
      ? `  free tier   ${freeTier.used_today} of ${freeTier.limit} live segments used today; resets ${freeTier.reset_at}`
      : "  free tier   does not apply (paid credits)",
    "Keys",
    ...(keys.length === 0
      ? ["  (none)"]
      : keys.map(
          (key) =>
            `  ${key.id}  ${key.mode.padEnd(4)}  ${key.prefix}…  created ${key.created_at}  ${key.revoked_at ? `revoked ${key.revoked_at}` : "active"}`,
        )),
    "Messages (last 24 h / last 7 days)",
    ...(messages.length === 0
      ? ["  (none)"]
      : messages.map(
          (row) => `  ${row.mode.padEnd(4)}  ${row.status.padEnd(13)}  ${row.last_24h} / ${row.last_7d}`,
        )),
  ];
  if (project.suspended_at) lines.push(`(Suspension reaches running API instances within ${cacheTtlMs} ms.)`);
  return lines;
}

/** A procedure's answer as an outcome: its refusal as it is, or its data (for --json) and `lines` for a human. */
function answered<T extends { ok: true }>(result: T | Refusal, lines: (result: T) => string[]): Outcome {
  if (!result.ok) return result;
  const { ok: _ok, ...json } = result;
  return { ok: true, json, lines: lines(result) };
}

const reachesInstances = (cacheTtlMs: number) => `within ${cacheTtlMs} ms (API_KEY_CACHE_TTL_MS)`;

function suspension(name: "suspend" | "reinstate"): Command {
  const state = name === "suspend" ? "suspended" : "active";
  return {
    name,
    flags: ["project", "reason"],
    required: ["project"],
    usage: `${name.padEnd(15)} --project prj_… [--reason TEXT]`,
    async run(flags, { operator, cacheTtlMs }) {
      const input = { project_id: flags.project ?? "", ...optional("reason", flags.reason) };
      const result = await (name === "suspend"
        ? operator.projects.suspend.mutate(input)
        : operator.projects.reinstate.mutate(input));
      return answered(result, (result) =>
        result.changed
          ? [
              `Project ${result.project_id} is now ${state}.`,
              `Running API instances see it ${reachesInstances(cacheTtlMs)}.`,
            ]
          : [`Project ${result.project_id} was already ${state}; nothing changed.`],
      );
    },
  };
}

/** Every command, in the order USAGE lists them. */
const COMMANDS: Command[] = [
  {
    name: "create-live-key",
    flags: ["project"],
    required: ["project"],
    usage: "create-live-key --project prj_…                 a live key for a claimed project (printed once)",
    async run(flags, { operator }) {
      const result = await operator.keys.createLive.mutate({ project_id: flags.project ?? "" });
      if (!result.ok) return result;
      const { key } = result;
      return {
        ok: true,
        json: { project_id: result.project_id, key_id: key.id, prefix: key.prefix, api_key: key.api_key },
        lines: [
          `Created live key ${key.id} (${key.prefix}…) for project ${result.project_id}.`,
          "",
          `  ${key.api_key}`,
          "",
          "This is the only time the key is shown: hand it over securely now. Only its hash is stored.",
        ],
      };
    },
  },
  {
    name: "revoke-key",
    flags: ["key", "prefix", "project"],
    required: [],
    usage: "revoke-key      --key key_… | --prefix sk_live_XXXX [--project prj_…]",
    async run(flags, { operator, cacheTtlMs }) {
      const result = await operator.keys.revoke.mutate({
        ...optional("key_id", flags.key),
        ...optional("prefix", flags.prefix),
        ...optional("project_id", flags.project),
      });
      if (!result.ok) return result;
      const { key } = result;
      return {
        ok: true,
        json: {
          key_id: key.id,
          project_id: result.project_id,
          mode: key.mode,
          prefix: key.prefix,
          revoked_at: result.revoked_at,
          already_revoked: result.already_revoked,
        },
        lines: [
          result.already_revoked
            ? `Key ${key.id} (${key.prefix}…) of project ${result.project_id} was already revoked at ${result.revoked_at}; nothing changed.`
            : `Revoked ${key.mode} key ${key.id} (${key.prefix}…) of project ${result.project_id}.`,
          `Running API instances stop accepting it ${reachesInstances(cacheTtlMs)}.`,
        ],
      };
    },
  },
  suspension("suspend"),
  suspension("reinstate"),
  {
    name: "grant-credits",
    flags: ["project", "amount", "reference"],
    required: ["project", "amount"],
    usage: "grant-credits   --project prj_… --amount N [--reference REF]",
    async run(flags, { operator }) {
      const result = await operator.credits.grant.mutate({
        project_id: flags.project ?? "",
        amount: wholeNumber("amount", flags.amount) ?? 0,
        ...optional("reference", flags.reference),
      });
      return answered(result, (result) => [
        result.already_granted
          ? `Reference ${result.reference} was already granted (${result.amount} credits, ${result.entry_id}); nothing changed. Balance ${result.balance}.`
          : `Granted ${result.amount} paid credits to project ${result.project_id}. Balance ${result.balance}; the free-tier allowance no longer applies.`,
      ]);
    },
  },
  {
    name: "set-daily-cap",
    flags: ["project", "cap"],
    required: ["project", "cap"],
    usage: "set-daily-cap   --project prj_… --cap N|none       live credits a UTC day (none: no cap)",
    async run(flags, { operator }) {
      const cap = flags.cap === "none" ? null : wholeNumber("cap", flags.cap);
      const result = await operator.projects.setDailyCreditCap.mutate({
        project_id: flags.project ?? "",
        cap: cap ?? null,
      });
      return answered(result, (result) => [
        result.daily_credit_cap === null
          ? `Project ${result.project_id} has no daily credit cap now: live sends are limited by the balance only.`
          : `Project ${result.project_id} may now reserve at most ${result.daily_credit_cap} live credits a UTC day; a send past it is refused with 429 daily_limit_reached.`,
      ]);
    },
  },
  {
    name: "set-sender",
    flags: ["project", "name", "brand-id"],
    required: ["project", "name"],
    usage: "set-sender      --project prj_… --name NAME [--brand-id N]",
    async run(flags, { operator }) {
      const brandId = wholeNumber("brand-id", flags["brand-id"]);
      const result = await operator.projects.setSender.mutate({
        project_id: flags.project ?? "",
        name: flags.name ?? "",
        ...(brandId !== undefined ? { brand_id: brandId } : {}),
      });
      return answered(result, (result) => [
        result.changed
          ? `Project ${result.project_id} now sends as ${result.sender} (uBill brand ${result.brand_id}).`
          : `Project ${result.project_id} already sends as ${result.sender} (uBill brand ${result.brand_id}); nothing changed.`,
        result.validated
          ? "The brand is approved in uBill's brand list."
          : "Not checked against uBill (no UBILL_* credentials configured): make sure the brand id is right.",
      ]);
    },
  },
  {
    name: "clear-sender",
    flags: ["project"],
    required: ["project"],
    usage: "clear-sender    --project prj_…",
    async run(flags, { operator }) {
      const result = await operator.projects.clearSender.mutate({ project_id: flags.project ?? "" });
      return answered(result, (result) => [
        result.changed
          ? `Project ${result.project_id} now sends under the shared default sender.`
          : `Project ${result.project_id} already used the shared default sender; nothing changed.`,
      ]);
    },
  },
  {
    name: "show",
    flags: ["project"],
    required: ["project"],
    usage:
      "show            --project prj_…                 balance, free tier, keys (prefixes only), message counts",
    async run(flags, { operator, cacheTtlMs }) {
      const result = await operator.projects.get.query({ project_id: flags.project ?? "" });
      if (!result.ok) return result;
      const { project } = result;
      return {
        ok: true,
        json: {
          project: {
            id: project.id,
            created_at: project.created_at,
            claimed_at: project.claimed_at,
            account_id: project.account_id,
            suspended_at: project.suspended_at,
            sender: project.sender,
            sender_brand_id: project.sender_brand_id,
            daily_credit_cap: project.daily_credit_cap,
          },
          credits: result.credits,
          free_tier: result.free_tier,
          keys: result.keys.map(({ id, mode, prefix, created_at, revoked_at }) => ({
            id,
            mode,
            prefix,
            created_at,
            revoked_at,
          })),
          messages: result.messages,
        },
        lines: describeLines(result, cacheTtlMs),
      };
    },
  },
  {
    name: "rotate-keys",
    flags: ["batch-size"],
    required: [],
    usage:
      "rotate-keys     [--batch-size N]                re-encrypt stored texts and numbers under the first key\n" +
      "                                                  of the service's MESSAGE_ENCRYPTION_KEYS (see docs/privacy.md)",
    async run(flags, { operator }) {
      const batchSize = wholeNumber("batch-size", flags["batch-size"]) ?? 500;
      if (batchSize < 1 || batchSize > 10_000) throw new UsageError(INPUT_RULES.batch_size.terminal);
      const result = await operator.messageKeys.rotate.mutate({ batch_size: batchSize });
      if (!result.ok) return result;
      const { ok: _ok, current_key_id: currentKeyId, ...counts } = result;
      return {
        ok: true,
        json: { current_key_id: currentKeyId, ...counts },
        exitCode: counts.failed > 0 ? 1 : 0,
        lines: [
          `Re-encrypted ${counts.rotated} message(s) under key ${currentKeyId}.`,
          ...(counts.failed > 0
            ? [
                `${counts.failed} message(s) could not be decrypted (key not in the spec, or tampered) and were left as they are.`,
              ]
            : []),
          `${counts.remaining} message(s) still hold a ciphertext under another key${counts.remaining > counts.failed ? " (rows busy elsewhere are skipped: run again)" : ""}.`,
          `${counts.fingerprints_on_old_keys} idempotency fingerprint(s) made under another key; they expire within 24 hours.`,
          counts.remaining === 0 && counts.fingerprints_on_old_keys === 0
            ? "Nothing depends on the old keys any more: they can be removed from MESSAGE_ENCRYPTION_KEYS."
            : "Keep the old keys in MESSAGE_ENCRYPTION_KEYS until both counts are 0.",
        ],
      };
    },
  },
];

export const USAGE = `Usage: npm run operator -- <command> [flags]

Commands:
${COMMANDS.map((command) => `  ${command.usage}`).join("\n")}
  help

Flags for every command:
  --actor NAME   who acts, for the audit log (default: the OS user)
  --json         machine-readable output

Configuration: the service's own. The tool calls the running service's internal
listener at INTERNAL_HOST:INTERNAL_PORT with INTERNAL_API_TOKEN (OPERATOR_TIMEOUT_MS
bounds each call). In development plain \`npm start\` opens it on PORT + 1 and writes
its token to .data/internal-token, which the tool reads when no token is set. The service checks set-sender against uBill's brand list when it
has UBILL_* credentials, and rotate-keys uses its MESSAGE_ENCRYPTION_KEYS.
Revocations, suspensions and sender changes reach running API instances within
API_KEY_CACHE_TTL_MS (default 2 s).`;

type Parsed = { command: Command | "help"; flags: Flags; json: boolean; actor?: string };

/** Parses the command line; throws UsageError with a one-line message. */
export function parseOperatorArgs(argv: string[]): Parsed {
  const flagNames = [...new Set(COMMANDS.flatMap((command) => command.flags))];
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        ...Object.fromEntries(flagNames.map((name) => [name, { type: "string" as const }])),
        actor: { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    throw new UsageError(`${(error as Error).message.split("\n")[0]}. Run 'npm run operator -- help'.`);
  }
  const { positionals, values } = parsed;
  const name = values.help ? "help" : (positionals[0] ?? "help");
  if (positionals.length > 1) throw new UsageError(`Unexpected argument '${positionals[1]}'.`);
  const common = {
    json: values.json === true,
    ...(typeof values.actor === "string" ? { actor: values.actor } : {}),
  };
  if (name === "help") return { command: "help", flags: {}, ...common };
  const command = COMMANDS.find((candidate) => candidate.name === name);
  if (!command) throw new UsageError(`Unknown command '${name}'. Run 'npm run operator -- help'.`);
  const flags: Flags = {};
  for (const [flag, value] of Object.entries(values)) {
    if (flag === "json" || flag === "actor" || flag === "help") continue;
    if (!command.flags.includes(flag)) throw new UsageError(`'${name}' does not take --${flag}.`);
    flags[flag] = String(value);
  }
  for (const flag of command.required) {
    if (flags[flag] === undefined || flags[flag] === "") throw new UsageError(`'${name}' needs --${flag}.`);
  }
  return { command, flags, ...common };
}

/** Runs one command. Never throws for bad input: a one-line error and a non-zero exit code instead. */
export async function runOperatorCli(options: OperatorCliOptions): Promise<OperatorCliResult> {
  let parsed: Parsed;
  try {
    parsed = parseOperatorArgs(options.argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    return { exitCode: 2, stdout: [], stderr: [`operator: ${error.message}`] };
  }
  const { command, flags, json } = parsed;
  if (command === "help") return { exitCode: 0, stdout: [USAGE], stderr: [] };
  const toJson = (value: unknown) => JSON.stringify(value, null, 2);

  let outcome: Outcome;
  try {
    outcome = await command.run(flags, {
      operator: options.client(parsed.actor ?? options.defaultActor).operator,
      cacheTtlMs: options.cacheTtlMs,
    });
  } catch (error) {
    if (error instanceof UsageError) {
      return {
        exitCode: 2,
        stdout: json
          ? [toJson({ ok: false, command: command.name, code: "invalid_input", message: error.message })]
          : [],
        stderr: [`operator: ${error.message}`],
      };
    }
    // The service refused the call itself (a wrong token, a malformed input) or was not reached.
    if (!isTRPCClientError(error)) throw error;
    const message = callFailure(error);
    return {
      exitCode: 1,
      stdout: json ? [toJson({ ok: false, command: command.name, code: apiErrorCode(error), message })] : [],
      stderr: [`operator: ${message}`],
    };
  }
  if (!outcome.ok) {
    const { message } = outcome;
    return {
      exitCode: 1,
      stdout: json ? [toJson({ ok: false, command: command.name, code: outcome.code, message })] : [],
      stderr: [`operator: ${message.replace(/\s+/g, " ")}`],
    };
  }
  return {
    exitCode: outcome.exitCode ?? 0,
    stdout: json ? [toJson({ ok: true, command: command.name, ...outcome.json })] : outcome.lines,
    stderr: [],
  };
}

/** One line for a call that failed outside the procedure: not reached, timed out, or refused by the listener. */
function callFailure(error: unknown): string {
  const code = apiErrorCode(error);
  const text = error instanceof Error ? (error.message.split("\n")[0] ?? "") : "";
  if (code === "unauthorized") return "The service refused INTERNAL_API_TOKEN.";
  if (code !== null) return `The service answered ${code}: ${text}`;
  const cause =
    error instanceof Error ? (error.cause as { name?: string; message?: string } | undefined) : undefined;
  if (cause?.name === "TimeoutError" || /timed? ?out|aborted/i.test(text))
    return "The service did not answer within OPERATOR_TIMEOUT_MS.";
  return `The service's internal listener could not be reached (${cause?.message ?? text ?? "no answer"}).`;
}
