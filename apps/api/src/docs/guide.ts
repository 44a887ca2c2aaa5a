// The guide pages of the reference at /docs: Markdown in the OpenAPI
// document's info.description and tag descriptions, which Scalar renders
// before the operations. Built from the same facts the service uses (the
// error table, the simulator's numbers, real response shapes), so that the
// guide cannot drift from the API. Depth stays in docs/*.md.
import {
  API_ERROR_CODES,
  ERROR_STATUS,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  MAX_WAIT_SECONDS,
  MESSAGE_EXAMPLES,
  TEST_KEY_EXAMPLE,
  VERIFICATION_CODE_LENGTH,
  VERIFICATION_EXAMPLES,
  VERIFICATION_MAX_ATTEMPTS,
} from "@sms/contract";
import { DEFAULT_VERIFICATION_LIFETIME_MINUTES } from "@sms/domain";
import { SIMULATOR_NUMBERS } from "@sms/provider-sim";
import { TEMPLATE_IDS, TEMPLATES } from "@sms/templates";
import { ERROR_GUIDE } from "../contract/wording.ts";
import { FRESH_KEY } from "./code-samples.ts";

/** Spec 6: when to read a message again. The client package follows the same numbers. */
export const POLLING = { firstDelaySeconds: 2, factor: 2, maxDelaySeconds: 30 } as const;

const json = (value: unknown) => `\`\`\`json\n${JSON.stringify(value, null, 2)}\n\`\`\``;

