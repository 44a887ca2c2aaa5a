// Helpers for the message suites: live keys inserted straight into the
// database (the API issues test keys only), request bodies and the shape of a
// Message resource (spec 2.1).
import { apiKeyPrefix, newApiKey, newId, sha256Hex } from "@sms/crypto";
import type { PrismaClient } from "@sms/db/testing";
import { expect } from "vitest";
import { sendMessageRequest } from "../harness.ts";

export const ORDINARY = "+995555123456";
export const SIM = {
  rejected: "+995500000001",
  unreachable: "+995500000002",
  indeterminate: "+995500000003",
  undeliverable: "+995500000004",
} as const;

export type SendBody = { to: string; template: string; variables: Record<string, string>; locale?: string };

export function body(overrides: Partial<SendBody> = {}): SendBody {
  return {
    to: ORDINARY,
    template: "verification_code",
    variables: { code: "482913" },
    locale: "en",
    ...overrides,
  };
}

export type MessageJson = {
  id: string;
  object: string;
  to: string;
  status: string;
  segments: number | null;
  error: { code: string; message: string } | null;
  created_at: string;
  updated_at: string;
};

export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

/** All eight fields, in the documented formats, with the number masked. */
export function expectMessageShape(message: MessageJson, to: string): void {
  expect(Object.keys(message)).toEqual([
    "id",
    "object",
    "to",
    "status",
    "segments",
    "error",
    "created_at",
    "updated_at",
  ]);
  expect(message.id).toMatch(/^msg_[0-9a-z]{26}$/);
  expect(message.object).toBe("message");
  expect(message.to).toBe(`+9955\u2022\u2022\u2022\u2022\u2022\u2022${to.slice(-2)}`);
  expect(message.to).toHaveLength(13);
  expect(["queued", "submitted", "delivered", "undeliverable", "failed", "unknown"]).toContain(
    message.status,
  );
  expect(message.segments).toBe(1);
  if (message.error !== null) {
    expect(Object.keys(message.error)).toEqual(["code", "message"]);
    expect(message.error.message.length).toBeGreaterThan(10);
  }
  expect(message.created_at).toMatch(TIMESTAMP);
  expect(message.updated_at).toMatch(TIMESTAMP);
  expect(message.updated_at >= message.created_at).toBe(true);
}

/**
 * A live key for a new project, written the way the operator's tools do: the
 * key's SHA-256 hash and prefix, paid credits with their ledger entry.
 */
export async function insertLiveKey(
  prisma: PrismaClient,
  options: { credits?: number; paid?: boolean } = {},
): Promise<{ apiKey: string; projectId: string }> {
  const credits = options.credits ?? 100;
  const paid = options.paid ?? true;
  const projectId = newId("prj");
  const apiKey = newApiKey("live");
  await prisma.project.create({
    data: { id: projectId, claimedAt: new Date(), creditBalance: credits, hasPaidCredits: paid },
  });
  if (credits > 0) {
    await prisma.creditLedgerEntry.create({
      data: { id: newId("cre"), projectId, kind: paid ? "grant_paid" : "grant_free", amount: credits },
    });
  }
  await prisma.apiKey.create({
    data: {
      id: newId("key"),
      projectId,
      mode: "live",
      keyHash: await sha256Hex(apiKey),
      prefix: apiKeyPrefix(apiKey),
    },
  });
  return { apiKey, projectId };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `check` every `everyMs` until it returns true or `timeoutMs` passes. */
export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  everyMs = 25,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

export type Sent = { status: number; body: Record<string, unknown>; headers: Headers };

/**
 * send/read helpers that keep every response body and header set they saw,
 * for suites that later scan them for secrets.
 */
export function recordingClient(
  call: (path: string, init?: RequestInit) => Promise<Response>,
  defaultBody: object,
) {
  const responses: string[] = [];
  return {
    responses,
    async send(
      apiKey: string,
      idempotencyKey: string = crypto.randomUUID(),
      payload: object = defaultBody,
    ): Promise<Sent> {
      const response = await call("/v1/messages", sendMessageRequest(apiKey, idempotencyKey, payload));
      const text = await response.text();
      responses.push(text, JSON.stringify([...response.headers]));
      return {
        status: response.status,
        body: JSON.parse(text) as Record<string, unknown>,
        headers: response.headers,
      };
    },
    /** GET /v1/messages/{id}; fails the test unless it answers 200. */
    async read(apiKey: string, id: string): Promise<Record<string, unknown>> {
      const response = await call(`/v1/messages/${id}`, { headers: { Authorization: `Bearer ${apiKey}` } });
      const text = await response.text();
      responses.push(text);
      expect(response.status).toBe(200);
      return JSON.parse(text) as Record<string, unknown>;
    },
  };
}

/**
 * The counts are per calendar minute (and UTC day) of the server's clock: a test whose sends straddled a
 * minute's end would see the minute start again. Each starts at least 12 s before one.
 */
export async function awayFromMinuteEdge(): Promise<void> {
  const second = new Date().getUTCSeconds() + new Date().getUTCMilliseconds() / 1000;
  if (second >= 48) await new Promise((resolve) => setTimeout(resolve, (61 - second) * 1000));
}
