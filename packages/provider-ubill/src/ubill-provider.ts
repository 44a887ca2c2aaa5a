// The live provider: uBill's JSON API (https://api.ubill.dev).
//
// Secrets and personal data: the API key travels only in the request URL; the
// recipient and the text only in the request body. None of them, nor uBill's
// message id or raw status, ever goes into a log line or a `reason`.

import type {
  Logger,
  RejectionCode,
  SmsProvider,
  StatusQuery,
  StatusReport,
  SubmitOutcome,
  SubmitRequest,
} from "@sms/domain";
import { RECIPIENT_PATTERN } from "@sms/domain/model";
import { classifySendStatus } from "./classify-error.ts";
import { exchange, type LostProblem, type UbillExchange } from "./http.ts";
import {
  isSmsId,
  readBalance,
  readBrands,
  readReportStatus,
  readSmsId,
  readStatusId,
  type UbillBrand,
} from "./parse.ts";

export type { UbillBrand } from "./parse.ts";

export const DEFAULT_SUBMIT_TIMEOUT_MS = 10_000;
export const DEFAULT_STATUS_TIMEOUT_MS = 5_000;

export type UbillProviderOptions = {
  /** uBill's origin, without `/v1` (e.g. `https://api.ubill.dev`). */
  baseUrl: string;
  /** Sent as the `key` query parameter. A secret: never logged. */
  apiKey: string;
  /** The service's shared approved brand, used when the project has none of its own. */
  defaultBrandId: number;
  /** Deadline for one send, from connecting to reading the whole answer. */
  submitTimeoutMs?: number;
  /** Deadline for one report, balance or brand-list call. */
  statusTimeoutMs?: number;
  logger: Logger;
  fetch?: typeof fetch;
};

export type UbillBrandsResult = { ok: true; brands: UbillBrand[] } | { ok: false; reason: string };
export type UbillBalanceResult = { ok: true; sms: number } | { ok: false; reason: string };

export type UbillProvider = SmsProvider & {
  /** The account's brands (senders) and whether each is approved. For the operator's tools. */
  listBrands(): Promise<UbillBrandsResult>;
  /** The account's remaining SMS balance. For the operator's tools. */
  getBalance(): Promise<UbillBalanceResult>;
};

/**
 * What a non-zero send `statusID` (uBill's API 2.1.8) means for the caller,
 * and how loudly the operator hears of it (docs/live-sending.md#what-each-ubill-outcome-becomes):
 *
 * - `rejected`: a definitive refusal of this request; nothing was sent, and the same request would be
 *   refused again. The message is `failed`, its credits refunded.
 * - `not_taken`: uBill could not take it now and sent nothing (its own SMS balance is short). The
 *   caller gets `503 provider_unavailable`, refunded; a retry with the same key is safe.
 * - `maybe_sent`: uBill's "general error" (99), or a statusID it does not document: nothing says the
 *   SMS was not sent. The message is `unknown`, charged, never sent again.
 */
type SendStatusMeaning =
  | { outcome: "rejected"; code: RejectionCode; reason: string; problem: string; operatorMustAct: boolean }
  /** Always the operator's to act on (it is uBill's account, not the caller's request). */
  | { outcome: "not_taken"; reason: string; problem: string }
  | { outcome: "maybe_sent"; reason: string; problem: string };