function gettingStarted(baseUrl: string): string {
  const key = {
    ...TEST_KEY_EXAMPLE,
    claim_url: `${baseUrl}/claim/HiuEQ4teHBceUms-jFvdrfEPpm2th2z1GHA3HxZkh2M`,
  };
  return `## Getting started

Three requests: get a key, send a code, read the outcome. Test keys never send a real SMS and need no account.
Plan for one limit that test keys never meet: **live keys send at most 2 messages a minute and 10 a UTC day to one
number** (by default; messages and verification codes together, see Limits), so a QA team signing in again and
again with one phone meets it first in production.
Paste into bash or zsh, on Linux or macOS (needs only \`curl\` and \`node\`; Node.js and Python versions follow):

**1. Get a test key** (no authentication, no body): \`POST /v1/test-keys\`

\`\`\`bash
BASE_URL=${baseUrl}
TEST_KEY=$(curl -sS -X POST $BASE_URL/v1/test-keys)
API_KEY=$(node -pe 'JSON.parse(process.argv[1]).api_key' "$TEST_KEY")
\`\`\`

\`201 Created\`. \`api_key\` is shown only here; give \`claim_url\` to a human, who claims the project in a browser:

${json(key)}

**2. Send a code**: \`POST /v1/messages\`, with a new \`Idempotency-Key\` for every message

\`\`\`bash
MESSAGE=$(curl -sS -X POST $BASE_URL/v1/messages \\
  -H "Authorization: Bearer $API_KEY" \\
  -H "Idempotency-Key: ${FRESH_KEY.shell}" \\
  -H "Content-Type: application/json" \\
  -d '{"to":"+995555123456","template":"verification_code","variables":{"code":"482913"},"locale":"en"}')
MESSAGE_ID=$(node -pe 'JSON.parse(process.argv[1]).id' "$MESSAGE")
\`\`\`

\`201 Created\`. \`submitted\` means the provider accepted it, not that it was delivered:

${json(MESSAGE_EXAMPLES.submitted.value)}

**3. Read the outcome**: \`GET /v1/messages/{message_id}\`, polling as below

\`\`\`bash
curl -sS $BASE_URL/v1/messages/$MESSAGE_ID -H "Authorization: Bearer $API_KEY"
\`\`\`

\`200 OK\`, once the status check has run (test messages settle within about 30 s):

${json(MESSAGE_EXAMPLES.delivered.value)}

The same three steps in Node.js (18 or later; save as \`first.mjs\`, run \`node first.mjs\`):

\`\`\`js
const BASE_URL = "${baseUrl}";
const { api_key } = await (await fetch(\`\${BASE_URL}/v1/test-keys\`, { method: "POST" })).json();
const auth = { Authorization: \`Bearer \${api_key}\` };
const sent = await fetch(\`\${BASE_URL}/v1/messages\`, {
  method: "POST",
  // A new Idempotency-Key for each message; reuse it only to retry this one.
  headers: { ...auth, "Idempotency-Key": ${FRESH_KEY.node}, "Content-Type": "application/json" },
  body: JSON.stringify({ to: "+995555123456", template: "verification_code", variables: { code: "482913" }, locale: "en" }),
});
const message = await sent.json();
console.log(sent.status, message.status);
let delay = ${POLLING.firstDelaySeconds};
for (let state = message; ["queued", "submitted"].includes(state.status); delay = Math.min(delay * ${POLLING.factor}, ${POLLING.maxDelaySeconds})) {
  await new Promise((resolve) => setTimeout(resolve, delay * 1000));
  state = await (await fetch(\`\${BASE_URL}/v1/messages/\${message.id}\`, { headers: auth })).json();
  console.log(state.status);
}
\`\`\`

And in Python (3.9 or later, standard library only; \`python3 first.py\`):

\`\`\`python
import json, time, urllib.request, uuid

BASE_URL = "${baseUrl}"

def call(method, path, body=None, headers={}):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(BASE_URL + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", **headers})
    with urllib.request.urlopen(request) as response:
        return response.status, json.load(response)

_, key = call("POST", "/v1/test-keys")
auth = {"Authorization": "Bearer " + key["api_key"]}
# A new Idempotency-Key for each message; reuse it only to retry this one.
status, message = call("POST", "/v1/messages",
                       {"to": "+995555123456", "template": "verification_code",
                        "variables": {"code": "482913"}, "locale": "en"},
                       {**auth, "Idempotency-Key": ${FRESH_KEY.python}})
print(status, message["status"])
delay, state = ${POLLING.firstDelaySeconds}, message
while state["status"] in ("queued", "submitted"):
    time.sleep(delay)
    delay = min(delay * ${POLLING.factor}, ${POLLING.maxDelaySeconds})
    _, state = call("GET", "/v1/messages/" + message["id"], headers=auth)
    print(state["status"])
\`\`\`

The full number and the text are never returned. Every error has one shape, \`{"error":{"code","message","request_id"}}\`,
and the \`X-Request-Id\` header carries the same id: quote it when asking for help.`;
}

function testMode(): string {
  const n = SIMULATOR_NUMBERS;
  return `## Test mode and the simulator

A key that starts with \`sk_test_\` sends through a built-in simulator: no SMS leaves the service and no credits are
spent, but every answer has the live shape. These recipients make the simulator answer as a real provider might:

| \`to\` | Answer | Later | What your code should do |
|---|---|---|---|
| \`${n.rejected}\` | \`201\`, \`failed\`, error \`provider_rejected\` | — | Show a failure; do not retry. |
| \`${n.unreachable}\` | \`503 provider_unavailable\` (nothing kept) | — | Retry with the **same** \`Idempotency-Key\`: it is safe. |
| \`${n.indeterminate}\` | \`201\`, \`unknown\`, error \`provider_unavailable\` | — | Do **not** retry automatically: it may have been sent. |
| \`${n.undeliverable}\` | \`201\`, \`submitted\` | \`undeliverable\` within about 30 s | Poll; handle the final failure. |
| any other valid number | \`201\`, \`submitted\` | \`delivered\` within about 30 s | Poll until final. |

Live keys meet the same answers from the real provider, uBill. \`503 provider_unavailable\` comes only when nothing
was sent (uBill could not be reached, or said it could not take the message now), so a retry with the same key is
safe. When uBill, or a proxy in front of it, answers with an HTTP \`5xx\`, a live send is \`201\` with status
\`unknown\`, not \`503\`: such an answer does not prove that the SMS was not sent, and uBill has no idempotency key,
so the service never sends it again, and your code should not either (read the message later instead).

Templates: ${TEMPLATE_IDS.map((id) => `\`${id}\` (${TEMPLATES[id].variables.map((v) => `\`${v}\``).join(", ")})`).join(", ")}.
\`code\` is 4 to 8 digits, \`minutes\` 1 to 999 without leading zeros, both as JSON strings; \`locale\` is \`ka\` (default)
or \`en\`. A human who opens \`claim_url\` and signs in gets free credits and can create live keys (\`sk_live_…\`)
on the dashboard; the test key keeps working.`;
}

