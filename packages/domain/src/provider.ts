// The SMS provider port. The fake provider (@sms/provider-sim) and the live
// uBill adapter (@sms/provider-ubill) implement it; the send path and the
// status check use nothing else.

export type ProviderName = "simulator" | "ubill";

export type SubmitRequest = {
  /** Our message id; for correlation only, never sent as message content. */
  messageId: string;
  /** Full recipient, "+9955" and eight digits. Never log it. */
  to: string;
  /** Rendered text. Never log it. */
  text: string;
  /** The sender the message goes out under; the caller never chooses it. */
  sender: { name: string; brandId: number | null };
};

/** Codes a definitive rejection maps to (a subset of spec 2.2). */
export type RejectionCode =
  | "provider_rejected"
  | "sender_not_allowed"
  | "invalid_recipient"
  | "invalid_message";

export type SubmitOutcome =
  /** The provider accepted the request: the message is `submitted`. */
  | { kind: "accepted"; providerRef: string }
  /** Definitive rejection: `failed`, credits refunded. `reason` is our own safe wording. */
  | { kind: "rejected"; code: RejectionCode; reason: string }
  /** Nothing was sent: the provider was not reached (connection refused, DNS), or said it could not take it now (uBill's statusID 40). 503, safe to retry. */
  | { kind: "unreachable"; reason: string }
  /** The request may have left but no definitive answer came back: `unknown`, never re-sent. */
  | { kind: "indeterminate"; reason: string };

export type StatusQuery = {
  providerRef: string;
  /** Full recipient for providers that report per number (`reportsByRecipient`); "" for the others. */
  to: string;
  submittedAt: Date;
};

export type StatusReport =
  /** Still on its way; check again later. */
  | { kind: "pending" }
  | { kind: "delivered" }
  | { kind: "undeliverable"; reason: string }
  /** The provider reports the submission itself failed. */
  | { kind: "failed"; reason: string }
  /** The status could not be read this time (network, provider error): try again next round. */
  | { kind: "error"; reason: string };

export type SmsProvider = {
  readonly name: ProviderName;
  /**
   * True when checkStatus needs the full recipient (the provider reports per
   * number): only then does the status check decrypt it.
   */
  readonly reportsByRecipient?: boolean;
  /**
   * True when submit has no side effect (no I/O, no state: the simulator): a
   * test send then asks it before anything is written and writes its answer
   * with the key's claim, in one statement (send-message.ts).
   */
  readonly pure?: boolean;
  submit(request: SubmitRequest): Promise<SubmitOutcome>;
  checkStatus(query: StatusQuery): Promise<StatusReport>;
};
