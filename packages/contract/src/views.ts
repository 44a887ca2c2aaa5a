// What the pages (@sms/web) read from the procedures, under the names the
// views use: each a z.output (or, for what a page sends, a z.input) of the
// procedures' own schemas, so a field is declared once. `Procedures` is the
// shape of the in-process caller the app hands the pages (apps/api
// internal-router.ts); the compiler holds the two together where the app
// implements the port (apps/api src/web-port.ts). Timestamps are ISO 8601 UTC.
import type { z } from "zod";
import type * as dashboard from "./dashboard/procedures.ts";
import type {
  ZAuditEntry,
  ZCredits,
  ZFreeTier,
  ZKey,
  ZLedgerEntry,
  ZMessageDetail,
  ZMessageRow,
  ZNewKey,
  ZProject,
  ZRefusal,
  ZSenderRequest,
} from "./dashboard/records.types.ts";
import type * as operator from "./operator/operator.types.ts";
import type * as pages from "./pages/pages.types.ts";

type Out<S extends z.ZodType> = z.output<S>;
type Ok<S extends z.ZodType> = Extract<z.output<S>, { ok: true }>;
/** One procedure as the caller exposes it: its input schema's input, its output schema's output. */
type Call<I extends z.ZodType, O extends z.ZodType> = (input: z.input<I>) => Promise<z.output<O>>;
type CallWithoutInput<O extends z.ZodType> = () => Promise<z.output<O>>;
type Filters<S extends z.ZodType> = Omit<z.input<S>, "project_id" | "cursor">;

export type Refusal = Out<typeof ZRefusal>;
export type ProjectRecord = Out<typeof ZProject>;
export type KeyRecord = Out<typeof ZKey>;
export type NewKey = Out<typeof ZNewKey>;
export type CreditsRecord = Out<typeof ZCredits>;
export type FreeTier = Out<typeof ZFreeTier>;
export type LedgerRecord = Out<typeof ZLedgerEntry>;
export type SenderRequestRecord = Out<typeof ZSenderRequest>;
export type MessageRow = Out<typeof ZMessageRow>;
export type MessageDetail = Out<typeof ZMessageDetail>;
export type AuditRecord = Out<typeof ZAuditEntry>;

export type ProjectsList = Out<typeof dashboard.ZListProjectsResponse>;
export type Overview = Out<typeof dashboard.ZProjectOverviewResponse>;
export type Usage = Out<typeof dashboard.ZUsageResponse>;
export type KeysList = Out<typeof dashboard.ZListKeysResponse>;
export type MessagesList = Out<typeof dashboard.ZListMessagesResponse>;
/** One verification in the log (issue 22): never its code. */
export type VerificationRow = Out<typeof dashboard.ZVerificationRow>;
export type VerificationsList = Out<typeof dashboard.ZListVerificationsResponse>;
/** Approved ÷ started per UTC day for the last 30 days, and the median time to approve. */
export type VerificationConversion = Out<typeof dashboard.ZConversionResponse>;
export type MessageFound = Out<typeof dashboard.ZGetMessageResponse>;
export type CreditsPage = Out<typeof dashboard.ZCreditsResponse>;
export type SenderPage = Out<typeof dashboard.ZSenderResponse>;
export type MessageFilters = Filters<typeof dashboard.ZListMessagesRequest>;
export type RequestRow = Out<typeof dashboard.ZRequestRow>;
export type RequestsList = Out<typeof dashboard.ZListRequestsResponse>;
export type RequestFilters = Filters<typeof dashboard.ZListRequestsRequest>;
export type SearchFound = Out<typeof dashboard.ZSearchResponse>;
export type Onboarding = Out<typeof dashboard.ZOnboardingResponse>;
export type Spending = Out<typeof dashboard.ZSpending>;

export type FoundProjects = Ok<typeof operator.ZFindProjectsResponse>;
export type Described = Ok<typeof operator.ZDescribeProjectResponse>;
export type SenderRequests = Out<typeof operator.ZListSenderRequestsResponse>;
export type AuditPage = Ok<typeof operator.ZAuditResponse>;

