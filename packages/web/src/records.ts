// What the pages read from the procedures: the fields each view shows, as
// plain types. The app's procedures return at least these (their outputs are
// wider); the compiler checks that where the app implements the port.
// Timestamps are ISO 8601 strings in UTC.
import type { DashboardViewer, KeyMode, MessageStatus, VerificationStatus } from "@sms/domain";

export type Refusal = { ok: false; code: string; message: string };
export type Result<T> = ({ ok: true } & T) | Refusal;
type Cursor = { cursor?: string };
type Paged = { next: string | null };

export type ProjectRecord = {
  id: string;
  /** What the owner calls it; null: not named. */
  name: string | null;
  created_at: string;
  claimed_at: string | null;
  suspended_at: string | null;
  sender: string | null;
  sender_brand_id: number | null;
  credit_balance: number;
};
export type KeyRecord = {
  id: string;
  mode: KeyMode;
  prefix: string;
  /** What the owner called it at creation (older keys: none). */
  name?: string | null;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
};
export type NewKey = { id: string; mode: KeyMode; prefix: string; api_key: string };
export type CreditsRecord = {
  balance: number;
  ledger_sum: number;
  consistent: boolean;
  has_paid_credits: boolean;
};
export type FreeTier = { applies: boolean; limit: number; used_today: number; reset_at: string };
export type LedgerRecord = {
  id: string;
  kind: string;
  amount: number;
  message_id: string | null;
  note: string | null;
  created_at: string;
  /** false: the message was never kept (refunded, not sent): shown without a link. */
  message_kept?: boolean;
};
export type SenderRequestRecord = {
  id: string;
  project_id: string;
  name: string;
  purpose: string;
  status: "pending" | "approved" | "refused";
  requested_by: string;
  decided_at: string | null;
  refusal_reason: string | null;
  created_at: string;
};
export type MessageRow = {
  id: string;
  mode: KeyMode;
  to: string;
  template: string;
  status: MessageStatus;
  segments: number | null;
  error_code: string | null;
  created_at: string;
  updated_at: string;
};
export type MessageDetail = MessageRow & {
  locale: string;
  sender: string;
  encoding: string | null;
  error_message: string | null;
  credits_reserved: number;
  text_purged_at: string | null;
};
export type AuditRecord = {
  id: string;
  actor: string;
  action: string;
  project_id: string | null;
  details: Record<string, unknown>;
  created_at: string;
};

export type ProjectsList = {
  projects: Array<ProjectRecord & { messages_today: number; pending_sender: string | null }>;
} & Paged;
export type Overview = {
  project: ProjectRecord;
  credits: CreditsRecord;
  free_tier: FreeTier;
  pending_sender_request: SenderRequestRecord | null;
  messages_today: number;
};
export type Usage = {
  days: Array<{ day: string; by_status: Partial<Record<MessageStatus, number>>; segments: number }>;
  totals: { messages: number; segments: number };
  delivery_rate: number | null;
  /** Per mode, whatever the page filters: the live rate without the simulator's failures. */
  delivery_rate_by_mode: Record<KeyMode, number | null>;
};
export type KeysList = { project: ProjectRecord; keys: KeyRecord[] } & Paged;
export type MessagesList = { messages: MessageRow[] } & Paged;
/** One verification in the log (issue 22): never its code. */
export type VerificationRow = {
  id: string;
  mode: KeyMode;
  to: string;
  status: VerificationStatus;
  attempts_used: number;
  message_id: string;
  created_at: string;
  approved_at: string | null;
};
export type VerificationsList = { verifications: VerificationRow[] } & Paged;
/** Approved ÷ started per UTC day for the last 30 days, and the median time to approve. */
export type VerificationConversion = {
  days: Array<{ day: string; started: number; approved: number; rate: number | null }>;
  started: number;
  approved: number;
  conversion_rate: number | null;
  median_seconds_to_approve: number | null;
};
export type MessageFound = {
  message: MessageDetail;
  timeline: Array<{ status: MessageStatus; error_code: string | null; at: string }>;
  ledger: LedgerRecord[];
};
export type CreditsPage = { credits: CreditsRecord; free_tier: FreeTier; ledger: LedgerRecord[] } & Paged;
export type SenderPage = { project: ProjectRecord; requests: SenderRequestRecord[] };
export type MessageFilters = {
  status?: MessageStatus;
  mode?: KeyMode;
  template?: string;
  from?: string;
  to?: string;
};

