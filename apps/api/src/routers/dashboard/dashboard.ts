// dashboard.*: what a signed-in account holder reads and changes, on their own
// projects only (another account's project is NOT_FOUND). Thin: parse the
// input, call one bound use case (services.ts), map the result.
import { router } from "../../trpc/trpc.ts";
import { creditsProcedure } from "./credits.ts";
import {
  createLiveKeyProcedure,
  getKeyProcedure,
  listKeysProcedure,
  revokeKeyProcedure,
  rollTestKeyProcedure,
} from "./keys.ts";
import { getMessageProcedure, listMessagesProcedure } from "./messages.ts";
import {
  listProjectsProcedure,
  projectOverviewProcedure,
  projectUsageProcedure,
  setProjectNameProcedure,
} from "./projects.ts";
import {
  getRequestProcedure,
  listRequestsProcedure,
  messageRequestsProcedure,
  searchProcedure,
} from "./requests.ts";
import { requestSenderProcedure, senderProcedure } from "./sender.ts";
import { onboardingProcedure, setSpendingProcedure, spendingProcedure } from "./spending.ts";
import { sendTestProcedure } from "./try-send.ts";
import { listVerificationsProcedure, verificationConversionProcedure } from "./verifications.ts";

export const dashboardRouter = router({
  projects: router({
    list: listProjectsProcedure,
    get: projectOverviewProcedure,
    usage: projectUsageProcedure,
    spending: spendingProcedure,
    onboarding: onboardingProcedure,
    setSpending: setSpendingProcedure,
    setName: setProjectNameProcedure,
  }),
  keys: router({
    list: listKeysProcedure,
    get: getKeyProcedure,
    createLive: createLiveKeyProcedure,
    revoke: revokeKeyProcedure,
    rollTest: rollTestKeyProcedure,
  }),
  credits: router({ get: creditsProcedure }),
  messages: router({
    list: listMessagesProcedure,
    get: getMessageProcedure,
    requests: messageRequestsProcedure,
    sendTest: sendTestProcedure,
  }),
  requests: router({ list: listRequestsProcedure, get: getRequestProcedure }),
  search: searchProcedure,
  sender: router({ get: senderProcedure, request: requestSenderProcedure }),
  verifications: router({ list: listVerificationsProcedure, conversion: verificationConversionProcedure }),
});
