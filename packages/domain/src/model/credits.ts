// Credits (spec 1.3, 4.2 rules 3–4, 8): one per segment of a live message.
// The balance is a cache of the ledger kept in step by its one writer
// (store/ledger.ts); a CHECK keeps it >= 0.

export const CREDIT_ENTRY_KINDS = ["grant_paid", "grant_free", "reservation", "refund"] as const;
export type CreditEntryKind = (typeof CREDIT_ENTRY_KINDS)[number];

/** The most credits one grant may add. */
export const MAX_CREDIT_GRANT = 1_000_000;
