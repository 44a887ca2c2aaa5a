// The send's vocabulary: what it needs (deps, store), what it is given, what
// it answers, and what passes between its steps (send-message.ts).
import type { Keyring } from "@sms/crypto";
import type { Locale } from "@sms/templates";
import type { AuthenticatedProject, KeyMode } from "../../model/keys.ts";
import type { LimitState, RecipientAllowance } from "../../model/limits.ts";
import type { MessageResource } from "../../model/message.ts";
import type { Clock, Logger, Timer } from "../../ports.ts";
import type { SmsProvider } from "../../provider.ts";
import type { Slots } from "../../slots.ts";
import type {
  IdempotencyStore,
  LedgerStore,
  LimitStore,
  MessageStore,
  PriorRecord,
  QueuedMessage,
} from "../../store/index.ts";
import type { AnsweredKeys } from "../answered-keys.ts";
import type { ProjectRefusals } from "./project-refusals.ts";

export type SendMessageRequest = {
  to: string;
  template: string;
  variables: unknown;
  locale?: Locale;
};

/** The statements a send uses, inside and outside its transactions. */
export type SendMessageTx = {
  messages: Pick<MessageStore, "insertQueuedLive" | "recordOutcome" | "releaseUnsent">;
  limits: Pick<LimitStore, "consume" | "consumeMany" | "read" | "release">;
  ledger: Pick<LedgerStore, "reserve" | "reserveCountedAndCommit" | "refund">;
};
export type SendMessageStore = {
  idempotency: Pick<IdempotencyStore, "find" | "claimCounted" | "releaseClaim" | "releaseAbandoned">;
  messages: Pick<
    MessageStore,
    | "claimAnswered"
    | "insertAnswered"
    | "recordOutcome"
    | "releaseUnsent"
    | "read"
    | "flushCommitted"
    | "writeAheadPaid"
  >;
  transaction<T>(work: (tx: SendMessageTx) => Promise<T>): Promise<T>;
};

export type SendMessageDeps = {
  store: SendMessageStore;
  keyring: Keyring;
  clock: Clock;
  /** Real time for the bounded waits (default: the system's). */
  timer?: Timer;
  providers: { test: SmsProvider; live: SmsProvider | null };
  /** This instance's answered keys (answered-keys.ts): replays it knows skip the database. */
  answered?: AnsweredKeys;
  /**
   * The projects whose live sends go straight to the write-ahead transaction this minute
   * (project-refusals.ts). Without it every live send tries the one statement first.
   */
  projectRefusals?: ProjectRefusals;
  /**
   * Told how long each step of a new send took, and the key's mode: a live send's steps wait on uBill
   * and on the live slots, a test send's do not (metrics: bench/log/2026-11-25.md#where-the-tail-comes-from).
   */
  observe?: (phase: SendPhase, ms: number, mode: KeyMode) => void;
  /**
   * Live sends' share of the database pool: a live send's write-ahead
   * transaction runs in a slot, and a burst beyond them waits here, holding
   * no connection (bench/README.md#live-path-under-a-slow-provider).
   * Without it they queue at the pool with everything else.
   */
  liveSlots?: Slots;
  /**
   * The live provider's places (send-message.ts): a slow provider ties up at most `admitted.size` live
   * sends (and their share of the machine) at once. Without it the clients' connections are the only
   * bound.
   */
  liveSubmissions?: LivePlaces;
  config: {
    messagesPerMinute: number;
    /**
     * Live messages of a project to one number: per minute (refused as
     * `rate_limited`) and per UTC day (refused as `daily_limit_reached`).
     */
    recipientLimits: { perMinute: number; perDay: number };
    freeTierDailySegments: number;
    defaultSender: string;
    /** When a test message's first status check is due, after submission. */
    simulatorDelayMs: number;
    /**
     * How long a duplicate waits for the first request with its key to
     * answer: the provider's submit deadline plus a statement's.
     */
    inFlightWaitMs: number;
    /** How long recording the provider's answer is retried while the database is unavailable. */
    recordRetryMs: number;
    /** When a first request that never answered will have been settled by the recovery sweep. */
    unresolvedRetryAfterMs: number;
  };
};

