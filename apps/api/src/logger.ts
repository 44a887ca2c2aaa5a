// The one pino logger. Redaction and the error serializer are configured here
// and nowhere else; logger.test.ts tests them, and the privacy suites scan
// everything the service logs for the values that must never appear there:
// message text, full numbers, provider ids and raw statuses, API keys, claim
// tokens, credentials and key material.
//
// Three layers, because pino's own path-based `redact` only reaches the levels
// it is told about (`*.to` stops one level down) and never looks inside text:
//   1. `formatters.log` walks every logged object, at any depth: a value under
//      a sensitive field name becomes "[redacted]", an Error (under any name)
//      becomes serializeError(…), bytes (ciphertexts) become a length.
//   2. `hooks.logMethod` scrubs the message argument, and stops pino from using
//      a raw error message as the line's message.
//   3. `hooks.streamWrite` scrubs the finished line once more for anything
//      that looks like a key, a claim link, a credential in a URL or a full
//      Georgian number: a last net for free text nobody thought of.
import { type DestinationStream, type Logger as PinoLogger, pino } from "pino";
import { fdDestination, LOG_SERVICE } from "./log-destination.ts";

/**
 * Field names whose values are never written, wherever they appear. Compared
 * case-insensitively with "-" and "_" ignored (`api_key` = `apiKey` = `API-KEY`).
 */
export const REDACTED_FIELDS = [
  // credentials and secrets
  "authorization",
  "proxyAuthorization",
  "cookie",
  "setCookie",
  "apiKey",
  "xApiKey",
  "key",
  "keys",
  "keyHash",
  "secret",
  "clientSecret",
  "password",
  "credentials",
  "token",
  "tokenHash",
  "accessToken",
  "refreshToken",
  "idToken",
  "codeVerifier",
  "nonce",
  "csrfToken",
  "claimToken",
  "claimUrl",
  "fingerprint",
  "messageEncryptionKeys",
  "encryptionKey",
  "ubillApiKey",
  "claimCookieSecret",
  "googleClientSecret",
  "githubClientSecret",
  "databaseUrl",
  // personal data
  "email",
  // message content and recipients
  "to",
  "recipient",
  "phone",
  "phoneNumber",
  "number",
  "numbers",
  "msisdn",
  "text",
  "body",
  "variables",
  "ciphertext",
  "recipientCiphertext",
  "textCiphertext",
  // the provider's view of a message
  "providerRef",
  "smsId",
  "statusId",
  "rawStatus",
  "providerStatus",
] as const;

const normalizeField = (name: string) => name.toLowerCase().replace(/[-_]/g, "");
const REDACTED = new Set<string>(REDACTED_FIELDS.map(normalizeField));
/** Field names seen → redacted or not: log lines reuse a few dozen names (bounded, for names from outside). */
const redactedByName = new Map<string, boolean>();
const MAX_NAMES_REMEMBERED = 1_000;
function isRedacted(field: string): boolean {
  let redacted = redactedByName.get(field);
  if (redacted === undefined) {
    redacted = REDACTED.has(normalizeField(field));
    if (redactedByName.size < MAX_NAMES_REMEMBERED) redactedByName.set(field, redacted);
  }
  return redacted;
}
const CENSOR = "[redacted]";
const MAX_DEPTH = 8;
const MAX_MESSAGE_LENGTH = 500;

/** Query parameters that carry secrets (uBill's `key`, OAuth's `code`, `state`, tokens). */
const SECRET_PARAMS =
  "key|api_key|apikey|token|access_token|id_token|refresh_token|code|code_verifier|state|client_secret";

/**
 * Patterns scrubbed from any text, including a finished log line. None of
 * them can match across or into a JSON quote or backslash, so scrubbing a
 * serialized line keeps it valid JSON.
 */
