// Every view that shows text a user or a provider supplied (identity names and
// e-mails, provider labels, sender names and purposes, refusal reasons,
// references and notes, key prefixes, audit details, error codes, request ids,
// form values echoed back) renders a hostile string escaped: the raw string
// never appears, its escaped form does, and no element or javascript: URL is
// injected. Ids that become paths are hostile too (javascript: as an id).
import type {
  AuditPage,
  ClaimSummary,
  CreditsPage,
  Described,
  KeyRecord,
  LedgerRecord,
  MessageFound,
  Overview,
  ProjectRecord,
  SenderRequestRecord,
  Usage,
} from "@sms/contract";
import { AUDIT_ACTIONS, type DashboardViewer, MESSAGE_STATUSES } from "@sms/domain";
import { VARIABLE_RULES } from "@sms/templates";
import { describe, expect, it } from "vitest";
import { escapeText } from "../src/kit/html.ts";
import { auditSentence } from "../src/views/audit.ts";
import * as claim from "../src/views/claim.ts";
import { consoleOverview } from "../src/views/console-overview.ts";
import { creditsPage } from "../src/views/credits.ts";
import { keysPage, newKeyPage, revokeConfirmPage, rollConfirmPage } from "../src/views/keys.ts";
import { type Chrome, inlineCode } from "../src/views/layout.ts";
import { messagePage, messagesPage } from "../src/views/messages.ts";
import {
  operatorAuditPage,
  operatorHomePage,
  operatorKeyPage,
  operatorProjectPage,
  operatorRevokeConfirmPage,
} from "../src/views/operator.ts";
import { actionRefusedPage, badRequestPage, errorPage } from "../src/views/problems.ts";
import { overviewPage, projectsPage } from "../src/views/projects.ts";
import { requestPage, requestsPage, searchResultsPage } from "../src/views/requests.ts";
import { senderPage } from "../src/views/sender.ts";
import { settingsPage } from "../src/views/settings.ts";
import { signInPage } from "../src/views/sign-in.ts";
import { spendingPage } from "../src/views/spending.ts";
import { curlLine, LONGEST, triedPage, tryPage } from "../src/views/try.ts";
import { verificationsPage } from "../src/views/verifications.ts";

const HOSTILE = [
  `<script>alert(1)</script>`,
  `"><img src=x onerror=alert(2)>`,
  `' onmouseover='alert(3)`,
  `Tom & Jerry &amp; <b>bold</b>`,
];
/** One string with every attack in it, put in every user- or provider-supplied field. */
const H = HOSTILE.join(" ");
/** An id that would be a javascript: URL if a page wrote it into an href as it is. */
const JS = "javascript:alert(4)";
const T = "2026-11-25T10:00:00Z";

