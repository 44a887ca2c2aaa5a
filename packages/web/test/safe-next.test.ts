// issue 25 L2: `next` after sign-in never leaves /dashboard, however it is encoded.
import { describe, expect, it } from "vitest";
import { safeNext } from "../src/routes/session.ts";

describe("safeNext", () => {
  it("keeps a path inside the dashboard, with its query", () => {
    for (const path of [
      "/dashboard",
      "/dashboard/projects/prj_x/keys",
      "/dashboard/operator?requests=abc%3D",
    ]) {
      expect(safeNext(path), path).toBe(path);
    }
  });

  it("drops encoded and double-encoded dot segments, backslashes, // and control characters", () => {
    for (const path of [
      "/dashboard/%2e%2e/%2e%2e/x",
      "/dashboard/%2E%2E/claim",
      "/dashboard/.%2e/x",
      "/dashboard/%252e%252e/%252e%252e/x",
      "/dashboard/%25252e%25252e/x",
      "/dashboard/%5c..%5cx",
      "/dashboard/%5c%5cevil.example",
      "/dashboard/%2f%2fevil.example",
      "/dashboard/projects/%2e",
      "/dashboard/%00x",
      "/dashboard/%2e%2e%2fclaim",
      "/dashboard/%",
      "/dashboard/sign-%6fut",
      "/dashboard/../claim",
      "//evil.example/dashboard",
      "/dashboardx",
    ]) {
      expect(safeNext(path), path).toBeNull();
    }
  });
});
