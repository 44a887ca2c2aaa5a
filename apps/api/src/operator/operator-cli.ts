// The operator's command-line tool (spec 1.7): no HTTP route, straight to the
// database through @sms/domain. operator.ts is the Deno entry; this module
// holds the parsing and the printing so tests can also run it in-process.
//
//   npm run operator -- <command> [flags]      (see USAGE)
import { parseArgs } from "node:util";
import { type Keyring, KeyringError, parseKeyring } from "@sms/crypto";
import type { Database } from "@sms/db";
import {
  type Clock,
  clearProjectSender,
  createLiveKey,
  describeProject,
  grantPaidCredits,
  type OperatorDeps,
  type OperatorRefusal,
  type ProjectDescription,
  reinstateProject,
  revokeApiKey,
  rotateMessageKeys,
  type SenderBrandDirectory,
  setProjectSender,
  suspendProject,
  systemClock,
  formatTimestamp,
  ACTOR_PATTERN,
  writeAuditEntry,
} from "@sms/domain";
import type { Env } from "../env.ts";

export const USAGE = `Usage: npm run operator -- <command> [flags]

Commands:
  create-live-key --project prj_…                 a live key for a claimed project (printed once)
  revoke-key      --key key_… | --prefix sk_live_XXXX [--project prj_…]
  suspend         --project prj_… [--reason TEXT]
  reinstate       --project prj_… [--reason TEXT]
  grant-credits   --project prj_… --amount N [--reference REF]
  set-sender      --project prj_… --name NAME [--brand-id N]
  clear-sender    --project prj_…
  show            --project prj_…                 balance, free tier, keys (prefixes only), message counts
  rotate-keys     [--batch-size N]                re-encrypt stored texts and numbers under the first key
                                                  of MESSAGE_ENCRYPTION_KEYS (see README, Privacy)
  help

Flags for every command:
  --actor NAME   who acts, for the audit log (default: the OS user)
  --json         machine-readable output

Configuration: DATABASE_URL (or PGLITE_DATA_DIR); UBILL_BASE_URL, UBILL_API_KEY and
UBILL_DEFAULT_BRAND_ID let set-sender check the brand against uBill's brand list.
Revocations, suspensions and sender changes reach running API instances within
API_KEY_CACHE_TTL_MS (default 2 s).`;

const COMMAND_FLAGS: Record<string, string[]> = {
  "create-live-key": ["project"],
  "revoke-key": ["key", "prefix", "project"],
  suspend: ["project", "reason"],
  reinstate: ["project", "reason"],
  "grant-credits": ["project", "amount", "reference"],
  "set-sender": ["project", "name", "brand-id"],
  "clear-sender": ["project"],
  show: ["project"],
  "rotate-keys": ["batch-size"],
  help: [],
};

const REQUIRED_FLAGS: Record<string, string[]> = {
  "create-live-key": ["project"],
  suspend: ["project"],
  reinstate: ["project"],
  "grant-credits": ["project", "amount"],
  "set-sender": ["project", "name"],
  "clear-sender": ["project"],
  show: ["project"],
};

export type OperatorCliResult = { exitCode: number; stdout: string[]; stderr: string[] };

export type OperatorCliOptions = {
  argv: string[];
  env: Env;
  db: Database;
  /** Used when --actor is not given (the OS user). */
  defaultActor: string;
  /** uBill's brand list; null when no live credentials are configured. */
  brands: SenderBrandDirectory | null;
  clock?: Clock;
};

export class UsageError extends Error {}

type Parsed = { command: string; flags: Record<string, string | undefined>; json: boolean; actor?: string };

/** Parses the command line; throws UsageError with a one-line message. */
export function parseOperatorArgs(argv: string[]): Parsed {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        project: { type: "string" },
        key: { type: "string" },
        prefix: { type: "string" },
        reason: { type: "string" },
        amount: { type: "string" },
        reference: { type: "string" },
        name: { type: "string" },
        "brand-id": { type: "string" },
        "batch-size": { type: "string" },
        actor: { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    throw new UsageError(`${(error as Error).message.split("\n")[0]}. Run 'npm run operator -- help'.`);
  }
  const { positionals, values } = parsed;
  const command = values.help ? "help" : (positionals[0] ?? "help");
  if (positionals.length > 1) throw new UsageError(`Unexpected argument '${positionals[1]}'.`);
  const allowed = COMMAND_FLAGS[command];
  if (!allowed) throw new UsageError(`Unknown command '${command}'. Run 'npm run operator -- help'.`);
  const flags: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(values)) {
    if (name === "json" || name === "actor" || name === "help") continue;
    if (!allowed.includes(name)) throw new UsageError(`'${command}' does not take --${name}.`);
    flags[name] = String(value);
  }
  for (const name of REQUIRED_FLAGS[command] ?? []) {
    if (flags[name] === undefined || flags[name] === "")
      throw new UsageError(`'${command}' needs --${name}.`);
  }
  return {
    command,
    flags,
    json: values.json === true,
    ...(typeof values.actor === "string" ? { actor: values.actor } : {}),
  };
}