async function expectEscaped(response: Response, options: { scripts?: number } = {}) {
  const html = await response.text();
  expect(html).not.toContain(H);
  for (const attack of HOSTILE) expect(html).not.toContain(attack);
  expect(html).toContain(escapeText(H));
  expect(html).not.toMatch(/<img|onerror=alert\(2\)>|' onmouseover=/i);
  expect(html).not.toMatch(/(?:href|action|src)="\s*javascript:/i);
  // Only the dashboard's own script tag (claim pages have none).
  expect(html.match(/<script/g)?.length ?? 0).toBe(options.scripts ?? 1);
  expect(html.match(/<\/script>/g)?.length ?? 0).toBe(options.scripts ?? 1);
  return html;
}

const viewer: DashboardViewer = {
  sessionId: "dss_1",
  identity: { provider: "github", subject: H, name: H },
  actor: `github:${H}`,
  accountId: "acc_1",
  operator: true,
  expiresAt: new Date(T),
};
const chrome: Chrome = {
  cssUrl: "/dashboard/assets/app.css?v=1",
  jsUrl: "/dashboard/assets/app.js?v=1",
  devSignIn: true,
  viewer,
  csrfToken: "csrf",
  providerLabel: () => H,
};

const project: ProjectRecord = {
  id: JS,
  name: H,
  created_at: T,
  claimed_at: T,
  suspended_at: null,
  sender: H,
  sender_brand_id: 7,
  credit_balance: 5,
};
const key: KeyRecord = {
  id: JS,
  mode: "test",
  prefix: H,
  name: H,
  created_at: T,
  revoked_at: null,
  last_used_at: T,
};
const request: SenderRequestRecord = {
  id: JS,
  project_id: JS,
  name: H,
  purpose: H,
  status: "refused",
  requested_by: H,
  decided_by: H,
  decided_at: T,
  refusal_reason: H,
  created_at: T,
};
/** One audit entry of every action, each detail a hostile string where the action has free text. */
const everyAction = AUDIT_ACTIONS.map((action, i) => ({
  id: `aud_${i}`,
  actor: H,
  action,
  project_id: JS,
  details: {
    key_id: H,
    mode: H,
    name: H,
    reason: H,
    reference: H,
    amount: 100,
    balance: 105,
    sender: H,
    brand_id: 7,
    request_id: H,
    current_key_id: H,
    rotated: 3,
    revoked_key_ids: [H],
    daily_credit_cap: 10,
    low_balance_threshold: null,
    changed: true,
  },
  created_at: T,
}));
const credits = { balance: 5, ledger_sum: 5, consistent: true, has_paid_credits: true };
const freeTier = { applies: true, limit: 10, used_today: 2, remaining_today: 8, reset_at: T };
// A hostile kind too: the wire allows four, but the view must escape whatever it is given.
const NO_STATUSES = Object.fromEntries(
  MESSAGE_STATUSES.map((status) => [status, 0]),
) as Usage["totals"]["by_status"];
const ledger = [
  { id: "led_1", kind: H as LedgerRecord["kind"], amount: 3, message_id: JS, note: H, created_at: T },
];

describe("the claim pages escape what providers and links supply", () => {
  const claimChrome = { devSignIn: true, cssUrl: "/dashboard/assets/dashboard.css?v=1" };
  const summary: ClaimSummary = {
    project_id: H,
    project_created_at: T,
    messages_sent: 3,
    key_prefix: H,
    expires_at: T,
  };
  const token = "A".repeat(43);

  it("landing, confirmation and result pages", async () => {
    await expectEscaped(
      claim.landingPage(claimChrome, { token, summary, providers: [{ id: H, label: H }], freeCredits: 5 }),
      { scripts: 0 },
    );
    await expectEscaped(
      claim.confirmPage(claimChrome, {
        token,
        summary,
        providerLabel: H,
        who: H,
        csrfToken: H,
        freeCredits: 5,
      }),
      { scripts: 0 },
    );
    for (const already of [false, true]) {
      const html = await expectEscaped(
        claim.claimedPage(claimChrome, {
          projectId: `${JS} ${H}`,
          creditsGranted: 5,
          providerLabel: H,
          who: H,
          already,
        }),
        { scripts: 0 },
      );
      expect(html).toContain(`href="/dashboard/projects/${escapeText(encodeURIComponent(`${JS} ${H}`))}"`);
    }
  });

  it("sign-in problems, refusals and errors", async () => {
    await expectEscaped(claim.cancelledPage(claimChrome, { token, providerLabel: H }), { scripts: 0 });
    for (const problem of ["rejected", "unavailable", "provider_error"] as const) {
      await expectEscaped(claim.signInProblemPage(claimChrome, { problem, token, providerLabel: H }), {
        scripts: 0,
      });
    }
    await expectEscaped(claim.badRequestPage(claimChrome, { status: 400, title: H, text: H, token }), {
      scripts: 0,
    });
    await expectEscaped(claim.errorPage(claimChrome, H), { scripts: 0 });
  });
});

describe("the dashboard escapes what users, operators and providers supply", () => {
  it("the frame: the signed-in identity's name and provider label (sign-in page with a hostile `next` and problem)", async () => {
    await expectEscaped(
      signInPage(chrome, {
        providers: [{ id: H, label: H }],
        devSignIn: true,
        next: H,
        problem: H,
        notice: H,
      }),
    );
  });

  it("projects and a project's overview", async () => {
    await expectEscaped(
      projectsPage(
        chrome,
        { projects: [{ ...project, messages_today: 1, pending_sender: H }], next: H },
        { isFirst: false },
      ),
    );
    await expectEscaped(
      projectsPage(
        chrome,
        { projects: [{ ...project, sender: null, messages_today: 1, pending_sender: H }], next: null },
        { isFirst: true },
      ),
    );
    const overview: Overview = {
      project: { ...project, suspended_at: T },
      credits,
      free_tier: freeTier,
      pending_sender_request: { ...request, status: "pending" },
      messages_today: 1,
    };
    const usage: Usage = {
      days: [{ day: "2026-11-25", by_status: { ...NO_STATUSES, delivered: 2 }, messages: 2, segments: 2 }],
      totals: { messages: 2, segments: 2, by_status: { ...NO_STATUSES, delivered: 2 } },
      delivery_rate: 1,
      delivery_rate_by_mode: { live: null, test: 0.5 },
    };
    const conversion = {
      days: [{ day: "2026-11-25", started: 2, approved: 1, rate: 0.5 }],
      started: 2,
      approved: 1,
      conversion_rate: 0.5,
      median_seconds_to_approve: 42,
    };
    await expectEscaped(overviewPage(chrome, overview, usage, { mode: null, defaultSender: H, conversion }));
    // The developer console's part: the checklist and its links, for a hostile project id.
    const onboarding = { done: false, test_sent: true, delivered: false, live_key: false, live_sent: false };
    const withConsole = await expectEscaped(
      overviewPage(chrome, overview, usage, {
        mode: null,
        defaultSender: H,
        conversion,
        console: consoleOverview(`${JS} ${H}`, onboarding),
      }),
    );
    expect(withConsole).toContain(
      `href="/dashboard/projects/${escapeText(encodeURIComponent(`${JS} ${H}`))}/try"`,
    );
  });

  it("verifications: the log (issue 22)", async () => {
    await expectEscaped(
      verificationsPage(chrome, {
        projectId: JS,
        list: {
          verifications: [
            {
              id: H,
              mode: "live",
              to: H,
              status: "approved",
              attempts_used: 1,
              message_id: JS,
              created_at: T,
              approved_at: T,
            },
          ],
          next: H,
        },
        isFirst: false,
      }),
    );
  });

  it("keys: the list, a new key, revoking and rolling", async () => {
    await expectEscaped(keysPage(chrome, { project, keys: [key], next: H }, { isFirst: false, notice: "" }));
    await expectEscaped(
      newKeyPage(chrome, {
        projectId: JS,
        key: { id: JS, mode: "live", prefix: H, api_key: H },
        revoked: [{ prefix: H }],
      }),
    );
    await expectEscaped(revokeConfirmPage(chrome, { projectId: JS, key }));
    await expectEscaped(rollConfirmPage(chrome, { projectId: JS, testKeys: [{ prefix: H }] }));
  });

  it("messages: the list (with echoed filters) and one message's error, sender and ledger note", async () => {
    const row = {
      id: JS,
      mode: "live" as const,
      to: H,
      template: H,
      status: "failed" as const,
      segments: 1,
      error_code: H,
      created_at: T,
      updated_at: T,
    };
    await expectEscaped(
      messagesPage(chrome, {
        projectId: JS,
        list: { messages: [row], next: H },
        filters: { from: H, to: H },
        isFirst: false,
      }),
    );
    const found: MessageFound = {
      message: {
        ...row,
        locale: H,
        sender: H,
        encoding: H,
        error_message: H,
        credits_reserved: 1,
        api_key_id: H,
        submitted_at: T,
        text_purged_at: T,
      },
      timeline: [{ status: "failed", error_code: H, at: T }],
      ledger,
    };
    const requestRow = {
      id: JS,
      method: H,
      route: H,
      status: 400,
      error_code: H,
      idempotency_key: H,
      replayed: true,
      duration_ms: 3,
      mode: "live" as const,
      key_id: H,
      key_prefix: H,
      key_name: H,
      message_id: JS,
      verification_id: H,
      created_at: T,
    };
    await expectEscaped(messagePage(chrome, { projectId: JS, found, requests: [requestRow] }));
    await expectEscaped(
      requestsPage(
        { ...chrome, lowBalance: { projectId: JS, balance: 1, threshold: 2, daysLeft: 0.5 } },
        {
          projectId: JS,
          list: { requests: [requestRow], next: H },
          filters: { error_code: H, from: H, to: H },
          isFirst: false,
          retentionDays: 30,
        },
      ),
    );
    await expectEscaped(requestPage(chrome, { projectId: JS, request: requestRow }));
    // A request that produced a verification links its row in the verifications log.
    const verificationRow = { ...requestRow, message_id: null, verification_id: `${JS} ${H}` };
    const producedVerification = await expectEscaped(
      requestPage(chrome, { projectId: JS, request: verificationRow }),
    );
    expect(producedVerification).toContain(`/verifications#${escapeText(encodeURIComponent(`${JS} ${H}`))}"`);
    await expectEscaped(
      requestsPage(chrome, {
        projectId: JS,
        list: { requests: [verificationRow], next: null },
        filters: { route: H, error_code: H },
        isFirst: true,
        retentionDays: 30,
      }),
    );
    await expectEscaped(searchResultsPage(chrome, { projectId: JS, query: H, requests: [requestRow] }));
    await expectEscaped(searchResultsPage(chrome, { projectId: JS, query: H, requests: null }));
    const values = { template: H, locale: H, code: H, minutes: H, to: H };
    await expectEscaped(
      tryPage(chrome, {
        projectId: JS,
        recipients: [{ number: H, what: H }],
        idempotencyKey: H,
        values,
        problem: { code: H, message: H },
      }),
    );
    await expectEscaped(
      triedPage(chrome, {
        projectId: JS,
        messageId: JS,
        status: H,
        replayed: false,
        liveRecipient: { limit: { minute: 2, day: 10 }, remaining: { minute: 1, day: 9 } },
        curl: curlLine({ baseUrl: H, idempotencyKey: H, values, publicNumbers: [H] }),
      }),
    );
    await expectEscaped(
      spendingPage(chrome, {
        projectId: JS,
        spending: {
          project_name: H,
          credit_balance: 3,
          daily_credit_cap: 10,
          used_today: 4,
          low_balance_threshold: 5,
          low_balance: true,
          daily_rate: 1,
          days_left: 3,
        },
        problem: H,
        values: { cap: H, threshold: H },
      }),
    );
  });

  it("settings: the project's name in the form, the header and a refusal", async () => {
    const html = await expectEscaped(
      settingsPage(
        { ...chrome, projectName: H },
        { projectId: JS, name: H, typed: H, problem: H, status: 400 },
      ),
    );
    expect(html).toContain(`<strong class="project-name">${escapeText(H)}</strong>`);
    expect(html).toContain(`value="${escapeText(H)}"`);
  });

  it("send-a-test counts segments with each variable's longest accepted value", () => {
    for (const [name, value] of Object.entries(LONGEST)) {
      const rule = VARIABLE_RULES[name as keyof typeof VARIABLE_RULES];
      expect(rule.accepts(value), name).toBe(true);
      expect(rule.accepts(`${value}9`), `${name}: one character longer`).toBe(false);
    }
  });

  it("an API message's backticked parts become code, escaped, and no backtick reaches the page", () => {
    const written = inlineCode(
      `Variable \`${H}\` must be 4 to 8 digits; template \`x\` and a stray \` here`,
    ).toString();
    expect(written).not.toContain("`");
    expect(written).not.toContain(H);
    expect(written).toContain(`Variable <code>${escapeText(H)}</code> must be`);
    expect(written).toContain("template <code>x</code> and a stray  here");
  });

  it("credits: ledger kinds, notes and message links", async () => {
    const page: CreditsPage = { credits, free_tier: freeTier, ledger, next: H };
    await expectEscaped(creditsPage(chrome, { projectId: JS, credits: page, isFirst: false }));
  });

  it("sender: requests' names, purposes and refusal reasons; the form's echoed values and problem", async () => {
    await expectEscaped(
      senderPage(chrome, {
        sender: { project, requests: [request] },
        defaultSender: H,
        notice: "",
        problem: H,
        values: { name: H, purpose: H },
      }),
    );
    await expectEscaped(
      senderPage(chrome, {
        sender: { project, requests: [{ ...request, status: "pending" }] },
        defaultSender: H,
        notice: "",
      }),
    );
  });

  it("operator: search results, waiting requests, a project, a new key, revoking, the audit log", async () => {
    await expectEscaped(
      operatorHomePage(chrome, {
        query: H,
        found: { ok: true, by: "email", projects: [{ ...project, account_id: H, account_email: H }] },
        problem: H,
        requests: { requests: [{ ...request, status: "pending" }], next: H },
        requestsFirst: false,
        notice: "",
        brandsConfigured: false,
        latest: everyAction,
      }),
    );
    await expectEscaped(
      operatorHomePage(chrome, {
        query: H,
        found: { ok: true, by: "project_id", projects: [{ ...project, account_id: H, account_email: null }] },
        problem: null,
        requests: { requests: [], next: null },
        requestsFirst: true,
        notice: "",
        brandsConfigured: true,
        latest: [],
      }),
    );
    const described: Described = {
      ok: true,
      project: { ...project, account_id: H, daily_credit_cap: 10 },
      credits,
      free_tier: freeTier,
      keys: [key],
      messages: [{ mode: "live", status: "delivered", last_24h: 1, last_7d: 2 }],
    };
    await expectEscaped(operatorProjectPage(chrome, { described, notice: "", defaultSender: H }));
    await expectEscaped(operatorKeyPage(chrome, { projectId: H, key: { prefix: H, api_key: H } }));
    await expectEscaped(operatorRevokeConfirmPage(chrome, { projectId: H, key }));
    await expectEscaped(
      operatorProjectPage(chrome, {
        described: { ...described, project: { ...described.project, daily_credit_cap: null } },
        notice: "",
        defaultSender: H,
      }),
    );
    const unknown = { id: "aud_0", actor: H, action: H, project_id: JS, details: { [H]: H }, created_at: T };
    const audit: AuditPage = { ok: true, entries: [unknown, ...everyAction], next: H };
    const html = await expectEscaped(operatorAuditPage(chrome, { audit, projectId: H, isFirst: false }));
    // In words, never raw JSON.
    expect(html).not.toContain(escapeText(JSON.stringify({ reason: H })));
    expect(html).not.toMatch(/\{&quot;|\{"/);
  });

  it("the audit log in words: every action's sentence carries its typed values escaped", () => {
    for (const entry of everyAction) {
      const sentence = auditSentence(entry).toString();
      expect(sentence, entry.action).not.toContain("<script");
      expect(sentence, entry.action).not.toContain("{");
      expect(sentence.length, entry.action).toBeGreaterThan(10);
    }
    const said = (action: string) => auditSentence(everyAction.find((e) => e.action === action)!).toString();
    expect(said("project.suspended")).toContain(`Suspended the project: “${escapeText(H)}”`);
    expect(said("credits.granted")).toContain(`Granted 100 paid credits (reference “${escapeText(H)}”)`);
    expect(said("sender.request_refused")).toContain(`Refused the sender name “${escapeText(H)}”`);
    expect(said("project.spending_set")).toContain("daily credit cap 10 credits, low-balance warning off");
  });

  it("problems: a refusal's message, a bad request's text, an error's reference", async () => {
    await expectEscaped(actionRefusedPage(chrome, { title: H, message: H, back: { href: JS, label: H } }));
    await expectEscaped(badRequestPage(chrome, H));
    await expectEscaped(errorPage(chrome, H));
  });
});

describe("the send-a-test curl line (issue 53, item 7)", () => {
  const values = { template: "login_code", locale: "en", code: "482913", minutes: "", to: "+995555123456" };

  it("spells out only the simulator's published numbers; any other number is <TO>, the code always <CODE>", () => {
    const shown = curlLine({
      baseUrl: "http://x",
      idempotencyKey: "k",
      values,
      publicNumbers: ["+995555123456"],
    });
    expect(shown).toContain('"to":"+995555123456"');
    const hidden = curlLine({
      baseUrl: "http://x",
      idempotencyKey: "k",
      values,
      publicNumbers: ["+995555000001"],
    });
    expect(hidden).toContain('"to":"<TO>"');
    expect(hidden).not.toContain("995555123456");
    expect(`${shown}${hidden}`).not.toContain("482913");
  });

  it("shell-quotes every value from the form: a key with quotes and $() stays one inert word", async () => {
    const { execFileSync } = await import("node:child_process");
    const idempotencyKey = `k'; touch /tmp/pwned-$(id -u); echo '`;
    const line = curlLine({ baseUrl: "http://x", idempotencyKey, values, publicNumbers: [] });
    // The shell reads the line back into the words curl would get: the key's header intact, nothing run.
    const words = execFileSync(
      "bash",
      ["-c", `set -- ${line.replace(/^curl /, "").replaceAll("\\\n", "")}; printf '%s\\n' "$@"`],
      {
        env: { SMS_API_KEY: "sk_test_x", PATH: process.env.PATH ?? "" },
      },
    ).toString();
    expect(words.split("\n")).toContain(`Idempotency-Key: ${idempotencyKey}`);
    expect(words).toContain("Authorization: Bearer sk_test_x");
  });
});
