// Runs around every test file: whatever test database a file forgot to drop
// (or could not, because a test failed before its own cleanup) is dropped here.
import { afterAll } from "vitest";
import { dropAllTestDatabases } from "../src/testing/index.ts";

afterAll(async () => {
  await dropAllTestDatabases();
});
