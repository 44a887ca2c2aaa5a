// The app's side of @sms/web's port: the pages call the internal procedures
// in-process (internal-router.ts), read form bodies with the gateway's body
// reader, and word a refused field as the procedures do.
import type { CookieSealer } from "@sms/crypto";
import { SIMULATOR_NUMBERS } from "@sms/provider-sim";
import type { IdentityProvider, WebPort } from "@sms/web";
import type { Config } from "./config/index.ts";
import { ApiError } from "./contract/api-error.ts";
import { refusalText } from "./contract/refusals.ts";
import type { AppDeps } from "./deps.ts";
import { readBodyText } from "./http/read-body.ts";
import { createInternalCaller } from "./internal-router.ts";
import { serializeError } from "./logger.ts";
import type { RequestState } from "./trpc/request-state.ts";

export function webPort(options: {
  deps: AppDeps;
  config: Pick<Config, "publicBaseUrl" | "claims" | "messages" | "retention"> & {
    dashboard: Pick<Config["dashboard"], "devSignIn">;
  };
  sealer: CookieSealer;
  identityProviders: IdentityProvider[];
  /** True when a live provider's brand list checks sender approvals (UBILL_* configured). */
  brandsConfigured: boolean;
}): WebPort<RequestState> {
  const { deps, config } = options;
  return {
    config: {
      publicBaseUrl: config.publicBaseUrl,
      devSignIn: config.dashboard.devSignIn,
      freeCredits: config.claims.freeCredits,
      defaultSender: config.messages.defaultSender,
      brandsConfigured: options.brandsConfigured,
      requestLogRetentionDays: Math.round(config.retention.requestLogMs / 86_400_000),
      simulatorNumbers: [
        { number: "+995555123456", what: "delivered after the simulator's delay (any number not below)" },
        { number: SIMULATOR_NUMBERS.undeliverable, what: "accepted, then reported undeliverable" },
        { number: SIMULATOR_NUMBERS.rejected, what: "rejected at once: failed, provider_rejected" },
        { number: SIMULATOR_NUMBERS.indeterminate, what: "no definitive answer: unknown, never retried" },
        {
          number: SIMULATOR_NUMBERS.unreachable,
          what: "provider not reached: 503 provider_unavailable, nothing sent",
        },
      ],
    },
    clock: deps.clock,
    logger: deps.logger,
    sealer: options.sealer,
    identityProviders: options.identityProviders,
    procedures: (state, viewer) => createInternalCaller({ deps, state, ...(viewer ? { viewer } : {}) }),
    async readBody(request, maxBytes) {
      try {
        return await readBodyText(request, maxBytes);
      } catch (error) {
        if (error instanceof ApiError && error.code === "request_timeout") return "too_slow";
        throw error;
      }
    },
    invalidFieldText: (field) => refusalText({ ok: false, code: "invalid_input", field }, "browser"),
    serializeError,
  };
}
