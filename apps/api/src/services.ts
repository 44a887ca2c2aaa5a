// The use cases, bound once to their dependencies and configuration (part of
// the composition root: app.ts and operator.ts build them). Callers pass the
// facts of one request only.
import type { Keyring } from "@sms/crypto";
import {
  approveSenderRequest,
  BUCKETS,
  bindMcpSessionKey,
  type Clock,
  checkMessageStatuses,
  checkVerification,
  claimProject,
  clearProjectSender,
  consumeLimits,
  createAnsweredKeys,
  createLiveKey,
  createProjectLiveKey,
  createProjectRefusals,
  createTestKey,
  dashboardTestSender,
  describeClaim,
  describeProject,
  endAllSessions,
  endMcpSession,
  endSession,
  findProjectKey,
  findProjects,
  getMessage,
  getVerification,
  grantPaidCredits,
  type Logger,
  listAccountProjects,
  listAuditLog,
  listProjectKeys,
  listProjectMessages,
  listProjectRequests,
  listProjectVerifications,
  listSenderRequests,
  maintainPartitions,
  messageRequests,
  ownProjectSpending,
  projectCredits,
  projectKey,
  projectMessage,
  projectOnboarding,
  projectOverview,
  projectRequest,
  projectSender,
  projectUsage,
  purgeDashboardSessions,
  purgeIdempotencyRecords,
  purgeMcpSessions,
  purgeMessageText,
  purgeRateLimitCounters,
  purgeRequestLog,
  purgeUnclaimedMessages,
  recoverQueuedMessages,
  refuseSenderRequest,
  reinstateProject,
  requestSender,
  resumeMcpSessionKey,
  resumeSession,
  revokeApiKey,
  revokeProjectKey,
  rollTestKey,
  rotateKeys,
  type SenderBrandDirectory,
  type SendMessageDeps,
  type Slots,
  type SmsProvider,
  type Store,
  searchProject,
  sendMessage,
  setDailyCreditCap,
  setProjectName,
  setProjectSender,
  setProjectSpending,
  startSession,
  startVerification,
  suspendProject,
  sweepUnconfirmedVerifications,
  verificationConversion,
} from "@sms/domain";
import type { Config } from "./config/index.ts";

/** `fn` with its dependencies given: callers pass the input only. */
function bind<D, I, R>(fn: (deps: D, input: I) => R, deps: D): (input: I) => R {
  return (input) => fn(deps, input);
}

/** The operator's actions (the command-line tool and the dashboard's operator views): the same functions, one binding. */
export function operatorServices(options: {
  store: Store;
  clock: Clock;
  /** The live provider's brand list, or null when no live credentials are configured. */
  brands: SenderBrandDirectory | null;
  /** The message keyring (rotate-keys re-encrypts under its current key). */
  keyring: Keyring;
  config: Pick<Config, "messages">;
}) {
  const deps = { store: options.store, clock: options.clock };
  return {
    createLiveKey: bind(createLiveKey, deps),
    revokeApiKey: bind(revokeApiKey, deps),
    findProjectKey: bind(findProjectKey, deps),
    suspendProject: bind(suspendProject, deps),
    reinstateProject: bind(reinstateProject, deps),
    grantPaidCredits: bind(grantPaidCredits, deps),
    setDailyCreditCap: bind(setDailyCreditCap, deps),
    setProjectSender: bind(setProjectSender, { ...deps, brands: options.brands }),
    clearProjectSender: bind(clearProjectSender, deps),
    describeProject: bind(describeProject, {
      ...deps,
      config: { freeTierDailySegments: options.config.messages.freeTierDailySegments },
    }),
    rotateKeys: bind(rotateKeys, { ...deps, keyring: options.keyring }),
    findProjects: bind(findProjects, deps),
    listSenderRequests: bind(listSenderRequests, deps),
    approveSenderRequest: bind(approveSenderRequest, { ...deps, brands: options.brands }),
    refuseSenderRequest: bind(refuseSenderRequest, deps),
    listAuditLog: bind(listAuditLog, deps),
  };
}

export type OperatorServices = ReturnType<typeof operatorServices>;

