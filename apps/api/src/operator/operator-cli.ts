// The operator's command-line tool (spec 1.7): no HTTP route, straight to the
// database through the domain's operator actions (the same functions the
// dashboard calls). operator.ts is the Deno entry; this module holds the
// command table, the parsing and the printing, so tests run it in-process.
//
//   npm run operator -- <command> [flags]      (see USAGE)
import { parseArgs } from "node:util";
import { type Keyring, KeyringError, parseKeyring } from "@sms/crypto";
import type { Database } from "@sms/db";
import {
  type Clock,
  createStore,
  formatTimestamp,
  type OperatorRefusal,
  type ProjectDescription,
  type SenderBrandDirectory,
  systemClock,
} from "@sms/domain";
import { INPUT_RULES, refusalText } from "../contract/refusals.ts";
import type { Config } from "../env.ts";
import { toCredits, toFreeTier } from "../routers/dashboard/records.types.ts";
import { toMessageCount } from "../routers/operator/operator.types.ts";
import { type OperatorServices, operatorServices } from "../services.ts";

export type OperatorCliResult = { exitCode: number; stdout: string[]; stderr: string[] };

export type OperatorCliOptions = {
  argv: string[];
  config: Config;
  db: Database;
  /** Used when --actor is not given (the OS user). */
  defaultActor: string;
  /** uBill's brand list; null when no live credentials are configured. */
  brands: SenderBrandDirectory | null;
  clock?: Clock;
};

export class UsageError extends Error {}

type Flags = Record<string, string | undefined>;

/** What a command hands back: the data for --json and the lines for a human, or a refusal. */
type Outcome =
  | { ok: true; json: Record<string, unknown>; lines: string[]; exitCode?: number }
  | OperatorRefusal;

type Context = { services: OperatorServices; actor: string; cacheTtlMs: number };

type Command = {
  name: string;
  /** The flags it takes (beyond --actor and --json), and which of them it needs. */
  flags: string[];
  required: string[];
  usage: string;
  run(flags: Flags, context: Context): Promise<Outcome>;
};

const ts = (date: Date | null) => (date ? formatTimestamp(date) : "-");
const optional = <K extends string>(key: K, value: string | undefined) =>
  (value === undefined ? {} : { [key]: value }) as Partial<Record<K, string>>;

function wholeNumber(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9]{1,15}$/.test(value)) throw new UsageError(`--${flag} must be a whole number.`);
  return Number(value);
}

function describeLines(description: ProjectDescription, cacheTtlMs: number): string[] {
  const { project, credits, freeTier, keys, messages } = description;
  const lines = [
    `Project ${project.id}`,
    `  created     ${ts(project.createdAt)}`,
    `  claimed     ${project.claimedAt ? `${ts(project.claimedAt)} (account ${project.accountId ?? "-"})` : "no"}`,
    `  suspended   ${project.suspendedAt ? `since ${ts(project.suspendedAt)}` : "no"}`,
    `  sender      ${project.sender ? `${project.sender} (uBill brand ${project.senderBrandId ?? "-"})` : "the shared default"}`,
    `  credits     ${credits.balance}${credits.consistent ? " (matches the ledger)" : ` (LEDGER SUMS TO ${credits.ledgerSum}: investigate)`}`,
    `  paid        ${credits.hasPaidCredits ? "yes (no free-tier allowance)" : "no"}`,
    freeTier.applies
      ? `  free tier   ${freeTier.usedToday} of ${freeTier.limit} live segments used today; resets ${ts(freeTier.resetAt)}`
      : "  free tier   does not apply (paid credits)",
    "Keys",
    ...(keys.length === 0
      ? ["  (none)"]
      : keys.map(
          (key) =>
            `  ${key.id}  ${key.mode.padEnd(4)}  ${key.prefix}…  created ${ts(key.createdAt)}  ${key.revokedAt ? `revoked ${ts(key.revokedAt)}` : "active"}`,
        )),
    "Messages (last 24 h / last 7 days)",
    ...(messages.length === 0
      ? ["  (none)"]
      : messages.map(
          (row) => `  ${row.mode.padEnd(4)}  ${row.status.padEnd(13)}  ${row.last24h} / ${row.last7d}`,
        )),
  ];
  if (project.suspendedAt) lines.push(`(Suspension reaches running API instances within ${cacheTtlMs} ms.)`);
  return lines;
}

