import { z } from "zod";
import type { Meta } from "../../trpc/trpc.ts";

export const ZLivenessResponse = z.strictObject({ status: z.literal("alive") }).meta({ id: "Liveness" });

export const ZReadinessResponse = z
  .strictObject({
    status: z.enum(["ready", "not_ready"]),
    database: z.enum(["ok", "unreachable"]),
  })
  .meta({ id: "Readiness" });

export const livenessMeta: Meta = {
  openapi: {
    method: "GET",
    path: "/healthz",
    tags: ["health"],
    summary: "Liveness",
    description: "Reports process liveness only. No authentication.",
  },
  responses: { 200: "The process is alive." },
};

export const readinessMeta: Meta = {
  openapi: {
    method: "GET",
    path: "/readyz",
    tags: ["health"],
    summary: "Readiness",
    description: "Ready when the database answers. No authentication; no connection details are exposed.",
  },
  responses: { 200: "Ready to serve.", 503: "The database cannot be reached." },
};