/**
 * A live send takes one of `admitted` before its write-ahead (waiting for it, it holds nothing), and one of
 * `places` for its call to the provider only. `admitted` has room for every place and for a few sends
 * more, written ahead and ready for the next place that comes free, so that a place goes from one call
 * to the next without a write-ahead in between. A send that has waited `waitMs` in all, for either, is
 * answered `provider_unavailable`: before its write-ahead with nothing written, after it released (the
 * message removed, the credit refunded, the key given back), never sent.
 */
export type LivePlaces = { places: Slots; admitted: Slots; waitMs: number };

/** The steps of a new send, as send-message.ts names them (`queue`: a live send's wait for a place at the provider). */
export type SendPhase = "prepare" | "queue" | "write_ahead" | "submit" | "record";

export type SendMessageInput = {
  project: AuthenticatedProject;
  mode: KeyMode;
  keyId: string;
  idempotencyKey: string;
  request: SendMessageRequest;
  /** The request's logger (carries its request id). */
  logger: Logger;
  /**
   * The request's identity for idempotency when it is not the message body
   * (a verification's start: its code differs on every request). Default:
   * canonicalRequest(request, locale).
   */
  identity?: string;
  /**
   * Called once the key is claimed (and a live send's queued message is
   * durable), before the provider is contacted: a verification writes its row
   * here, so no code reaches a phone without it.
   */
  beforeSubmit?: (messageId: string) => Promise<void>;
};

export type SendMessageResult =
  /**
   * A new submission attempt (201); `rateLimit` is the per-minute window after it; `recipient` (test
   * keys) what a live key would have left for this number.
   */
  | {
      ok: true;
      replayed: false;
      message: MessageResource;
      rateLimit: LimitState;
      recipient?: RecipientAllowance;
    }
  /** The key's first answer, unchanged (200); a duplicate in flight waited for it. */
  | { ok: true; replayed: true; message: MessageResource }
  /** The templates package's verdict; `detail` is its caller-facing sentence naming the variable. */
  | { ok: false; code: "invalid_template" | "invalid_variables"; detail: string }
  /** The key belongs to a different request. */
  | { ok: false; code: "idempotency_key_reused" }
  /**
   * The first request with this key gave no answer within the wait (it
   * crashed, or the database kept it from recording one): retry after
   * `retryAfterMs`, when the recovery sweep will have settled it.
   */
  | { ok: false; code: "first_request_unresolved"; retryAfterMs: number }
  /** The project's per-minute limit, or a per-recipient limit (`subject`): nothing sent. */
  | { ok: false; code: "rate_limited"; subject: "project" | "recipient"; limit: LimitState }
  /**
   * A daily cap: the free tier's live segments, the live messages of the
   * project to this recipient, or the project's daily credit cap (`subject`;
   * for the credit cap `limit.limit` is the cap). Nothing sent; it resets at
   * midnight UTC.
   */
  | {
      ok: false;
      code: "daily_limit_reached";
      subject: "free_tier" | "recipient" | "credit_cap";
      limit: LimitState;
    }
  | { ok: false; code: "insufficient_credits" }
  /** The provider was not reached: nothing sent, the key released. */
  | { ok: false; code: "provider_unavailable" };

export type Refusal = Extract<SendMessageResult, { ok: false }>;

/** Everything about the message that is known before anything is written. */
export type Draft = {
  queued: QueuedMessage;
  to: string;
  text: string;
  sender: { name: string; brandId: number | null };
  provider: SmsProvider | null;
  /** The keyed fingerprint naming this recipient's counters (a live send's limits, a test send's tally). */
  recipient: string;
};

/** The write-ahead's result for the request that claimed the key. */
export type Claimed = {
  freeTierSegments: number;
  rateLimit: LimitState;
  /**
   * The counter windows the write-ahead moved by one, in the order it took
   * them (the recipient's, then the project's minute): a send proven unsent gives
   * each back (live sends; a test send's claim is released on its own).
   */
  counted: Array<{ bucket: string; start: Date }>;
  /** A test send's recipient, as a live key's per-number limits would see it (RecipientAllowance). */
  recipient?: RecipientAllowance;
};

/** Another request holds the key: its record (null: look it up). */
export type Taken = { taken: true; prior: PriorRecord | null };
