// Run under Deno by src/deno.test.ts: exercises the adapter's classification
// against the fake uBill (itself running under Deno, through node:http) and
// prints one JSON line with what it saw.
//
//   (run by src/deno.test.ts with the project's Deno and its DENO_RUN_FLAGS)

import type { Logger, SmsProvider, SubmitRequest } from "@sms/domain";
import { type FakeUbillReply, getRefusingPort, startFakeUbill } from "../src/fake-server.ts";
import { createUbillProvider } from "../src/index.ts";

const API_KEY = "deno-secret-key-5f1c9a";
const SLOW_MS = 1500;

/** Every log call, and the `problem` of the latest warning. */
const logged: unknown[] = [];
let lastProblem: unknown = null;
const logger: Logger = {
  debug: (obj, msg) => void logged.push([obj, msg]),
  info: (obj, msg) => void logged.push([obj, msg]),
  warn(obj, msg) {
    logged.push([obj, msg]);
    lastProblem = (obj as { problem?: unknown }).problem ?? null;
  },
  error: (obj, msg) => void logged.push([obj, msg]),
  child(bindings) {
    logged.push([bindings]);
    return logger;
  },
};

const request = (to: string): SubmitRequest => ({
  messageId: "msg_deno",
  to,
  text: "Your verification code is 1234.",
  sender: { name: "SMSGE", brandId: null },
});

const fake = await startFakeUbill({ apiKey: API_KEY });
const options = { apiKey: API_KEY, defaultBrandId: 1, submitTimeoutMs: 300, statusTimeoutMs: 300, logger };
const provider = createUbillProvider({ ...options, baseUrl: fake.baseUrl });
const refused = createUbillProvider({ ...options, baseUrl: `http://127.0.0.1:${await getRefusingPort()}` });

const submits: Record<string, { kind: string; problem: unknown }> = {};
const reasons: string[] = [];
async function submit(
  name: string,
  via: SmsProvider,
  to: string,
  reply?: FakeUbillReply,
): Promise<string | null> {
  if (reply !== undefined) fake.replyToNumber(to, reply);
  lastProblem = null;
  const outcome = await via.submit(request(to));
  submits[name] = { kind: outcome.kind, problem: lastProblem };
  if ("reason" in outcome) reasons.push(outcome.reason);
  return outcome.kind === "accepted" ? outcome.providerRef : null;
}

const smsId = await submit("accept", provider, "+995599000001");
await submit("refused", refused, "+995599000002");
await submit("slow", provider, "+995599000004", { kind: "slow", delayMs: SLOW_MS });
await submit("dropped", provider, "+995599000005", { kind: "drop" });
await submit("unauthorized", provider, "+995599000006", { kind: "http", status: 401 });
await submit("garbage", provider, "+995599000007", { kind: "garbage" });
await submit("truncated", provider, "+995599000008", { kind: "truncate" });
await submit("serverError", provider, "+995599000009", { kind: "http", status: 500 });

const statuses: string[] = [];
if (smsId !== null) {
  const query = { providerRef: smsId, to: "+995599000001", submittedAt: new Date() };
  statuses.push((await provider.checkStatus(query)).kind);
  fake.setReport(smsId, "1");
  statuses.push((await provider.checkStatus(query)).kind);
  fake.replyNext({ kind: "slow", delayMs: SLOW_MS }, "report");
  statuses.push((await provider.checkStatus(query)).kind);
  statuses.push((await refused.checkStatus(query)).kind);
  // A report call leaves a keep-alive connection in the pool; a send dropped
  // after that must still reach uBill once (Deno's fetch re-sends requests on
  // a reused connection that closes early).
  await provider.checkStatus(query);
  await submit("droppedAfterReuse", provider, "+995599000010", { kind: "drop" });
}

const sendsPerNumber: Record<string, number> = {};
for (const send of fake.sends()) {
  const number = String((send.json as { numbers?: unknown[] } | undefined)?.numbers?.[0]);
  sendsPerNumber[number] = (sendsPerNumber[number] ?? 0) + 1;
}
await fake.close();

console.log(
  JSON.stringify({
    runtime: typeof (globalThis as { Deno?: unknown }).Deno === "object" ? "deno" : "other",
    submits,
    statuses,
    sendsPerNumber,
    keyLeaked: JSON.stringify({ reasons, logged }).includes(API_KEY),
  }),
);