export type RequestRow = {
  id: string;
  method: string;
  route: string;
  status: number;
  error_code: string | null;
  idempotency_key: string | null;
  replayed: boolean;
  duration_ms: number;
  mode: KeyMode | null;
  key_prefix: string | null;
  key_name: string | null;
  message_id: string | null;
  verification_id: string | null;
  created_at: string;
};
export type RequestsList = { requests: RequestRow[] } & Paged;
export type RequestFilters = {
  status_class?: "2xx" | "4xx" | "5xx";
  error_code?: string;
  route?: string;
  mode?: KeyMode;
  from?: string;
  to?: string;
};
export type SearchFound =
  | { kind: "message" | "verification" | "request"; id: string }
  | { kind: "idempotency_key"; requests: RequestRow[] }
  | { kind: "not_found" }
  /** The query held a whole API key: not searched for, and never written back. */
  | { kind: "whole_key_given" };
export type Onboarding = {
  done: boolean;
  test_sent: boolean;
  delivered: boolean;
  live_key: boolean;
  live_sent: boolean;
};
export type Spending = {
  /** The project's name, for every project page's header. */
  project_name: string | null;
  credit_balance: number;
  daily_credit_cap: number | null;
  used_today: number;
  low_balance_threshold: number | null;
  low_balance: boolean;
  daily_rate: number;
  days_left: number | null;
};

export type FoundProjects = {
  projects: Array<ProjectRecord & { account_id: string | null; account_email: string | null }>;
};
export type Described = {
  project: ProjectRecord & { account_id: string | null; daily_credit_cap: number | null };
  credits: CreditsRecord;
  free_tier: FreeTier;
  keys: KeyRecord[];
  messages: Array<{ mode: KeyMode; status: MessageStatus; last_24h: number; last_7d: number }>;
};
export type SenderRequests = { requests: SenderRequestRecord[] } & Paged;
export type AuditPage = { entries: AuditRecord[] } & Paged;

/** What a claim page may show about a project before it is claimed. */
export type ClaimSummary = {
  project_id: string;
  project_created_at: string;
  messages_sent: number;
  key_prefix: string | null;
  expires_at: string;
};
export type ClaimIdentity = { provider: string; subject: string; email: string | null; name: string | null };
export type ClaimRefusal =
  | { ok: false; code: "claimed_by_you"; project_id: string; account_id: string }
  | { ok: false; code: "used" | "expired" | "unknown" };

/** Who a live dashboard session belongs to. */
export type Viewer = DashboardViewer;

/**
 * The procedures the pages call, in-process, as the app's tRPC caller exposes
 * them (internal-router.ts): `pages.*` (claims, sessions, sign-in counting),
 * `dashboard.*` (the signed-in account's projects) and `operator.*`.
 * Expected outcomes are values (`ok: false` with a code); a read of a project
 * that is not the viewer's throws NOT_FOUND (the route kit answers 404).
 */
