// The MCP server's tools: what each one is called, what it tells an agent, the
// zod schema of its arguments (advertised by tools/list), and what it does.
// Every tool that touches the API calls the same tRPC procedure as its REST
// route, through a server-side caller with the MCP request's context
// (mcp.ts): the procedure authenticates, validates and answers exactly as it
// does over REST. The tools add nothing to the domain. Each tool also declares
// the shape of its result (outputSchema; the structured content matches it)
// and says the next step in a line an agent reads first.
import {
  CHECK_OUTCOME_STATUSES,
  checkVerificationMeta,
  createTestKeyMeta,
  getMessageMeta,
  getVerificationMeta,
  type Meta,
  RECIPIENT_PATTERN,
  sendMessageMeta,
  startVerificationMeta,
  type TVerification,
  VERIFICATION_CODE_LENGTH,
  VERIFICATION_MAX_ATTEMPTS,
  VERIFICATION_TEMPLATES,
  ZCreateTestKeyResponse,
  ZIdempotencyKey,
  ZMessage,
  ZVerification,
} from "@sms/contract";
import { formatTimestamp, MCP_SESSION_KEY_LIFETIME, type Timer } from "@sms/domain";
import { SIMULATOR_NUMBERS } from "@sms/provider-sim";
import { LOCALES, TEMPLATE_IDS, VARIABLE_RULES } from "@sms/templates";
import { z } from "zod";
import { POLLING } from "../docs/guide.ts";
import type { Caller } from "./caller.ts";
import { SIMULATOR_TABLE, templateCatalogue, ZSimulatorNumbers, ZTemplateCatalogue } from "./resources.ts";

/**
 * One procedure call's road: the caller, and the status and headers the
 * procedure chose for its answer (respond(): 201, or 200 with
 * Idempotent-Replayed) once it has answered.
 */
export type ToolCall = { api: Caller; answer(): { status: number; headers: Record<string, string> } };

/**
 * What a tool gets: calls on the procedures (with the MCP request's
 * Authorization, else the session's key, and the tool's idempotency_key),
 * and its MCP session.
 */
export type ToolContext = {
  call(options?: { idempotencyKey?: unknown }): ToolCall;
  timer: Timer;
  signal: AbortSignal;
  session: ToolSession;
  /**
   * Waiting for a change instead of polling (http/conditional-read.ts), when this instance hears change
   * notifications (PostgreSQL): a watch on an id, and a place among the instance's and the key's holds
   * (null: none free; poll instead). Absent: poll on spec 6's schedule.
   */
  holds?: {
    watch(id: string): { next(): Promise<void>; cancel(): void; stop(): void };
    enter(): (() => void) | null;
  };
};

/** The MCP session of a tool call (mcp.ts, session-key.ts). */
export type ToolSession = {
  /** True when the MCP request carries an Authorization header (which wins over the session's key). */
  hasAuthorization: boolean;
  /** Makes `apiKey` this session's key; null when the request is in no session (no Mcp-Session-Id). */
  bindKey(apiKey: string): Promise<{ expiresAt: Date } | null>;
};

/** A tool's answer: its structured result and the lines an agent reads first. */
export type ToolOutcome = { result: Record<string, unknown>; notes?: string[] };

export type Tool = {
  name: string;
  title: string;
  description: string;
  /** The arguments as advertised (tools/list). The procedures validate what they take. */
  input: z.ZodObject;
  /** A successful result's structured content (tools/list's outputSchema, with the error envelope). */
  output: z.ZodObject;
  /** The route whose procedure the tool calls: its input errors map to the same codes. */
  meta?: Meta;
  readOnly: boolean;
  run(args: Record<string, unknown>, context: ToolContext): Promise<ToolOutcome>;
};

/** The wait_for_message bounds, in seconds. */
export const WAIT_TIMEOUT = { defaultSeconds: 30, maxSeconds: 60 } as const;

const FINAL_STATUSES = new Set(["delivered", "undeliverable", "failed", "unknown"]);