function idempotency(): string {
  return `## Idempotency and retries

Every \`POST /v1/messages\` carries an \`Idempotency-Key\` header: 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters, new for each
logical message (a UUID is ideal), and the same for every retry of that message. Keys are kept 24 hours, per
project and key mode.

| You send | Answer |
|---|---|
| A new key | \`201\` and a new message. |
| The same key and the same body (\`to\`, \`template\`, \`variables\`, \`locale\`; an omitted \`locale\` is \`ka\`) | \`200\` with the original message, byte for byte, and \`Idempotent-Replayed: true\`. Nothing is sent again and no limit is counted. |
| The same key with a different body | \`409 idempotency_key_reused\`: a new message needs a new key. |
| The same key while its first request is still running | The request waits for the first one's answer and answers it (\`200\`, \`Idempotent-Replayed: true\`); if the first never finishes, \`500 internal_error\` with \`Retry-After\`. |
| No key | \`400 idempotency_key_required\`. |

Which answers to retry, always with the same key:

- **Safe**: a network error or timeout with no answer, \`500 internal_error\`, \`503 provider_unavailable\`, \`429 rate_limited\`
  (after \`Retry-After\` seconds), and a \`502\`, \`503\` or \`504\` page from a proxy or load balancer in front of
  the service. A retry either replays the first answer or sends once.
- **Not automatically**: a \`201\` with status \`unknown\` (the SMS may have gone out; read it later instead), \`429
  daily_limit_reached\` (wait for the reset time in the message), any other \`4xx\` (change the request first).
- **Never**: a \`409\`. \`idempotency_key_reused\` means the key belongs to a different request, and sending it again
  gets the same answer; \`verification_not_pending\` means the verification has ended.

Validation failures store nothing: after a \`400\` the same key can be used with a corrected body.`;
}

function errors(): string {
  const rows = API_ERROR_CODES.map((code) => {
    const guide = ERROR_GUIDE[code];
    return `| \`${code}\`<br>${ERROR_STATUS[code]} | ${guide.when} | ${guide.action} |`;
  });
  return `## Errors

Every error answers with the same envelope and the request's id, also in the \`X-Request-Id\` header:

${json({ error: { code: "invalid_recipient", message: ERROR_GUIDE.invalid_recipient.example, request_id: "req_01m81b5h80dyb9cpnywpdjqhd4" } })}

Branch on \`error.code\` (stable); show or log \`error.message\` (it says what to change; its wording may change). New
codes may be added within \`/v1\`: treat an unknown code by its HTTP status.

| Code, HTTP status | When | What to do |
|---|---|---|
${rows.join("\n")}

When several apply, the first in this order answers: the route (404, 405), authentication (401, 403), the
\`Idempotency-Key\`, the body's transport (415, 413), the body (\`invalid_request\`, then \`to\`, \`template\`,
\`variables\`), idempotency (\`200\` replay, \`409\`), limits (\`429\`, \`402\`), the provider (\`503\`).

Failures after a message was accepted are not HTTP errors: the message's \`error\` field carries them (\`MessageError\`).`;
}