/** What an account holder does on the dashboard, on their own projects only. */
export function dashboardServices(options: {
  store: Store;
  /** `store` with the reads a replica may serve routed to it (withReplicaReads; default `store`): the views only. */
  reads?: Store;
  clock: Clock;
  config: Pick<Config, "messages" | "dashboard">;
}) {
  const { store, clock } = options;
  const deps = { store, clock };
  // Lists, charts, exports and one message's page: they may lag the primary by the replica's delay.
  const views = { store: options.reads ?? store, clock };
  const freeTier = { config: { freeTierDailySegments: options.config.messages.freeTierDailySegments } };
  const sessionConfig = {
    config: {
      idleMs: options.config.dashboard.sessionIdleMs,
      maxMs: options.config.dashboard.sessionMaxMs,
      operatorIdentities: options.config.dashboard.operatorIdentities,
    },
  };
  return {
    sessions: {
      start: bind(startSession, { ...deps, ...sessionConfig }),
      resume: bind(resumeSession, { ...deps, ...sessionConfig }),
      end: bind(endSession, deps),
      endAll: bind(endAllSessions, deps),
    },
    projects: {
      list: bind(listAccountProjects, deps),
      overview: bind(projectOverview, { ...views, ...freeTier }),
      usage: bind(projectUsage, views),
      setName: bind(setProjectName, deps),
    },
    keys: {
      list: bind(listProjectKeys, deps),
      get: bind(projectKey, deps),
      createLive: bind(createProjectLiveKey, deps),
      revoke: bind(revokeProjectKey, deps),
      rollTest: bind(rollTestKey, deps),
    },
    credits: bind(projectCredits, { ...views, ...freeTier }),
    verifications: {
      list: bind(listProjectVerifications, views),
      conversion: bind(verificationConversion, views),
    },
    messages: {
      list: bind(listProjectMessages, views),
      get: bind(projectMessage, views),
      requests: bind(messageRequests, views),
    },
    requests: { list: bind(listProjectRequests, views), get: bind(projectRequest, views) },
    search: bind(searchProject, views),
    spending: { get: bind(ownProjectSpending, deps), set: bind(setProjectSpending, deps) },
    testSender: bind(dashboardTestSender, deps),
    onboarding: bind(projectOnboarding, deps),
    sender: { get: bind(projectSender, deps), request: bind(requestSender, deps) },
  };
}