/** The arguments of send_message as advertised: the REST body plus its idempotency_key. */
const ZSendMessageArguments = z.strictObject({
  to: z
    .string()
    .regex(RECIPIENT_PATTERN)
    .describe(
      "The recipient: exactly +9955 followed by eight digits (e.g. +995555123456), no spaces; never normalised. " +
        `With a test key, ${SIMULATOR_NUMBERS.rejected} to ${SIMULATOR_NUMBERS.undeliverable} simulate failures (list_templates).`,
    ),
  template: z.enum(TEMPLATE_IDS).describe("The built-in template (list_templates shows each one's text)."),
  variables: z
    .record(z.string(), z.string())
    .describe(
      `Exactly the template's variables, as strings: code (${VARIABLE_RULES.code.requirement}); ` +
        `password_reset_code also minutes (${VARIABLE_RULES.minutes.requirement}). E.g. {"code":"482913"}.`,
    ),
  locale: z.enum(LOCALES).optional().describe("ka (Georgian, the default) or en."),
  // The API's one rule (@sms/contract): 1–200 characters, counted as the REST header check counts them.
  idempotency_key: ZIdempotencyKey.describe(
    "Required. Generate a new UUID for each logical message and reuse the same value when you retry that message " +
      "(after a network error, internal_error, provider_unavailable or rate_limited): a retry then returns the " +
      "original message instead of sending twice. Never reuse it for a different message.",
  ),
});

const ZMessageId = z.string().describe("The message's id (msg_…), as send_message returned it.");

const ZSessionBinding = z
  .strictObject({
    bound: z
      .boolean()
      .describe(
        "true: from now on this key serves this MCP session's calls that carry no Authorization header, " +
          "without passing it anywhere. false: this request was in no MCP session.",
      ),
    expires_at: z
      .string()
      .nullable()
      .describe(
        `The latest the key serves this session (${MCP_SESSION_KEY_LIFETIME.maxMs / 3_600_000} hours); sooner after ` +
          `${MCP_SESSION_KEY_LIFETIME.idleMs / 60_000} minutes unused. null when not bound.`,
      ),
    idle_timeout_minutes: z.number().int(),
  })
  .describe("How the new key serves this MCP session.");

const createTestKey: Tool = {
  name: "create_test_key",
  title: "Create a test API key",
  description:
    "Creates a new project with a test API key (sk_test_…) and returns api_key, claim_url, expires_at, next_steps and " +
    "session. Needs no authentication and no account; test keys never send a real SMS and cost nothing. The key then " +
    "serves the rest of this MCP session (session.bound): call send_message and the other tools right away, without " +
    "passing the key (no tool takes it). An Authorization header configured on this MCP server wins over it. Tell your " +
    "human: give them claim_url (they open it in a browser to claim the project: free credits, live keys) and api_key, " +
    "which is shown only once, to keep as a secret for later sessions (as this server's Authorization: Bearer header).",
  input: z.strictObject({}),
  output: ZCreateTestKeyResponse.extend({ session: ZSessionBinding }),
  meta: createTestKeyMeta,
  readOnly: false,
  async run(args, context) {
    parseArguments(this.input, args);
    const testKey = await context.call().api.testKeys.create();
    const bound = await context.session.bindKey(testKey.api_key);
    const session = {
      bound: bound !== null,
      expires_at: bound ? formatTimestamp(bound.expiresAt) : null,
      idle_timeout_minutes: MCP_SESSION_KEY_LIFETIME.idleMs / 60_000,
    };
    return {
      result: { ...testKey, session },
      notes: [
        bound
          ? context.session.hasAuthorization
            ? "This key is bound to this MCP session, but this server sends an Authorization header, which wins: " +
              "the tools keep using the configured key."
            : `This key now serves this MCP session until ${session.expires_at} (or ${session.idle_timeout_minutes} ` +
              "minutes unused): call send_message, start_verification and the other tools now, without passing it."
          : "This request is in no MCP session: configure api_key as 'Authorization: Bearer <api_key>' on this MCP server.",
        `Tell your human: open claim_url in a browser to claim the project before ${testKey.expires_at} ` +
          `(${testKey.claim_url}); and keep api_key as a secret (it is not shown again) to configure it as this ` +
          "server's Authorization header for later sessions.",
      ],
    };
  },
};

const sendMessage: Tool = {
  name: "send_message",
  title: "Send a templated SMS",
  description:
    "Sends one templated SMS (verification, sign-in or password-reset code) to a Georgian mobile number and returns the " +
    "message (id, status, masked recipient; never the text). Needs an API key: this session's from create_test_key, or " +
    "the Authorization header of this MCP server. idempotency_key is required: generate a UUID per logical send and reuse it on every retry of that send. " +
    "status submitted means accepted, not delivered: call wait_for_message with the id. A result with status unknown " +
    "may have been sent: do not retry it. Errors carry the API's code, message and request_id.",
  input: ZSendMessageArguments,
  output: z.strictObject({
    message: ZMessage,
    replayed: z
      .boolean()
      .describe("true: an earlier send with this idempotency_key; nothing was sent again."),
  }),
  meta: sendMessageMeta,
  readOnly: false,
  async run(args, context) {
    const { idempotency_key: idempotencyKey, ...request } = args;
    // The procedure validates the body (and the key) as over REST.
    const call = context.call({ idempotencyKey });
    const message = await call.api.messages.send(request as never);
    const replayed = call.answer().headers["Idempotent-Replayed"] === "true";
    return {
      result: { message, replayed },
      notes: replayed
        ? ["Replayed: this idempotency_key was already used for this message; nothing was sent again."]
        : [`Next: wait_for_message with message_id ${message.id}.`],
    };
  },
};