function polling(baseUrl: string): string {
  return `## Polling and the status lifecycle

There are no webhooks: read \`GET /v1/messages/{message_id}\` until the status is final. Read first about
${POLLING.firstDelaySeconds} seconds after sending, double the wait after each read, and cap it at ${POLLING.maxDelaySeconds} seconds
(2, 4, 8, 16, 30, 30, … s). A live delivery report usually arrives within seconds but can take minutes; the service
asks the provider every 20 seconds.

| Status | Meaning | Final | \`error\` |
|---|---|---|---|
| \`queued\` | Written; the submission has not finished (seen only in flight or after a crash) | no | \`null\` |
| \`submitted\` | The provider accepted it; not a delivery claim | no | \`null\` |
| \`delivered\` | Reliable delivery confirmation | yes | \`null\` |
| \`undeliverable\` | Reliable report that it could not be delivered | yes | \`invalid_recipient\` |
| \`failed\` | Rejected at submission, or reported failed | yes | \`provider_rejected\`, \`sender_not_allowed\`, \`invalid_message\`, \`invalid_recipient\` |
| \`unknown\` | No definitive result: it may or may not have been sent | yes | \`provider_unavailable\` |

\`queued\` → \`submitted\` → \`delivered\` or \`undeliverable\`; a submission can also end at once in \`failed\` or
\`unknown\`, and a message still \`submitted\` after 72 hours becomes \`unknown\`. Final statuses never change. A
test message still \`submitted\` after 10 seconds is not stuck.

\`\`\`bash
# BASE_URL, API_KEY and MESSAGE_ID as set in Getting started
DELAY=${POLLING.firstDelaySeconds}
while true; do
  sleep "$DELAY"
  STATE=$(curl -sS "$BASE_URL/v1/messages/$MESSAGE_ID" -H "Authorization: Bearer $API_KEY")
  STATUS=$(node -pe 'JSON.parse(process.argv[1]).status' "$STATE")
  if [ "$STATUS" != queued ] && [ "$STATUS" != submitted ]; then echo "$STATE"; break; fi
  DELAY=$((DELAY * ${POLLING.factor} > ${POLLING.maxDelaySeconds} ? ${POLLING.maxDelaySeconds} : DELAY * ${POLLING.factor}))
done
\`\`\`

### Waiting at the server instead (an extension)

Both \`GET /v1/messages/{message_id}\` and \`GET /v1/verifications/{verification_id}\` answer with an \`ETag\`. Send it
back in \`If-None-Match\` with \`Prefer: wait=N\` (N at most ${MAX_WAIT_SECONDS}; more is taken as ${MAX_WAIT_SECONDS}) and the
request is held until the state changes (\`200\`, the new state) or N seconds pass (\`304\`, no body): one request
per change instead of a poll every few seconds. An answer that carries \`Preference-Applied: wait=N\` was held; one
without it was answered at once (the instance holds as many as it takes), so sleep on the schedule above before
the next read. Without these headers everything above holds unchanged. The client libraries do this for you.

\`\`\`js
const BASE_URL = "${baseUrl}";
const { api_key } = await (await fetch(\`\${BASE_URL}/v1/test-keys\`, { method: "POST" })).json();
const auth = { Authorization: \`Bearer \${api_key}\` };
const sent = await fetch(\`\${BASE_URL}/v1/messages\`, {
  method: "POST",
  headers: { ...auth, "Idempotency-Key": ${FRESH_KEY.node}, "Content-Type": "application/json" },
  body: JSON.stringify({ to: "+995555123456", template: "verification_code", variables: { code: "482913" }, locale: "en" }),
});
const { id } = await sent.json();
const sleep = (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));
let delay = ${POLLING.firstDelaySeconds};
let etag = null;
await sleep(delay);
for (;;) {
  // After the first read: "answer when it changes, or after 25 s".
  const headers = etag ? { ...auth, "If-None-Match": etag, Prefer: "wait=25" } : auth;
  const response = await fetch(\`\${BASE_URL}/v1/messages/\${id}\`, { headers });
  etag = response.headers.get("etag") ?? etag;
  if (response.status === 200) {
    const message = await response.json();
    if (!["queued", "submitted"].includes(message.status)) {
      console.log(message.status);
      break;
    }
  }
  // Not held (an instance at its bound, or a server without the extension): the schedule above.
  if (!response.headers.has("preference-applied")) {
    await sleep(delay);
    delay = Math.min(delay * ${POLLING.factor}, ${POLLING.maxDelaySeconds});
  }
}
\`\`\``;
}