/** Everything the API's procedures, pages and jobs call. */
export function apiServices(options: {
  store: Store;
  /**
   * `store` with the reads a replica may serve routed to it (withReplicaReads;
   * default `store`). Only the reads below get it: GET a message or a
   * verification, and the dashboard's views. Sends, checks, replays and limits
   * use `store`.
   */
  reads?: Store;
  keyring: Keyring;
  clock: Clock;
  logger: Logger;
  providers: { test: SmsProvider; live: SmsProvider | null };
  /** The live provider's brand list (sender approvals), or null when none is configured. */
  brands: SenderBrandDirectory | null;
  config: Config;
  /** Told how long each step of a new send took (metrics). */
  observeSend?: SendMessageDeps["observe"];
  /** Live sends' share of the database pool (none: they queue at the pool with everything else). */
  liveSlots?: Slots;
  /** uBill's places for live sends (none: the clients' connections are the only bound). */
  liveSubmissions?: SendMessageDeps["liveSubmissions"];
}) {
  const { store, keyring, clock, logger, providers, config } = options;
  const reads = options.reads ?? store;
  const now = () => clock.now();
  const sendDeps = {
    store,
    keyring,
    clock,
    providers,
    answered: createAnsweredKeys(),
    projectRefusals: createProjectRefusals(),
    observe: options.observeSend,
    liveSlots: options.liveSlots,
    liveSubmissions: options.liveSubmissions,
    config: {
      messagesPerMinute: config.messages.perMinute,
      recipientLimits: {
        perMinute: config.messages.recipientPerMinute,
        perDay: config.messages.recipientPerDay,
      },
      freeTierDailySegments: config.messages.freeTierDailySegments,
      defaultSender: config.messages.defaultSender,
      simulatorDelayMs: config.messages.simulatorDelayMs,
      inFlightWaitMs: config.messages.inFlightWaitMs,
      recordRetryMs: config.messages.recordRetryMs,
      // By then the recovery sweep has settled a first request that crashed.
      unresolvedRetryAfterMs: config.queuedRecoveryMs,
    },
  };
  const send = bind(sendMessage, sendDeps);
  return {
    dashboard: dashboardServices({ store, reads, clock, config }),
    operator: operatorServices({ store, clock, brands: options.brands, keyring, config }),
    messages: { send, get: bind(getMessage, { store: reads }) },
    // The verifications extension (issue 22): its SMS goes through `send`, the message path itself.
    verifications: {
      start: bind(startVerification, { store, keyring, clock, send, config: config.verifications }),
      check: bind(checkVerification, { store, keyring, clock, config: config.verifications }),
      get: bind(getVerification, { store: reads, clock }),
    },
    testKeys: {
      create: (input: { callerSubject: string }) =>
        createTestKey(
          { store, config: { publicBaseUrl: config.publicBaseUrl, limits: config.testKeys } },
          { ...input, now: now() },
        ),
    },
    /** An MCP session's own key (docs/agents.md#a-key-for-the-session): bound by create_test_key. */
    mcpSessions: {
      bind: bind(bindMcpSessionKey, { store, clock }),
      resume: bind(resumeMcpSessionKey, { store, clock }),
      end: bind(endMcpSession, { store }),
    },
    claims: {
      describe: bind(describeClaim, { store }),
      claim: bind(claimProject, { store, config: { freeCredits: config.claims.freeCredits } }),
      /** One sign-in start from `callerSubject`, under CLAIM_SIGN_INS_PER_MINUTE. */
      countSignIn: (callerSubject: string) =>
        consumeLimits(
          store,
          [
            {
              bucket: BUCKETS.claimSignIns(callerSubject),
              window: "minute",
              limit: config.claims.signInsPerMinute,
              refusal: "rate_limited",
            },
          ],
          now(),
        ),
    },
    /** The periodic jobs' rounds (jobs/jobs.ts schedules them). */
    rounds: {
      statusCheck: () =>
        checkMessageStatuses({
          store,
          keyring,
          clock,
          logger,
          providers,
          config: {
            intervalMs: config.statusCheck.intervalMs,
            batchSize: config.statusCheck.batchSize,
            concurrency: config.statusCheck.concurrency,
            deadlineMs: config.statusCheck.submittedDeadlineMs,
            callTimeoutMs: config.statusCheck.callTimeoutMs,
          },
        }),
      // The recovery sweep: messages left queued, and verification rows a killed start left without
      // their message (docs/verifications.md#recovery).
      queuedRecovery: async () => {
        const recovery = { olderThanMs: config.queuedRecoveryMs, batchSize: config.statusCheck.batchSize };
        const messages = await recoverQueuedMessages({ store, clock, config: recovery });
        const verifications = await sweepUnconfirmedVerifications({ store, clock, config: recovery });
        return { ...messages, ...verifications };
      },
      unclaimedMessagesPurge: () =>
        purgeUnclaimedMessages({ store, clock, config: { batchSize: config.retention.purgeBatchSize } }),
      // A message not final yet keeps its number until it is, at most
      // SUBMITTED_DEADLINE_HOURS (and one status-check round) longer.
      messageTextPurge: () =>
        purgeMessageText(
          { store },
          {
            now: now(),
            retentionMs: config.retention.messageTextMs,
            pendingHoldMs: config.statusCheck.submittedDeadlineMs + config.statusCheck.intervalMs,
            batchSize: config.retention.purgeBatchSize,
          },
        ),
      idempotencyPurge: () =>
        purgeIdempotencyRecords({ store }, { now: now(), batchSize: config.retention.purgeBatchSize }),
      rateLimitPurge: () =>
        purgeRateLimitCounters({ store }, { now: now(), batchSize: config.retention.purgeBatchSize }),
      dashboardSessionPurge: () =>
        purgeDashboardSessions({ store }, { now: now(), batchSize: config.retention.purgeBatchSize }),
      mcpSessionPurge: () =>
        purgeMcpSessions({ store }, { now: now(), batchSize: config.retention.purgeBatchSize }),
      // Monthly partitions: created ahead, dropped whole once past retention (docs/scaling.md).
      partitionMaintenance: () =>
        maintainPartitions({ store }, { now: now(), requestLogRetentionMs: config.retention.requestLogMs }),
      requestLogPurge: () =>
        purgeRequestLog(
          { store },
          {
            now: now(),
            retentionMs: config.retention.requestLogMs,
            batchSize: config.retention.purgeBatchSize,
          },
        ),
    },
  };
}

export type ApiServices = ReturnType<typeof apiServices>;