const getMessage: Tool = {
  name: "get_message",
  title: "Read a message",
  description:
    "Returns a message's current state (status, error, masked recipient, timestamps) by its id. Final statuses: " +
    "delivered, undeliverable, failed, unknown; queued and submitted change later (use wait_for_message to poll). " +
    "Needs the API key of the project that sent it (this session's, or the Authorization header).",
  input: z.strictObject({ message_id: ZMessageId }),
  output: z.strictObject({ message: ZMessage }),
  meta: getMessageMeta,
  readOnly: true,
  async run(args, context) {
    const message = await context.call().api.messages.get(args as never);
    return { result: { message } };
  },
};

/** The waits between reads, as spec 6 recommends: 2, 4, 8, 16, 30, 30, … s. */
export function* pollingDelaysMs(): Generator<number, never> {
  let delay = POLLING.firstDelaySeconds * 1000;
  for (;;) {
    yield delay;
    delay = Math.min(delay * POLLING.factor, POLLING.maxDelaySeconds * 1000);
  }
}

const ZWaitArguments = z.strictObject({
  message_id: ZMessageId,
  timeout_seconds: z
    .number()
    .int()
    .min(1)
    .max(WAIT_TIMEOUT.maxSeconds)
    .optional()
    .describe(
      `How long to wait at most (default ${WAIT_TIMEOUT.defaultSeconds}, at most ${WAIT_TIMEOUT.maxSeconds}). ` +
        "Test messages settle within about 30 s; live ones usually within seconds, sometimes minutes.",
    ),
});

const waitForMessage: Tool = {
  name: "wait_for_message",
  title: "Wait for a message's final status",
  description:
    `Reads the message first after ${POLLING.firstDelaySeconds} s, then waits at the server for its status to change ` +
    `(or, where the server cannot hold the wait, polls as the API recommends: the wait doubling, capped at ` +
    `${POLLING.maxDelaySeconds} s) until its status is final or timeout_seconds have passed, and returns the final or ` +
    "latest state with final: true or false. If final is false, call it again later. Needs the API key of the project " +
    "that sent the message (this session's, or the Authorization header).",
  input: ZWaitArguments,
  output: z.strictObject({
    message: ZMessage,
    final: z.boolean().describe("true: the status is final (delivered, undeliverable, failed, unknown)."),
    waited_seconds: z.number().int().describe("How long this call waited."),
    reads: z.number().int().describe("How many times it read the message."),
  }),
  meta: getMessageMeta,
  readOnly: true,
  async run(args, context) {
    const { message_id: messageId, timeout_seconds: timeoutSeconds } = parseArguments(ZWaitArguments, args);
    const budgetMs = (timeoutSeconds ?? WAIT_TIMEOUT.defaultSeconds) * 1000;
    const { api } = context.call();
    let waitedMs = 0;
    let reads = 0;
    // Watched from before the first read, so that no change after it is missed.
    const watch = context.holds?.watch(messageId);
    let leave: (() => void) | null = null;
    const delays = pollingDelaysMs();
    try {
      for (let first = true; ; first = false) {
        // After the first read, one wait at the server for the rest of the budget, when a hold is free.
        leave ??= first || !watch ? null : (context.holds?.enter() ?? null);
        if (watch && leave) {
          waitedMs += await waitForChange(context, watch, budgetMs - waitedMs);
        } else {
          // The last wait is cut to what is left, so that the budget ends with a read.
          const wait = Math.min(delays.next().value, budgetMs - waitedMs);
          await sleepUnlessAborted(context, wait);
          waitedMs += wait;
        }
        const message = await api.messages.get({ message_id: messageId });
        reads++;
        const final = FINAL_STATUSES.has(message.status);
        if (final || waitedMs >= budgetMs) {
          return {
            result: { message, final, waited_seconds: Math.round(waitedMs / 1000), reads },
            notes: final
              ? []
              : [
                  `Still ${message.status} after ${Math.round(waitedMs / 1000)} s: call wait_for_message again later.`,
                ],
          };
        }
      }
    } finally {
      leave?.();
      watch?.stop();
    }
  },
};

