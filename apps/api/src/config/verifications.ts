// Verifications (docs/auth-and-limits.md): how long a code stays valid, and
// how often a project may start and check them.
import { DEFAULT_VERIFICATION_LIFETIME_MINUTES } from "@sms/domain";
import { z } from "zod";
import { int, MINUTE_MS } from "./shared.ts";

export const ZVerificationsEnv = z.object({
  VERIFICATION_LIFETIME_MINUTES: int(DEFAULT_VERIFICATION_LIFETIME_MINUTES, 1, 60),
  /** Live verifications a project may start for one number per minute, and per UTC day (anti-pumping). */
  VERIFICATIONS_PER_RECIPIENT_PER_MINUTE: int(2, 1),
  VERIFICATIONS_PER_RECIPIENT_PER_DAY: int(10, 1),
  /** Verification checks per calendar minute: of one project, and from one address (429 rate_limited, Retry-After ≤ 60). */
  VERIFICATION_CHECKS_PER_MINUTE: int(300, 1),
  VERIFICATION_CHECKS_PER_ADDRESS_PER_MINUTE: int(300, 1),
});
export type TVerificationsEnv = z.output<typeof ZVerificationsEnv>;

export function verificationsConfig(env: TVerificationsEnv) {
  return {
    verifications: {
      lifetimeMs: env.VERIFICATION_LIFETIME_MINUTES * MINUTE_MS,
      /** Live starts of a project for one number (anti-pumping). */
      startsPerRecipient: {
        perMinute: env.VERIFICATIONS_PER_RECIPIENT_PER_MINUTE,
        perDay: env.VERIFICATIONS_PER_RECIPIENT_PER_DAY,
      },
      /** Checks per calendar minute, of one project and from one address. */
      checksPerMinute: {
        project: env.VERIFICATION_CHECKS_PER_MINUTE,
        address: env.VERIFICATION_CHECKS_PER_ADDRESS_PER_MINUTE,
      },
    },
  };
}
