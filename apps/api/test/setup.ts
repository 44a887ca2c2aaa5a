import { dropAllTestDatabases } from "@sms/db/testing";
import { afterAll } from "vitest";

afterAll(async () => {
  await dropAllTestDatabases();
});