/** Waits for the watched message's next change or `ms`, whichever is first; returns how long it waited. */
async function waitForChange(
  context: ToolContext,
  watch: { next(): Promise<void>; cancel(): void },
  ms: number,
): Promise<number> {
  const startedAt = context.timer.monotonicMs();
  const woken = await Promise.race([
    watch.next().then(() => true),
    sleepUnlessAborted(context, ms).then(() => false),
  ]).finally(() => watch.cancel());
  return woken ? Math.min(ms, Math.max(0, context.timer.monotonicMs() - startedAt)) : ms;
}

async function sleepUnlessAborted(context: ToolContext, ms: number): Promise<void> {
  if (context.signal.aborted) throw context.signal.reason;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(context.signal.reason);
    context.signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    await Promise.race([context.timer.sleep(ms), aborted]);
  } finally {
    if (onAbort) context.signal.removeEventListener("abort", onAbort);
  }
}

const ZVerificationId = z
  .string()
  .describe("The verification's id (vrf_…), as start_verification returned it.");

const ZStartVerificationArguments = z.strictObject({
  to: z
    .string()
    .regex(RECIPIENT_PATTERN)
    .describe(
      "The phone to verify: exactly +9955 followed by eight digits, no spaces; never normalised. " +
        `With a test key, ${SIMULATOR_NUMBERS.rejected} to ${SIMULATOR_NUMBERS.undeliverable} simulate failures.`,
    ),
  template: z
    .enum(VERIFICATION_TEMPLATES)
    .optional()
    .describe("The SMS's wording: verification_code (default), login_code or password_reset_code."),
  locale: z.enum(LOCALES).optional().describe("ka (Georgian, the default) or en."),
  code_length: z
    .number()
    .int()
    .min(VERIFICATION_CODE_LENGTH.min)
    .max(VERIFICATION_CODE_LENGTH.max)
    .optional()
    .describe(
      `Digits in the code, ${VERIFICATION_CODE_LENGTH.min} to ${VERIFICATION_CODE_LENGTH.max} (default ${VERIFICATION_CODE_LENGTH.default}). A test key's code is that many zeros.`,
    ),
  idempotency_key: ZSendMessageArguments.shape.idempotency_key,
});

const startVerification: Tool = {
  name: "start_verification",
  title: "Send a verification code",
  description:
    "The service draws a one-time code and sends it by SMS to the phone; returns the verification (id, status, " +
    "expires_at, attempts_remaining, masked recipient; never the code). Needs an API key (this session's, or the " +
    "Authorization header). " +
    "idempotency_key is required: generate a UUID per logical send and reuse it on every retry of that send. Then ask " +
    "the user for the code they received and call check_verification. A new verification to the same phone cancels " +
    "the pending one; with the same template within its lifetime it re-sends the same code (its attempts left and " +
    "expires_at carry on), so check the newest id.",
  input: ZStartVerificationArguments,
  output: z.strictObject({
    verification: ZVerification,
    replayed: z
      .boolean()
      .describe("true: an earlier start with this idempotency_key; nothing was sent again."),
  }),
  meta: startVerificationMeta,
  readOnly: false,
  async run(args, context) {
    const { idempotency_key: idempotencyKey, ...request } = args;
    const call = context.call({ idempotencyKey });
    const verification = await call.api.verifications.start(request as never);
    const replayed = call.answer().headers["Idempotent-Replayed"] === "true";
    return {
      result: { verification, replayed },
      notes: [verificationNextStep(verification)],
    };
  },
};

/**
 * A check's outcome, in the REST words (docs/api-behaviour.md, "A check's outcome"): the status of the check's
 * `200` (CheckedVerification: approved, pending after a wrong code, max_attempts_reached). The fourth word,
 * verification_not_pending, is the `409`'s code: here the tool error's code, as for every REST error.
 */
const ZOutcome = z
  .enum(CHECK_OUTCOME_STATUSES)
  .describe(
    "The verification's status after the check, as REST names it: approved (let the user in), pending (a wrong " +
      "code; attempts_remaining left), max_attempts_reached (the last wrong code). An ended verification is the " +
      "tool error verification_not_pending instead.",
  );