/** What a claim page may show about a project before it is claimed. */
export type ClaimSummary = Ok<typeof pages.ZDescribeClaimResponse>["summary"];
export type ClaimIdentity = z.input<typeof pages.ZClaimIdentity>;
export type ClaimRefusal = Out<typeof pages.ZClaimRefusal>;
/** Who a live dashboard session belongs to. */
export type Viewer = Ok<typeof pages.ZResumeSessionResponse>["viewer"];

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
      describe: Call<typeof pages.ZDescribeClaimRequest, typeof pages.ZDescribeClaimResponse>;
      claim: Call<typeof pages.ZClaimRequest, typeof pages.ZClaimResponse>;
    };
    sessions: {
      start: Call<typeof pages.ZStartSessionRequest, typeof pages.ZStartSessionResponse>;
      resume: Call<typeof pages.ZSessionTokenRequest, typeof pages.ZResumeSessionResponse>;
      end: Call<typeof pages.ZSessionTokenRequest, typeof pages.ZEndSessionResponse>;
      /** Every session of the viewer's identity and account ("sign out everywhere"). */
      endAll: CallWithoutInput<typeof pages.ZEndAllSessionsResponse>;
    };
    signIns: {
      /** One sign-in start from this request's network (CLAIM_SIGN_INS_PER_MINUTE). */
      count: CallWithoutInput<typeof pages.ZCountSignInResponse>;
    };
  };
  dashboard: {
    projects: {
      list: Call<typeof dashboard.ZListProjectsRequest, typeof dashboard.ZListProjectsResponse>;
      get: Call<typeof dashboard.ZProjectRequest, typeof dashboard.ZProjectOverviewResponse>;
      usage: Call<typeof dashboard.ZUsageRequest, typeof dashboard.ZUsageResponse>;
      spending: Call<typeof dashboard.ZSpendingRequest, typeof dashboard.ZSpendingResponse>;
      onboarding: Call<typeof dashboard.ZSpendingRequest, typeof dashboard.ZOnboardingResponse>;
      setSpending: Call<typeof dashboard.ZSetSpendingRequest, typeof dashboard.ZSetSpendingResponse>;
      setName: Call<typeof dashboard.ZSetProjectNameRequest, typeof dashboard.ZSetProjectNameResponse>;
    };
    requests: {
      list: Call<typeof dashboard.ZListRequestsRequest, typeof dashboard.ZListRequestsResponse>;
      get: Call<typeof dashboard.ZGetRequestRequest, typeof dashboard.ZGetRequestResponse>;
    };
    search: Call<typeof dashboard.ZSearchRequest, typeof dashboard.ZSearchResponse>;
    keys: {
      list: Call<typeof dashboard.ZListKeysRequest, typeof dashboard.ZListKeysResponse>;
      get: Call<typeof dashboard.ZGetKeyRequest, typeof dashboard.ZGetKeyResponse>;
      createLive: Call<typeof dashboard.ZCreateLiveKeyRequest, typeof dashboard.ZCreateLiveKeyResponse>;
      revoke: Call<typeof dashboard.ZRevokeKeyRequest, typeof dashboard.ZRevokeKeyResponse>;
      rollTest: Call<typeof dashboard.ZRollTestKeyRequest, typeof dashboard.ZRollTestKeyResponse>;
    };
    credits: { get: Call<typeof dashboard.ZCreditsRequest, typeof dashboard.ZCreditsResponse> };
    messages: {
      list: Call<typeof dashboard.ZListMessagesRequest, typeof dashboard.ZListMessagesResponse>;
      get: Call<typeof dashboard.ZGetMessageRequest, typeof dashboard.ZGetMessageResponse>;
      requests: Call<typeof dashboard.ZMessageRequestsRequest, typeof dashboard.ZMessageRequestsResponse>;
      sendTest: Call<typeof dashboard.ZSendTestRequest, typeof dashboard.ZSendTestResponse>;
    };
    sender: {
      get: Call<typeof dashboard.ZSenderRequestRequest, typeof dashboard.ZSenderResponse>;
      request: Call<typeof dashboard.ZRequestSenderRequest, typeof dashboard.ZRequestSenderResponse>;
    };
    verifications: {
      list: Call<typeof dashboard.ZListVerificationsRequest, typeof dashboard.ZListVerificationsResponse>;
      conversion: Call<typeof dashboard.ZConversionRequest, typeof dashboard.ZConversionResponse>;
    };
  };
  operator: {
    projects: {
      find: Call<typeof operator.ZFindProjectsRequest, typeof operator.ZFindProjectsResponse>;
      get: Call<typeof operator.ZProjectRequest, typeof operator.ZDescribeProjectResponse>;
      suspend: Call<typeof operator.ZSuspensionRequest, typeof operator.ZSuspensionResponse>;
      reinstate: Call<typeof operator.ZSuspensionRequest, typeof operator.ZSuspensionResponse>;
      setDailyCreditCap: Call<
        typeof operator.ZSetDailyCreditCapRequest,
        typeof operator.ZSetDailyCreditCapResponse
      >;
    };
    credits: { grant: Call<typeof operator.ZGrantCreditsRequest, typeof operator.ZGrantCreditsResponse> };
    keys: {
      createLive: Call<typeof operator.ZCreateLiveKeyRequest, typeof operator.ZCreateLiveKeyResponse>;
      get: Call<typeof operator.ZGetKeyRequest, typeof operator.ZGetKeyResponse>;
      revoke: Call<typeof operator.ZRevokeKeyRequest, typeof operator.ZRevokeKeyResponse>;
    };
    senderRequests: {
      list: Call<typeof operator.ZListSenderRequestsRequest, typeof operator.ZListSenderRequestsResponse>;
      approve: Call<typeof operator.ZApproveSenderRequest, typeof operator.ZApproveSenderResponse>;
      refuse: Call<typeof operator.ZRefuseSenderRequest, typeof operator.ZRefuseSenderResponse>;
    };
    audit: { list: Call<typeof operator.ZAuditRequest, typeof operator.ZAuditResponse> };
  };
};