function limits(): string {
  return `## Limits

| Limit | Value | Answer |
|---|---|---|
| New messages per project | 100 per minute (configurable) | \`429 rate_limited\`, \`Retry-After\` |
| Messages to one number (live keys; messages and verification codes together) | 2 per minute and 10 per UTC day (configurable); test keys are never limited per number, but each test send says what a live key would have left (\`Live-Recipient-Remaining\`) | \`429 rate_limited\` (the minute) / \`daily_limit_reached\` (the day) |
| Instant test keys | a few per minute and a few dozen per day per address, and a daily total | \`429 rate_limited\` / \`daily_limit_reached\` |
| Free tier (live keys, no paid credits) | 20 segments per UTC day | \`429 daily_limit_reached\` |
| Credits (live keys) | one per segment, reserved before sending | \`402 insufficient_credits\` |
| \`Idempotency-Key\` | 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters, kept 24 hours | \`400\` |
| Request body | 16 KiB | \`413 payload_too_large\` |
| \`code\` / \`minutes\` | 4–8 digits / 1–999 | \`400 invalid_variables\` |
| Messages of an unclaimed project | deleted 30 days after sending | — |

\`POST /v1/messages\` (\`201\`) and \`POST /v1/test-keys\` answer with \`RateLimit-Limit\`, \`RateLimit-Remaining\` and
\`RateLimit-Reset\` (seconds until the window resets) for the limit nearest to exhaustion; every \`429\` also carries
\`Retry-After\` in seconds. A new test send (\`POST /v1/messages\` or \`POST /v1/verifications\`, \`201\`) also carries, as an
extension, \`Live-Recipient-Limit: minute=2, day=10\` and \`Live-Recipient-Remaining: minute=N, day=M\`: what a live key
would have left for this number, so that a test with one phone meets the live per-number limit before production does.`;
}

function clients(): string {
  return `## Client libraries

Three clients ship in this repository, one per language, with the same behaviour: a new \`Idempotency-Key\` for each
send, kept across that send's retries; \`Retry-After\` honoured; bounded timeouts; typed errors carrying \`code\`,
\`status\` and \`request_id\`; a send retried with its key after a proxy's \`502\`/\`504\` page; no automatic retry of a
\`201\` \`unknown\`, a \`429 daily_limit_reached\` or any \`409\`; and a wait for the final status that waits at the server
where it can (\`Prefer: wait\`, see "Polling") and otherwise polls on its schedule (${POLLING.firstDelaySeconds} s, doubling, at most
${POLLING.maxDelaySeconds} s). Each also starts and checks verifications, and names a check's outcome with the API's words:
\`approved\`, \`pending\` (a wrong code), \`max_attempts_reached\`, or \`verification_not_pending\` (the \`409\`, returned
as an outcome rather than thrown).

| Language | Package | Install (from a checkout of the repository) | First call |
|---|---|---|---|
| TypeScript, JavaScript (Node 20+, Deno, Bun) | \`@sms/api-client\` (\`packages/api-client\`) | \`pnpm pack\` in \`packages/api-client\`, then \`npm install ./sms-api-client-0.1.0.tgz\` | \`createSmsClient({ baseUrl, apiKey }).sendMessage({ to, template, variables })\` |
| Python 3.9+ (standard library only) | \`sms-api-ge\` (\`packages/client-python\`, module \`sms_api\`) | \`pip install ./packages/client-python\` | \`sms_api.Client(base_url=…, api_key=…).send_message(to=…, template=…, variables=…)\` |
| PHP 8.1+ (no extensions beyond the standard ones, no curl) | \`packages/client-php\` (PSR-4 \`SmsApi\\\`) | \`require 'packages/client-php/autoload.php';\`, or Composer with a path repository | \`(new SmsApi\\Client(baseUrl: …, apiKey: …))->sendMessage([...])\` |

Each package's README has the details. Any other language: generate a client from \`/openapi.json\` (it describes
every answer exactly), and keep the rules of "Idempotency and retries".`;
}