const reachesInstances = (cacheTtlMs: number) => `within ${cacheTtlMs} ms (API_KEY_CACHE_TTL_MS)`;

function suspension(name: "suspend" | "reinstate"): Command {
  const state = name === "suspend" ? "suspended" : "active";
  return {
    name,
    flags: ["project", "reason"],
    required: ["project"],
    usage: `${name.padEnd(15)} --project prj_… [--reason TEXT]`,
    async run(flags, { services, actor, cacheTtlMs }) {
      const act = name === "suspend" ? services.suspendProject : services.reinstateProject;
      const result = await act({
        actor,
        projectId: flags.project ?? "",
        ...optional("reason", flags.reason),
      });
      if (!result.ok) return result;
      return {
        ok: true,
        json: {
          project_id: result.projectId,
          suspended_at: result.suspendedAt ? formatTimestamp(result.suspendedAt) : null,
          changed: result.changed,
        },
        lines: result.changed
          ? [
              `Project ${result.projectId} is now ${state}.`,
              `Running API instances see it ${reachesInstances(cacheTtlMs)}.`,
            ]
          : [`Project ${result.projectId} was already ${state}; nothing changed.`],
      };
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
    async run(flags, { services, actor }) {
      const result = await services.createLiveKey({ actor, projectId: flags.project ?? "" });
      if (!result.ok) return result;
      return {
        ok: true,
        json: {
          project_id: result.projectId,
          key_id: result.keyId,
          prefix: result.prefix,
          api_key: result.apiKey,
        },
        lines: [
          `Created live key ${result.keyId} (${result.prefix}…) for project ${result.projectId}.`,
          "",
          `  ${result.apiKey}`,
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
    async run(flags, { services, actor, cacheTtlMs }) {
      const result = await services.revokeApiKey({
        actor,
        ...optional("keyId", flags.key),
        ...optional("prefix", flags.prefix),
        ...optional("projectId", flags.project),
      });
      if (!result.ok) return result;
      return {
        ok: true,
        json: {
          key_id: result.keyId,
          project_id: result.projectId,
          mode: result.mode,
          prefix: result.prefix,
          revoked_at: formatTimestamp(result.revokedAt),
          already_revoked: result.alreadyRevoked,
        },
        lines: [
          result.alreadyRevoked
            ? `Key ${result.keyId} (${result.prefix}…) of project ${result.projectId} was already revoked at ${ts(result.revokedAt)}; nothing changed.`
            : `Revoked ${result.mode} key ${result.keyId} (${result.prefix}…) of project ${result.projectId}.`,
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
    async run(flags, { services, actor }) {
      const result = await services.grantPaidCredits({
        actor,
        projectId: flags.project ?? "",
        amount: wholeNumber("amount", flags.amount) ?? 0,
        ...optional("reference", flags.reference),
      });
      if (!result.ok) return result;
      return {
        ok: true,
        json: {
          project_id: result.projectId,
          amount: result.amount,
          reference: result.reference,
          entry_id: result.entryId,
          balance: result.balance,
          already_granted: result.alreadyGranted,
        },
        lines: [
          result.alreadyGranted
            ? `Reference ${result.reference} was already granted (${result.amount} credits, ${result.entryId}); nothing changed. Balance ${result.balance}.`
            : `Granted ${result.amount} paid credits to project ${result.projectId}. Balance ${result.balance}; the free-tier allowance no longer applies.`,
        ],
      };
    },
  },
  {
    name: "set-sender",
    flags: ["project", "name", "brand-id"],
    required: ["project", "name"],
    usage: "set-sender      --project prj_… --name NAME [--brand-id N]",
    async run(flags, { services, actor }) {
      const brandId = wholeNumber("brand-id", flags["brand-id"]);
      const result = await services.setProjectSender({
        actor,
        projectId: flags.project ?? "",
        name: flags.name ?? "",
        ...(brandId !== undefined ? { brandId } : {}),
      });
      if (!result.ok) return result;
      return {
        ok: true,
        json: {
          project_id: result.projectId,
          sender: result.sender,
          brand_id: result.brandId,
          validated: result.validated,
          changed: result.changed,
        },
        lines: [
          result.changed
            ? `Project ${result.projectId} now sends as ${result.sender} (uBill brand ${result.brandId}).`
            : `Project ${result.projectId} already sends as ${result.sender} (uBill brand ${result.brandId}); nothing changed.`,
          result.validated
            ? "The brand is approved in uBill's brand list."
            : "Not checked against uBill (no UBILL_* credentials configured): make sure the brand id is right.",
        ],
      };
    },
  },
  {
    name: "clear-sender",
    flags: ["project"],
    required: ["project"],
    usage: "clear-sender    --project prj_…",
    async run(flags, { services, actor }) {
      const result = await services.clearProjectSender({ actor, projectId: flags.project ?? "" });
      if (!result.ok) return result;
      return {
        ok: true,
        json: { project_id: result.projectId, changed: result.changed },
        lines: [
          result.changed
            ? `Project ${result.projectId} now sends under the shared default sender.`
            : `Project ${result.projectId} already used the shared default sender; nothing changed.`,
        ],
      };
    },
  },
  {
    name: "show",
    flags: ["project"],
    required: ["project"],
    usage:
      "show            --project prj_…                 balance, free tier, keys (prefixes only), message counts",
    async run(flags, { services, actor, cacheTtlMs }) {
      const result = await services.describeProject({ actor, projectId: flags.project ?? "" });
      if (!result.ok) return result;
      const { project, credits, freeTier } = result;
      return {
        ok: true,
        json: {
          project: {
            id: project.id,
            created_at: formatTimestamp(project.createdAt),
            claimed_at: project.claimedAt ? formatTimestamp(project.claimedAt) : null,
            account_id: project.accountId,
            suspended_at: project.suspendedAt ? formatTimestamp(project.suspendedAt) : null,
            sender: project.sender,
            sender_brand_id: project.senderBrandId,
          },
          credits: toCredits(credits),
          free_tier: toFreeTier(freeTier),
          keys: result.keys.map((key) => ({
            id: key.id,
            mode: key.mode,
            prefix: key.prefix,
            created_at: formatTimestamp(key.createdAt),
            revoked_at: key.revokedAt ? formatTimestamp(key.revokedAt) : null,
          })),
          messages: result.messages.map(toMessageCount),
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
      "                                                  of MESSAGE_ENCRYPTION_KEYS (see docs/privacy.md)",
    async run(flags, { services, actor }) {
      if (!services.rotateKeys) {
        throw new UsageError(
          "rotate-keys needs MESSAGE_ENCRYPTION_KEYS: the new key first, then every old key.",
        );
      }
      const batchSize = wholeNumber("batch-size", flags["batch-size"]) ?? 500;
      if (batchSize < 1 || batchSize > 10_000) throw new UsageError(INPUT_RULES.batch_size.terminal);
      const result = await services.rotateKeys({ actor, batchSize });
      if (!result.ok) return result;
      const { ok: _ok, currentKeyId, ...counts } = result;
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

Configuration: DATABASE_URL (or PGLITE_DATA_DIR); UBILL_BASE_URL, UBILL_API_KEY and
UBILL_DEFAULT_BRAND_ID let set-sender check the brand against uBill's brand list.
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

function keyringOf(spec: string | undefined): Keyring | null {
  if (!spec) return null;
  try {
    return parseKeyring(spec);
  } catch (error) {
    // Its message names the problem, never the key material.
    if (error instanceof KeyringError) throw new UsageError(error.message);
    throw error;
  }
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
    const services = operatorServices({
      store: createStore(options.db),
      clock: options.clock ?? systemClock,
      brands: options.brands,
      keyring: command.name === "rotate-keys" ? keyringOf(options.config.messageEncryptionKeys) : null,
      config: options.config,
    });
    outcome = await command.run(flags, {
      services,
      actor: parsed.actor ?? options.defaultActor,
      cacheTtlMs: options.config.apiKeyCacheTtlMs,
    });
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    return {
      exitCode: 2,
      stdout: json
        ? [toJson({ ok: false, command: command.name, code: "invalid_input", message: error.message })]
        : [],
      stderr: [`operator: ${error.message}`],
    };
  }
  if (!outcome.ok) {
    const message = refusalText(outcome, "terminal");
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