export type Procedures = {
  pages: {
    claims: {
      describe(input: {
        token: string;
        identity?: { provider: string; subject: string };
      }): Promise<{ ok: true; summary: ClaimSummary } | ClaimRefusal>;
      claim(input: {
        token: string;
        identity: ClaimIdentity;
      }): Promise<
        { ok: true; project_id: string; account_id: string; credits_granted: number } | ClaimRefusal
      >;
    };
    sessions: {
      start(input: { identity: { provider: string; subject: string; name: string | null } }): Promise<{
        token: string;
        expires_at: string;
      }>;
      resume(input: {
        token: string;
      }): Promise<{ ok: true; viewer: Viewer } | { ok: false; code: "no_session" }>;
      end(input: { token: string }): Promise<{ ended: boolean }>;
      /** Every session of the viewer's identity and account ("sign out everywhere"). */
      endAll(): Promise<{ ended: number }>;
    };
    signIns: {
      /** One sign-in start from this request's network (CLAIM_SIGN_INS_PER_MINUTE). */
      count(): Promise<{ ok: true } | { ok: false; retry_after_seconds: number }>;
    };
  };
  dashboard: {
    projects: {
      list(input: Cursor): Promise<ProjectsList>;
      get(input: { project_id: string }): Promise<Overview>;
      usage(input: { project_id: string; mode?: KeyMode }): Promise<Usage>;
      spending(input: { project_id: string }): Promise<Spending>;
      onboarding(input: { project_id: string }): Promise<Onboarding>;
      setSpending(input: {
        project_id: string;
        daily_credit_cap: number | null;
        low_balance_threshold: number | null;
      }): Promise<Result<{ spending: Spending }>>;
      setName(input: { project_id: string; name: string }): Promise<Result<{ project: ProjectRecord }>>;
    };
    requests: {
      list(input: { project_id: string } & RequestFilters & Cursor): Promise<RequestsList>;
      get(input: { project_id: string; request_id: string }): Promise<{ request: RequestRow }>;
    };
    search(input: { project_id: string; query: string }): Promise<SearchFound>;
    keys: {
      list(input: { project_id: string } & Cursor): Promise<KeysList>;
      get(input: { project_id: string; key_id: string }): Promise<Result<{ key: KeyRecord }>>;
      createLive(input: { project_id: string; name?: string }): Promise<Result<{ key: NewKey }>>;
      revoke(input: { project_id: string; key_id: string }): Promise<Result<{ already_revoked: boolean }>>;
      rollTest(input: {
        project_id: string;
      }): Promise<Result<{ key: NewKey; revoked: Array<{ prefix: string }> }>>;
    };
    credits: { get(input: { project_id: string } & Cursor): Promise<CreditsPage> };
    messages: {
      list(input: { project_id: string } & MessageFilters & Cursor): Promise<MessagesList>;
      get(input: { project_id: string; message_id: string }): Promise<MessageFound>;
      requests(input: { project_id: string; message_id: string }): Promise<{ requests: RequestRow[] }>;
      sendTest(input: {
        project_id: string;
        idempotency_key: string;
        to: string;
        template: string;
        locale: string;
        variables: Record<string, string>;
      }): Promise<Result<{ message_id: string; status: string; replayed: boolean }>>;
    };
    sender: {
      get(input: { project_id: string }): Promise<SenderPage>;
      request(input: { project_id: string; name: string; purpose: string }): Promise<Result<object>>;
    };
    verifications: {
      list(input: { project_id: string } & Cursor): Promise<VerificationsList>;
      conversion(input: { project_id: string }): Promise<VerificationConversion>;
    };
  };
  operator: {
    projects: {
      find(input: { query: string }): Promise<Result<FoundProjects>>;
      get(input: { project_id: string }): Promise<Result<Described>>;
      suspend(input: { project_id: string; reason?: string }): Promise<Result<{ changed: boolean }>>;
      reinstate(input: { project_id: string; reason?: string }): Promise<Result<{ changed: boolean }>>;
      setDailyCreditCap(input: {
        project_id: string;
        cap: number | null;
      }): Promise<Result<{ daily_credit_cap: number | null }>>;
    };
    credits: {
      grant(input: {
        project_id: string;
        amount: number;
        reference?: string;
      }): Promise<Result<{ already_granted: boolean }>>;
    };
    keys: {
      createLive(input: { project_id: string }): Promise<Result<{ key: NewKey }>>;
      get(input: { project_id: string; key_id: string }): Promise<Result<{ key: KeyRecord }>>;
      revoke(input: {
        key_id: string;
        project_id?: string;
      }): Promise<Result<{ project_id: string; already_revoked: boolean }>>;
    };
    senderRequests: {
      list(input: Cursor): Promise<SenderRequests>;
      approve(input: { request_id: string; brand_id?: number }): Promise<Result<object>>;
      refuse(input: { request_id: string; reason: string }): Promise<Result<object>>;
    };
    audit: { list(input: { project_id?: string } & Cursor): Promise<Result<AuditPage>> };
  };
};