/** What an agent does next about a verification in this state. */
export function verificationNextStep(
  verification: Pick<TVerification, "id" | "status" | "attempts_remaining">,
): string {
  const again = "start_verification with a new idempotency_key if the user still needs a code";
  switch (verification.status) {
    case "approved":
      return "Approved: the code is right. Let the user in. The verification is spent: do not check it again.";
    case "pending":
      return verification.attempts_remaining === VERIFICATION_MAX_ATTEMPTS
        ? `Next: ask the user for the code, then check_verification with verification_id ${verification.id}.`
        : `Wrong code: ${verification.attempts_remaining} attempt${verification.attempts_remaining === 1 ? "" : "s"} ` +
            `left; ask the user again, then check_verification with verification_id ${verification.id}. Do not let the user in.`;
    case "max_attempts_reached":
      return `Wrong code, and it was the last attempt (max_attempts_reached): do not let the user in; ${again}.`;
    case "expired":
      return `Expired: the code is no longer accepted; do not let the user in; ${again}.`;
    case "canceled":
      return "Canceled: a newer verification to this number replaced it; check the code against the newer one.";
    case "send_failed":
      return `send_failed: the SMS was rejected, so there is no code to check; ${again} (another number, or later).`;
  }
}

const checkVerification: Tool = {
  name: "check_verification",
  title: "Check a verification code",
  description:
    "Checks the code the user typed. The result's outcome is the verification's status, in the REST words: approved " +
    "(let the user in: only then), pending (a wrong code: the status stays pending with one attempt fewer), " +
    "max_attempts_reached (the fifth wrong code ends it). next_step says what to do. An expired, canceled or ended " +
    "verification is the tool error verification_not_pending: start a new one. An approved verification is spent: " +
    "checking it again is verification_not_pending whatever the code (read it with get_verification). Checking never " +
    "costs credits.",
  input: z.strictObject({
    verification_id: ZVerificationId,
    code: z.string().describe("Exactly what the user typed (1 to 16 characters)."),
  }),
  output: z.strictObject({
    verification: ZVerification,
    outcome: ZOutcome,
    approved: z.boolean().describe("true only when outcome is approved: the one case to let the user in."),
    next_step: z.string().describe("What to do next, as the first line of the result says."),
  }),
  meta: checkVerificationMeta,
  readOnly: false,
  async run(args, context) {
    const verification = await context.call().api.verifications.check(args as never);
    const nextStep = verificationNextStep(verification);
    return {
      result: {
        verification,
        outcome: verification.status,
        approved: verification.status === "approved",
        next_step: nextStep,
      },
      notes: [nextStep],
    };
  },
};

const getVerification: Tool = {
  name: "get_verification",
  title: "Read a verification",
  description:
    "Returns a verification's current state (status, attempts_remaining, expires_at, masked recipient; never the " +
    "code) and next_step. Needs the API key of the project that started it (this session's, or the Authorization header).",
  input: z.strictObject({ verification_id: ZVerificationId }),
  output: z.strictObject({
    verification: ZVerification,
    next_step: z.string().describe("What to do next about a verification in this status."),
  }),
  meta: getVerificationMeta,
  readOnly: true,
  async run(args, context) {
    const verification = await context.call().api.verifications.get(args as never);
    return { result: { verification, next_step: verificationNextStep(verification) } };
  },
};

const listTemplates: Tool = {
  name: "list_templates",
  title: "List templates and test numbers",
  description:
    "Lists the message templates (id, variables, their rules, the text in Georgian and English), the locales, the " +
    "recipient format, and the simulator numbers that make a test key answer as a failing provider would. Needs no " +
    "authentication.",
  input: z.strictObject({}),
  output: ZTemplateCatalogue.extend({ simulator_numbers: ZSimulatorNumbers }),
  readOnly: true,
  async run(args) {
    parseArguments(this.input, args);
    return {
      result: { ...templateCatalogue(), simulator_numbers: SIMULATOR_TABLE.map((row) => ({ ...row })) },
    };
  },
};

export const TOOLS: readonly Tool[] = [
  createTestKey,
  sendMessage,
  getMessage,
  waitForMessage,
  listTemplates,
  startVerification,
  checkVerification,
  getVerification,
];

/**
 * A tool's own arguments, checked against its schema; a failure throws the
 * ZodError, which mcp.ts answers as a procedure's input failure
 * (invalid_request, naming the field).
 */
function parseArguments<T extends z.ZodObject>(schema: T, args: Record<string, unknown>): z.output<T> {
  const parsed = schema.safeParse(args);
  if (!parsed.success) throw parsed.error;
  return parsed.data;
}