/** The "Verify a phone number" page: the verifications extension (issue 22), start → check → let the user in. */
function verifyPhone(baseUrl: string): string {
  const started = VERIFICATION_EXAMPLES.pending.value;
  return `## Verify a phone number

An extension of the API: the service draws the one-time code, sends it through the same path as
\`POST /v1/messages\` (same credits, free tier, limits, simulator numbers and \`Idempotency-Key\` rules), keeps only a
keyed hash of it, and checks what your user typed: in constant time, at most ${VERIFICATION_MAX_ATTEMPTS} wrong codes, for
${DEFAULT_VERIFICATION_LIFETIME_MINUTES} minutes (by default). You never see or store the code.

**1. Start**: \`POST /v1/verifications\` with a new \`Idempotency-Key\`

\`\`\`bash
BASE_URL=${baseUrl}  # API_KEY as in Getting started
VERIFICATION=$(curl -sS -X POST $BASE_URL/v1/verifications \\
  -H "Authorization: Bearer $API_KEY" \\
  -H "Idempotency-Key: ${FRESH_KEY.shell}" \\
  -H "Content-Type: application/json" \\
  -d '{"to":"+995555123456","template":"login_code","locale":"en"}')
VERIFICATION_ID=$(node -pe 'JSON.parse(process.argv[1]).id' "$VERIFICATION")
\`\`\`

\`201 Created\`, and the code is on its way (\`template\`: \`verification_code\` by default, \`login_code\` or
\`password_reset_code\`; \`code_length\`: ${VERIFICATION_CODE_LENGTH.min} to ${VERIFICATION_CODE_LENGTH.max}, default ${VERIFICATION_CODE_LENGTH.default}):

${json(started)}

**2. Check** what the user typed: \`POST /v1/verifications/{verification_id}/check\` (whitespace around the code is
removed; inside it, it is kept)

\`\`\`bash
curl -sS -X POST $BASE_URL/v1/verifications/$VERIFICATION_ID/check \\
  -H "Authorization: Bearer $API_KEY" -H "Content-Type: application/json" -d '{"code":"000000"}'
\`\`\`

**3. Let the user in only on \`200\` with \`"status": "approved"\`.** Anything else is a no:

| Answer | Meaning | What to do |
|---|---|---|
| \`200\`, \`approved\` | The right code | Let the user in. The verification is spent: any later check answers \`409\`, whatever the code. |
| \`200\`, \`pending\` | A wrong code; \`attempts_remaining\` is one fewer | Ask again. |
| \`200\`, \`max_attempts_reached\` | The ${VERIFICATION_MAX_ATTEMPTS}th wrong code | Start a new verification. |
| \`409 verification_not_pending\` | Already approved, expired, canceled (a newer verification to the number replaced it), out of attempts, or its SMS failed (\`send_failed\`); the same answer whatever the code | Start a new verification. |
| \`404 verification_not_found\` | Not this project's | Check the id and the key. |
| A timeout, \`5xx\`, no answer | Unknown | **Not approved.** Retry the check; if the retry answers \`409\`, read the verification (\`GET\`): \`approved\` means your first check approved it. |

**The user asks for the code again?** Start again (a new \`Idempotency-Key\`) and check the new \`id\`: within the
lifetime, with the same \`template\` and \`code_length\`, the same code is sent again, so a late first SMS still works.
The earlier verification becomes \`canceled\`; the new one keeps its \`expires_at\` and the attempts left (wrong codes
count across both).

A check never costs credits; a start costs what its SMS costs. \`GET /v1/verifications/{verification_id}\` reads the
current state (\`message_id\` is the SMS, readable with \`GET /v1/messages/{message_id}\`).

**Test keys** send nothing; their code is always zeros of the requested length (\`000000\` by default), so your own
tests can finish a verification. The simulator numbers behave as for messages: \`${SIMULATOR_NUMBERS.rejected}\` gives
\`send_failed\`, \`${SIMULATOR_NUMBERS.unreachable}\` answers \`503 provider_unavailable\` and keeps nothing (retry with the same key),
\`${SIMULATOR_NUMBERS.indeterminate}\` and \`${SIMULATOR_NUMBERS.undeliverable}\` give \`pending\` (the message becomes \`unknown\` or \`undeliverable\`).

**Live keys** are limited per number against SMS pumping: a few starts per minute (\`429 rate_limited\`, \`Retry-After\` at
most 60 seconds) and per UTC day (\`429 daily_limit_reached\` until midnight UTC). Watch the dashboard's conversion rate
(approved / started): a sudden drop is the sign of pumping.`;
}

