// Benchmark of @sms/templates: validations + renders per second (renderMessage:
// template check, variable rules, link/phone screen, rendering, segment counting)
// for valid and invalid inputs, and countSegments alone. Pure CPU, no I/O. On demand
// only, never in CI:
//
//   cd /work/main && node scripts/bootstrap.mjs bench templates
//
// Each scenario runs a fixed number of calls after a warm-up, stopping early after
// 0.5 s, so the whole run stays within a few seconds. Prints one line per scenario
// and a JSON summary.
import { countSegments, LOCALES, renderMessage, TEMPLATE_IDS, type Locale } from "@sms/templates";

const MAX_CALLS = 2_000_000;
const MAX_MS = 500;
const WARM_UP_CALLS = 20_000;

type Scenario = { name: string; inputs: readonly (() => unknown)[] };
type Result = { scenario: string; calls: number; seconds: number; per_second: number };

const validInputs = TEMPLATE_IDS.flatMap((template) =>
  LOCALES.map(
    (locale: Locale) => () =>
      renderMessage({
        template,
        locale,
        variables:
          template === "password_reset_code" ? { code: "48291375", minutes: "999" } : { code: "482913" },
      }),
  ),
);

const invalidInputs = [
  () => renderMessage({ template: "welcome", variables: { code: "1234" } }),
  () => renderMessage({ template: "login_code", variables: null }),
  () => renderMessage({ template: "login_code", variables: {} }),
  () => renderMessage({ template: "login_code", variables: { code: "1234", extra: "x" } }),
  () => renderMessage({ template: "login_code", variables: { code: 1234 } }),
  () => renderMessage({ template: "login_code", variables: { code: "12 34" } }),
  () => renderMessage({ template: "password_reset_code", variables: { code: "1234", minutes: "015" } }),
  () => renderMessage({ template: "login_code", variables: { code: "+995555123456" } }),
];

const longGeorgian = "ა".repeat(300);
const longGsm = `${"a".repeat(152)}€${"a".repeat(300)}`;
const countInputs = [
  () => countSegments("Your verification code is 48291375. Do not share it with anyone."),
  () => countSegments("შესვლის კოდი: 48291375. თუ არ მოგითხოვიათ, გამოტოვეთ ეს შეტყობინება."),
  () => countSegments(longGeorgian),
  () => countSegments(longGsm),
];

const scenarios: Scenario[] = [
  { name: "renderMessage, valid (3 templates × 2 locales, longest values)", inputs: validInputs },
  { name: "renderMessage, invalid (8 kinds of refusal)", inputs: invalidInputs },
  { name: "countSegments alone (short/long, GSM-7/UCS-2)", inputs: countInputs },
];

function run({ name, inputs }: Scenario): Result {
  let sink = 0;
  for (let i = 0; i < WARM_UP_CALLS; i++) sink ^= inputs[i % inputs.length]?.() === undefined ? 1 : 0;
  const start = performance.now();
  let calls = 0;
  while (calls < MAX_CALLS) {
    for (const input of inputs) sink ^= input() === undefined ? 1 : 0;
    calls += inputs.length;
    if ((calls & 0x3ff) < inputs.length && performance.now() - start > MAX_MS) break;
  }
  const seconds = (performance.now() - start) / 1000;
  if (sink === -1) console.log("unreachable");
  return { scenario: name, calls, seconds: round(seconds, 3), per_second: Math.round(calls / seconds) };
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

const results = scenarios.map(run);
for (const { scenario, calls, seconds, per_second } of results) {
  console.log(
    `${scenario}: ${per_second.toLocaleString("en-US")} per second (${calls} calls in ${seconds} s)`,
  );
}
console.log(JSON.stringify({ bench: "templates", results }, null, 2));