const SEND_STATUSES: Record<number, SendStatusMeaning> = {
  10: {
    outcome: "rejected",
    code: "sender_not_allowed",
    reason: "The SMS provider does not recognise the sender brand.",
    problem: "brand_not_found",
    operatorMustAct: true,
  },
  20: {
    outcome: "rejected",
    code: "provider_rejected",
    reason: "The SMS provider found no recipient in the request.",
    problem: "numbers_missing",
    operatorMustAct: true,
  },
  30: {
    outcome: "rejected",
    code: "invalid_message",
    reason: "The SMS provider refused an empty message text.",
    problem: "empty_text",
    operatorMustAct: false,
  },
  40: {
    outcome: "not_taken",
    reason: "The SMS provider cannot take messages right now; nothing was sent.",
    problem: "insufficient_provider_balance",
  },
  50: {
    outcome: "rejected",
    code: "invalid_recipient",
    reason: "The SMS provider found no valid recipient number.",
    problem: "no_valid_numbers",
    operatorMustAct: false,
  },
  // Our request's body could not be read: nothing was sent, and the same body would be refused again
  // (a retry cannot help, so not 503). Our fault, not the caller's: the operator hears of it.
  90: {
    outcome: "rejected",
    code: "provider_rejected",
    reason: "The SMS provider could not read the request.",
    problem: "request_not_understood",
    operatorMustAct: true,
  },
  99: {
    outcome: "maybe_sent",
    reason: "The SMS provider reported a general error; the message may or may not have been sent.",
    problem: "general_error",
  },
};

/** A statusID uBill does not document: it proves nothing about the send. */
const UNDOCUMENTED_STATUS: SendStatusMeaning = {
  outcome: "maybe_sent",
  reason:
    "The SMS provider answered with a status it does not document; the message may or may not have been sent.",
  problem: "undocumented_status",
};

const UNREACHABLE_REASON = "The SMS provider could not be reached; nothing was sent.";

const LOST_REASONS: Record<LostProblem, string> = {
  timeout: "The SMS provider did not answer in time; the message may or may not have been sent.",
  connection_dropped:
    "The connection to the SMS provider broke before an answer arrived; the message may or may not have been sent.",
  unexpected_error:
    "The request to the SMS provider failed after it may have been sent; the message may or may not have been sent.",
};

function positiveMs(value: number | undefined, fallback: number, name: string): number {
  const ms = value ?? fallback;
  if (!Number.isFinite(ms) || ms <= 0) {
    throw new RangeError(`${name} must be a positive number of milliseconds`);
  }
  return ms;
}

