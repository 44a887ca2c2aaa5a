import { dropAllTestDatabases } from "@sms/db/testing";
import { afterAll, expect } from "vitest";
import { contractProblems, recordFetches } from "./support/contract.ts";

// The contract test (support/contract.ts): every answer the API gives this
// file's tests, in process or over HTTP, must match /openapi.json.
recordFetches();

afterAll(async () => {
  await dropAllTestDatabases();
  const { checked, problems } = await contractProblems();
  expect(problems, `${checked} responses checked against the OpenAPI document`).toEqual([]);
});