const SECRET_PATTERNS: Array<[RegExp, string]> = [
  [/sk_(test|live)_[A-Za-z0-9_-]+/g, "sk_$1_[redacted]"],
  [/(\bBearer\s+)[^\s"'\\,]+/gi, "$1[redacted]"],
  [new RegExp(`([?&#;](?:${SECRET_PARAMS})=)[^&\\s"'#\\\\]+`, "gi"), "$1[redacted]"],
  [/(\/claim\/)[A-Za-z0-9_-]{16,}/g, "$1[redacted]"],
  // user:password@ in a URL (a database URL, a proxy)
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@"'\\]+:)[^\s@/"'\\]+@/gi, "$1[redacted]@"],
  // a full Georgian number, with or without "+"
  [/(?<![\d+])\+?995\d{9}(?!\d)/g, "[number]"],
];

/** Extra patterns for error messages: driver errors quote parameters and URLs. */
const ERROR_TEXT_PATTERNS: Array<[RegExp, string]> = [
  // a URL keeps its origin only: paths carry provider ids, queries carry keys
  [/(https?:\/\/[^\s/?#"'\\]+)[/?#][^\s"'\\]*/gi, "$1/[path]"],
  [/\+?\d[\d\s().-]{7,}\d/g, "[number]"],
  [/'[^']*'|"[^"]*"|`[^`]*`/g, "[value]"],
];

const replaceAll = (text: string, patterns: Array<[RegExp, string]>) =>
  patterns.reduce((acc, [pattern, replacement]) => acc.replace(pattern, replacement), text);

/**
 * Matches wherever one of SECRET_PATTERNS might (a superset: case-insensitive,
 * prefixes only): most log lines hold none, and one pass rules out all six.
 */
const MAYBE_SECRET = new RegExp(
  `sk_(?:test|live)_|bearer\\s|[?&#;](?:${SECRET_PARAMS})=|/claim/|://|995\\d{9}`,
  "i",
);

/** Removes keys, tokens, credentials in URLs and full numbers from text. */
export function scrubSecrets(text: string): string {
  return MAYBE_SECRET.test(text) ? replaceAll(text, SECRET_PATTERNS) : text;
}

/**
 * Scrubs free text from outside (an error message) harder: everything
 * scrubSecrets removes, plus URL paths and queries, long digit runs and any
 * quoted value, which is where a driver puts the parameter it complains about.
 */
export function scrubText(text: string): string {
  return replaceAll(scrubSecrets(text), ERROR_TEXT_PATTERNS);
}

/**
 * Errors are logged by type, code, a scrubbed message and stack frames only:
 * a driver error that quotes a parameter (a number, a key, a text) cannot leak
 * through the log. Extra fields (pg's `detail`, Prisma's `meta`) are dropped.
 */
export function serializeError(error: unknown, depth = 0): Record<string, unknown> {
  if (typeof error === "string")
    return { type: "string", message: scrubText(error).slice(0, MAX_MESSAGE_LENGTH) };
  if (!(error instanceof Error)) return { type: error === null ? "null" : typeof error };
  const code = (error as { code?: unknown }).code;
  // Only frame lines: a multi-line message (Prisma's are) is in the stack too.
  const frames = (error.stack ?? "")
    .split("\n")
    .filter((line) => /^\s+at\s/.test(line))
    .slice(0, 8)
    .join("\n");
  const nested = depth < 3;
  const errors = (error as { errors?: unknown }).errors;
  return {
    type: scrubText(String(error.name)).slice(0, 100),
    ...(typeof code === "string" || typeof code === "number"
      ? { code: scrubText(String(code)).slice(0, 64) }
      : {}),
    message: scrubText(error.message).slice(0, MAX_MESSAGE_LENGTH),
    ...(frames ? { stack: scrubText(frames) } : {}),
    ...(nested && error.cause !== undefined ? { cause: serializeError(error.cause, depth + 1) } : {}),
    ...(nested && Array.isArray(errors)
      ? { errors: errors.slice(0, 3).map((inner) => serializeError(inner, depth + 1)) }
      : {}),
  };
}

/**
 * The objects redactValue is inside of, outermost first: a value among them is
 * a cycle. At most MAX_DEPTH long, so a scan is cheaper than a WeakSet made for
 * every log line; redactValue is synchronous, so one stack serves every call.
 */
const ancestors: object[] = [];

/** A copy of `value` with sensitive fields censored and errors serialized, at any depth. */
export function redactValue(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== "object") return value;
  if (value instanceof Error) return serializeError(value);
  if (value instanceof Date) return value;
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return `[${value.byteLength} bytes]`;
  if (depth >= MAX_DEPTH) return "[too deep]";
  if (ancestors.includes(value)) return "[circular]";
  ancestors.push(value);
  try {
    if (Array.isArray(value)) return value.map((item) => redactValue(item, depth + 1));
    const out: Record<string, unknown> = {};
    for (const field in value) {
      if (!Object.hasOwn(value, field)) continue;
      const inner = (value as Record<string, unknown>)[field];
      if (isRedacted(field)) {
        out[field] = inner === null || inner === undefined ? inner : CENSOR;
      } else if ((field === "err" || field === "error") && typeof inner === "string") {
        out[field] = scrubText(inner).slice(0, MAX_MESSAGE_LENGTH);
      } else {
        out[field] = redactValue(inner, depth + 1);
      }
    }
    return out;
  } finally {
    ancestors.pop();
  }
}

export type AppLogger = PinoLogger;

export function createLogger(options: { level: string; destination?: DestinationStream }): AppLogger {
  return pino(
    {
      level: options.level,
      base: { service: LOG_SERVICE },
      timestamp: pino.stdTimeFunctions.isoTime,
      messageKey: "msg",
      // Errors are already serialized by formatters.log; pino's default `err`
      // serializer would otherwise re-read them.
      serializers: { err: (value: unknown) => value },
      formatters: {
        level: (label) => ({ level: label }),
        bindings: (bindings) => redactValue(bindings) as Record<string, unknown>,
        log: (object) => redactValue(object) as Record<string, unknown>,
      },
      hooks: {
        logMethod(args, method) {
          const [first, ...rest] = args as unknown[];
          let merge: unknown = first;
          let messages = rest;
          if (typeof first === "string") {
            merge = undefined;
            messages = args as unknown[];
          } else if (first instanceof Error) {
            merge = { err: first };
          }
          // Given no message, pino would use the raw error message.
          const err = (merge as { err?: unknown } | undefined)?.err;
          if (messages.length === 0 && err instanceof Error) messages = [scrubText(err.message)];
          const scrubbed = messages.map((part) => (typeof part === "string" ? scrubSecrets(part) : part));
          const final = merge === undefined ? scrubbed : [merge, ...scrubbed];
          return (method as (...parts: unknown[]) => void).apply(this, final);
        },
        streamWrite: scrubSecrets,
      },
    },
    options.destination ?? fdDestination(),
  );
}