export function createUbillProvider(options: UbillProviderOptions): UbillProvider {
  const submitTimeoutMs = positiveMs(options.submitTimeoutMs, DEFAULT_SUBMIT_TIMEOUT_MS, "submitTimeoutMs");
  const statusTimeoutMs = positiveMs(options.statusTimeoutMs, DEFAULT_STATUS_TIMEOUT_MS, "statusTimeoutMs");
  // Looked up at call time, so a test double installed on globalThis later still applies.
  const fetchImpl: typeof fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const logger = options.logger.child({ provider: "ubill" });
  const origin = options.baseUrl.replace(/\/+$/, "");
  if (!/^https?:\/\/[^/?#]+/.test(origin)) throw new TypeError("baseUrl must be an http(s) URL");

  function endpoint(path: string): URL {
    const url = new URL(`${origin}${path}`);
    url.searchParams.set("key", options.apiKey);
    return url;
  }

  async function submit(request: SubmitRequest): Promise<SubmitOutcome> {
    const log = logger.child({ operation: "submit", messageId: request.messageId });
    if (!RECIPIENT_PATTERN.test(request.to)) {
      return {
        kind: "rejected",
        code: "invalid_recipient",
        reason: "The recipient is not a Georgian mobile number.",
      };
    }
    const brandId = request.sender.brandId ?? options.defaultBrandId;
    if (!Number.isSafeInteger(brandId) || brandId <= 0) {
      log.error(
        { problem: "invalid_brand_id" },
        "uBill sender brand id is not a positive integer; nothing was sent",
      );
      return {
        kind: "rejected",
        code: "sender_not_allowed",
        reason: "No approved sender brand is configured.",
      };
    }

    const result = await exchange({
      fetch: fetchImpl,
      method: "POST",
      url: endpoint("/v1/sms/send"),
      body: JSON.stringify({
        brandID: brandId,
        numbers: [Number(request.to.slice(1))],
        text: request.text,
        stopList: false,
        // uBill's highest-priority lane, documented for login codes only: every template is a code
        // (verification, sign-in, password reset), so every send takes it (issue 53, item 10).
        otp: true,
      }),
      timeoutMs: submitTimeoutMs,
    });

    switch (result.kind) {
      case "not_sent":
        log.warn({ problem: result.problem }, "uBill could not be reached; nothing was sent");
        return { kind: "unreachable", reason: UNREACHABLE_REASON };
      case "lost":
        log.warn({ problem: result.problem }, "uBill send outcome unknown; the message must not be re-sent");
        return { kind: "indeterminate", reason: LOST_REASONS[result.problem] };
      case "answered":
        return interpretSendAnswer(result, log);
    }
  }

  function interpretSendAnswer(
    answer: Extract<UbillExchange, { kind: "answered" }>,
    log: Logger,
  ): SubmitOutcome {
    const { httpStatus, body } = answer;
    const verdict = classifySendStatus(httpStatus);
    switch (verdict.kind) {
      case "refused":
        log[verdict.operatorMustAct ? "error" : "warn"](
          { problem: verdict.problem, httpStatus },
          verdict.problem === "api_key_rejected"
            ? "uBill refused the API key; check the configuration"
            : verdict.operatorMustAct
              ? "uBill refused the send request; check baseUrl"
              : "uBill refused the send request",
        );
        return {
          kind: "rejected",
          code: "provider_rejected",
          reason:
            verdict.problem === "api_key_rejected"
              ? "The SMS provider refused our credentials."
              : "The SMS provider refused the request.",
        };
      case "maybe_sent":
        // A 429 or 503 included: it may come from a proxy that forwarded the send.
        log.warn(
          { problem: verdict.problem, httpStatus },
          "uBill's answer does not prove the send was not processed; outcome unknown",
        );
        return {
          kind: "indeterminate",
          reason:
            verdict.problem === "throttled" || verdict.problem === "service_unavailable"
              ? "The SMS provider (or a proxy in front of it) said it was busy; the message may or may not have been sent."
              : "The SMS provider failed while handling the request; the message may or may not have been sent.",
        };
      case "answer":
        break;
    }

    const statusId = readStatusId(body);
    if (statusId === null) {
      log.warn(
        { problem: "unreadable_answer", httpStatus },
        "uBill's send answer could not be read; outcome unknown",
      );
      return {
        kind: "indeterminate",
        reason: "The SMS provider's answer could not be read; the message may or may not have been sent.",
      };
    }
    if (statusId === 0) {
      const smsId = readSmsId(body);
      if (smsId === null) {
        log.warn(
          { problem: "accepted_without_reference" },
          "uBill accepted the send without a usable message id",
        );
        return {
          kind: "indeterminate",
          reason: "The SMS provider accepted the message without a reference to track it by.",
        };
      }
      return { kind: "accepted", providerRef: smsId };
    }

    const meaning = SEND_STATUSES[statusId] ?? UNDOCUMENTED_STATUS;
    switch (meaning.outcome) {
      case "maybe_sent":
        log.warn(
          { problem: meaning.problem },
          "uBill's send answer does not prove the send was not processed; outcome unknown",
        );
        return { kind: "indeterminate", reason: meaning.reason };
      case "not_taken":
        log.error(
          { problem: meaning.problem },
          "uBill could not take the send; nothing was sent; operator action needed",
        );
        return { kind: "unreachable", reason: meaning.reason };
      case "rejected":
        if (meaning.operatorMustAct) {
          log.error({ problem: meaning.problem }, "uBill rejected the send; operator action needed");
        } else {
          log.info({ problem: meaning.problem }, "uBill rejected the send");
        }
        return { kind: "rejected", code: meaning.code, reason: meaning.reason };
    }
  }

  /** An answered call's JSON body, when it is a 2xx answer with statusID 0; otherwise why not, in our words. */
  function successfulBody(
    result: UbillExchange,
    log: Logger,
  ): { ok: true; body: unknown } | { ok: false; reason: string } {
    if (result.kind === "not_sent") {
      log.debug({ problem: result.problem }, "uBill could not be reached");
      return { ok: false, reason: "The SMS provider could not be reached." };
    }
    if (result.kind === "lost") {
      log.debug({ problem: result.problem }, "uBill's answer was lost");
      return { ok: false, reason: "The SMS provider's answer did not arrive." };
    }
    if (result.httpStatus === 401 || result.httpStatus === 403) {
      log.error({ problem: "api_key_rejected", httpStatus: result.httpStatus }, "uBill refused the API key");
      return { ok: false, reason: "The SMS provider refused our credentials." };
    }
    if (result.httpStatus < 200 || result.httpStatus >= 300) {
      log.debug(
        { problem: "http_error", httpStatus: result.httpStatus },
        "uBill answered with an HTTP error",
      );
      return { ok: false, reason: "The SMS provider answered with an error." };
    }
    const statusId = readStatusId(result.body);
    if (statusId === null) {
      log.debug({ problem: "unreadable_answer" }, "uBill's answer could not be read");
      return { ok: false, reason: "The SMS provider's answer could not be read." };
    }
    if (statusId !== 0) {
      log.debug({ problem: "provider_error" }, "uBill reported an error");
      return { ok: false, reason: "The SMS provider reported an error." };
    }
    return { ok: true, body: result.body };
  }

  async function checkStatus(query: StatusQuery): Promise<StatusReport> {
    const log = logger.child({ operation: "status" });
    if (!isSmsId(query.providerRef)) {
      return { kind: "error", reason: "The provider reference is not one the SMS provider issues." };
    }
    const result = await exchange({
      fetch: fetchImpl,
      method: "GET",
      url: endpoint(`/v1/sms/report/${encodeURIComponent(query.providerRef)}`),
      timeoutMs: statusTimeoutMs,
    });
    const answer = successfulBody(result, log);
    if (!answer.ok) return { kind: "error", reason: answer.reason };

    const reading = readReportStatus(answer.body, query.to.replace(/^\+/, ""));
    if (reading.kind === "not_yet") return { kind: "pending" };
    if (reading.kind === "unreadable") {
      log.debug({ problem: "unreadable_report" }, "uBill's delivery report could not be read");
      return { kind: "error", reason: "The delivery report could not be read." };
    }
    switch (reading.status) {
      case "0": // sent to the network
      case "3": // awaiting a status
        return { kind: "pending" };
      case "1":
        return { kind: "delivered" };
      case "2":
        return { kind: "undeliverable", reason: "The network could not deliver the message to the handset." };
      case "4":
        return { kind: "failed", reason: "The SMS provider reports that sending the message failed." };
      default:
        log.debug(
          { problem: "unrecognised_report_status" },
          "uBill reported a status this adapter does not know",
        );
        return {
          kind: "error",
          reason: "The delivery report carries a status this service does not recognise.",
        };
    }
  }

  async function listBrands(): Promise<UbillBrandsResult> {
    const log = logger.child({ operation: "list_brands" });
    const result = await exchange({
      fetch: fetchImpl,
      method: "GET",
      url: endpoint("/v1/sms/brandNames"),
      timeoutMs: statusTimeoutMs,
    });
    const answer = successfulBody(result, log);
    if (!answer.ok) return { ok: false, reason: answer.reason };
    const brands = readBrands(answer.body);
    if (brands === null) return { ok: false, reason: "The brand list could not be read." };
    return { ok: true, brands };
  }

  async function getBalance(): Promise<UbillBalanceResult> {
    const log = logger.child({ operation: "balance" });
    const result = await exchange({
      fetch: fetchImpl,
      method: "GET",
      url: endpoint("/v1/sms/balance"),
      timeoutMs: statusTimeoutMs,
    });
    const answer = successfulBody(result, log);
    if (!answer.ok) return { ok: false, reason: answer.reason };
    const sms = readBalance(answer.body);
    if (sms === null) return { ok: false, reason: "The balance could not be read." };
    return { ok: true, sms };
  }

  return { name: "ubill", reportsByRecipient: true, submit, checkStatus, listBrands, getBalance };
}