function wholeNumber(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9]{1,15}$/.test(value)) throw new UsageError(`--${flag} must be a whole number.`);
  return Number(value);
}

const ts = (date: Date | null) => (date ? formatTimestamp(date) : "-");

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

function toJson(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/** Runs one command. Never throws for bad input: a one-line error and a non-zero exit code instead. */
export async function runOperatorCli(options: OperatorCliOptions): Promise<OperatorCliResult> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  let parsed: Parsed;
  try {
    parsed = parseOperatorArgs(options.argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    return { exitCode: 2, stdout, stderr: [`operator: ${error.message}`] };
  }
  const { command, flags, json } = parsed;
  if (command === "help") return { exitCode: 0, stdout: [USAGE], stderr };

  const deps: OperatorDeps = {
    prisma: options.db.prisma,
    clock: options.clock ?? systemClock,
    actor: parsed.actor ?? options.defaultActor,
  };
  const ttl = options.env.API_KEY_CACHE_TTL_MS;
  const refused = (refusal: OperatorRefusal): OperatorCliResult => {
    if (json) stdout.push(toJson({ ok: false, command, code: refusal.code, message: refusal.message }));
    stderr.push(`operator: ${refusal.message.replace(/\s+/g, " ")}`);
    return { exitCode: 1, stdout, stderr };
  };
  const done = (data: Record<string, unknown>, human: string[]): OperatorCliResult => {
    if (json) stdout.push(toJson({ ok: true, command, ...data }));
    else stdout.push(...human);
    return { exitCode: 0, stdout, stderr };
  };

  try {
    switch (command) {
      case "create-live-key": {
        const result = await createLiveKey({ ...deps, projectId: flags.project ?? "" });
        if (!result.ok) return refused(result);
        return done(
          {
            project_id: result.projectId,
            key_id: result.keyId,
            prefix: result.prefix,
            api_key: result.apiKey,
          },
          [
            `Created live key ${result.keyId} (${result.prefix}…) for project ${result.projectId}.`,
            "",
            `  ${result.apiKey}`,
            "",
            "This is the only time the key is shown: hand it over securely now. Only its hash is stored.",
          ],
        );
      }
      case "revoke-key": {
        const result = await revokeApiKey({
          ...deps,
          ...(flags.key !== undefined ? { keyId: flags.key } : {}),
          ...(flags.prefix !== undefined ? { prefix: flags.prefix } : {}),
          ...(flags.project !== undefined ? { projectId: flags.project } : {}),
        });
        if (!result.ok) return refused(result);
        return done(
          {
            key_id: result.keyId,
            project_id: result.projectId,
            mode: result.mode,
            prefix: result.prefix,
            revoked_at: formatTimestamp(result.revokedAt),
            already_revoked: result.alreadyRevoked,
          },
          [
            result.alreadyRevoked
              ? `Key ${result.keyId} (${result.prefix}…) of project ${result.projectId} was already revoked at ${ts(result.revokedAt)}; nothing changed.`
              : `Revoked ${result.mode} key ${result.keyId} (${result.prefix}…) of project ${result.projectId}.`,
            `Running API instances stop accepting it within ${ttl} ms (API_KEY_CACHE_TTL_MS).`,
          ],
        );
      }
      case "suspend":
      case "reinstate": {
        const run = command === "suspend" ? suspendProject : reinstateProject;
        const result = await run({
          ...deps,
          projectId: flags.project ?? "",
          ...(flags.reason !== undefined ? { reason: flags.reason } : {}),
        });
        if (!result.ok) return refused(result);
        const state = command === "suspend" ? "suspended" : "active";
        return done(
          {
            project_id: result.projectId,
            suspended_at: result.suspendedAt ? formatTimestamp(result.suspendedAt) : null,
            changed: result.changed,
          },
          [
            result.changed
              ? `Project ${result.projectId} is now ${state}.`
              : `Project ${result.projectId} was already ${state}; nothing changed.`,
            ...(result.changed
              ? [`Running API instances see it within ${ttl} ms (API_KEY_CACHE_TTL_MS).`]
              : []),
          ],
        );
      }
      case "grant-credits": {
        const amount = wholeNumber("amount", flags.amount) ?? 0;
        const result = await grantPaidCredits({
          ...deps,
          projectId: flags.project ?? "",
          amount,
          ...(flags.reference !== undefined ? { reference: flags.reference } : {}),
        });
        if (!result.ok) return refused(result);
        return done(
          {
            project_id: result.projectId,
            amount: result.amount,
            reference: result.reference,
            entry_id: result.entryId,
            balance: result.balance,
            already_granted: result.alreadyGranted,
          },
          [
            result.alreadyGranted
              ? `Reference ${result.reference} was already granted (${result.amount} credits, ${result.entryId}); nothing changed. Balance ${result.balance}.`
              : `Granted ${result.amount} paid credits to project ${result.projectId}. Balance ${result.balance}; the free-tier allowance no longer applies.`,
          ],
        );
      }
      case "set-sender": {
        const brandId = wholeNumber("brand-id", flags["brand-id"]);
        const result = await setProjectSender({
          ...deps,
          projectId: flags.project ?? "",
          name: flags.name ?? "",
          ...(brandId !== undefined ? { brandId } : {}),
          brands: options.brands,
        });
        if (!result.ok) return refused(result);
        return done(
          {
            project_id: result.projectId,
            sender: result.sender,
            brand_id: result.brandId,
            validated: result.validated,
            changed: result.changed,
          },
          [
            result.changed
              ? `Project ${result.projectId} now sends as ${result.sender} (uBill brand ${result.brandId}).`
              : `Project ${result.projectId} already sends as ${result.sender} (uBill brand ${result.brandId}); nothing changed.`,
            result.validated
              ? "The brand is approved in uBill's brand list."
              : "Not checked against uBill (no UBILL_* credentials configured): make sure the brand id is right.",
          ],
        );
      }
      case "clear-sender": {
        const result = await clearProjectSender({ ...deps, projectId: flags.project ?? "" });
        if (!result.ok) return refused(result);
        return done({ project_id: result.projectId, changed: result.changed }, [
          result.changed
            ? `Project ${result.projectId} now sends under the shared default sender.`
            : `Project ${result.projectId} already used the shared default sender; nothing changed.`,
        ]);
      }
      case "rotate-keys": {
        const batchSize = wholeNumber("batch-size", flags["batch-size"]) ?? 500;
        if (batchSize < 1 || batchSize > 10_000) throw new UsageError("--batch-size must be 1 to 10000.");
        const spec = options.env.MESSAGE_ENCRYPTION_KEYS;
        if (!spec) {
          throw new UsageError(
            "rotate-keys needs MESSAGE_ENCRYPTION_KEYS: the new key first, then every old key.",
          );
        }
        let keyring: Keyring;
        try {
          keyring = parseKeyring(spec);
        } catch (error) {
          // Its message names the problem, never the key material.
          if (error instanceof KeyringError) throw new UsageError(error.message);
          throw error;
        }
        if (!ACTOR_PATTERN.test(deps.actor))
          throw new UsageError("--actor must be 1-64 letters, digits or ._@+-");
        const counts = await rotateMessageKeys({
          prisma: deps.prisma,
          keyring,
          batchSize,
          now: deps.clock.now(),
        });
        // Counts and key ids only: never key material.
        await writeAuditEntry(deps.prisma, {
          actor: deps.actor,
          action: "message_keys.rotated",
          projectId: null,
          details: { current_key_id: keyring.currentKeyId, ...counts },
          now: deps.clock.now(),
        });
        const result = done({ current_key_id: keyring.currentKeyId, ...counts }, [
          `Re-encrypted ${counts.rotated} message(s) under key ${keyring.currentKeyId}.`,
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
        ]);
        return counts.failed > 0 ? { ...result, exitCode: 1 } : result;
      }
      case "show": {
        const result = await describeProject({
          ...deps,
          projectId: flags.project ?? "",
          freeTierDailySegments: options.env.FREE_TIER_DAILY_SEGMENTS,
        });
        if (!result.ok) return refused(result);
        return done(
          {
            project: {
              id: result.project.id,
              created_at: formatTimestamp(result.project.createdAt),
              claimed_at: result.project.claimedAt ? formatTimestamp(result.project.claimedAt) : null,
              account_id: result.project.accountId,
              suspended_at: result.project.suspendedAt ? formatTimestamp(result.project.suspendedAt) : null,
              sender: result.project.sender,
              sender_brand_id: result.project.senderBrandId,
            },
            credits: {
              balance: result.credits.balance,
              ledger_sum: result.credits.ledgerSum,
              consistent: result.credits.consistent,
              has_paid_credits: result.credits.hasPaidCredits,
            },
            free_tier: {
              applies: result.freeTier.applies,
              limit: result.freeTier.limit,
              used_today: result.freeTier.usedToday,
              remaining_today: result.freeTier.remainingToday,
              reset_at: formatTimestamp(result.freeTier.resetAt),
            },
            keys: result.keys.map((key) => ({
              id: key.id,
              mode: key.mode,
              prefix: key.prefix,
              created_at: formatTimestamp(key.createdAt),
              revoked_at: key.revokedAt ? formatTimestamp(key.revokedAt) : null,
            })),
            messages: result.messages.map((row) => ({
              mode: row.mode,
              status: row.status,
              last_24h: row.last24h,
              last_7d: row.last7d,
            })),
          },
          describeLines(result, ttl),
        );
      }
    }
  } catch (error) {
    if (error instanceof UsageError) {
      if (json) stdout.push(toJson({ ok: false, command, code: "invalid_input", message: error.message }));
      return { exitCode: 2, stdout, stderr: [`operator: ${error.message}`] };
    }
    throw error;
  }
  return { exitCode: 2, stdout, stderr: [`operator: Unknown command '${command}'.`] };
}