/** info.description: what the API is, and where to start. */
export function referenceIntro(): string {
  return (
    "Send template-based verification, sign-in and password-reset codes to Georgian mobile numbers (`+9955XXXXXXXX`), " +
    "in Georgian or English, and read each message's delivery state. JSON over HTTPS; private beta, version 0.1.0.\n\n" +
    "New here? Read **Getting started** (three requests: key → send → poll), then **Test mode and the simulator**. " +
    "Every error code, when it happens and what to do, is under **Errors**."
  );
}

/** Guide pages: tags without operations, which Scalar shows as pages before the reference. */
export function guidePages(baseUrl: string): Array<{ name: string; description: string }> {
  return [
    ["Getting started", gettingStarted(baseUrl)],
    ["Test mode and the simulator", testMode()],
    ["Idempotency and retries", idempotency()],
    ["Errors", errors()],
    ["Polling and the status lifecycle", polling(baseUrl)],
    ["Limits", limits()],
    ["Verify a phone number", verifyPhone(baseUrl)],
    ["Client libraries", clients()],
  ].map(([name, markdown]) => ({
    name: name as string,
    // The page's own title is the tag's name.
    description: (markdown as string).replace(/^## [^\n]*\n\n/, ""),
  }));
}

/** The operations' groups, in the order the reference shows them: messages first, health last. */
export const TAGS = [
  {
    name: "Messages",
    description:
      "Send a templated SMS and read its state. Authenticate with `Authorization: Bearer <API_KEY>`. " +
      `Test keys: \`${SIMULATOR_NUMBERS.rejected}\`…\`${SIMULATOR_NUMBERS.undeliverable.slice(-4)}\` simulate failures (see *Test mode and the simulator*). ` +
      `Poll for the outcome: first read after about ${POLLING.firstDelaySeconds} s, doubling, capped at ${POLLING.maxDelaySeconds} s.`,
  },
  {
    name: "Verifications",
    description:
      "An extension of the contract: the service draws a one-time code, sends it, and checks it (see *Verify a phone number*). " +
      "The same keys, headers and limits as messages; the code is never returned, logged or stored.",
  },
  {
    name: "Test keys",
    description:
      "An instant test key for a new project, no account needed; a human claims the project later.",
  },
  {
    name: "Health",
    description: "Liveness and readiness for load balancers and orchestrators. No authentication.",
  },
] as const;
