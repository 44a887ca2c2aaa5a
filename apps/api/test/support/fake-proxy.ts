// A small reverse proxy in front of the real server, for the clients' tests: it
// answers the first POST /v1/messages of each Idempotency-Key with a gateway's
// HTML page (nginx's 502, HAProxy's 504) instead of the service's JSON envelope,
// and forwards everything else. `forward: true` sends that first request on and
// drops the service's answer (the send happened, the answer was lost: a 504 after
// the upstream timed out); `forward: false` never sends it (a 502 while no
// backend could be reached). Each request is recorded with its Idempotency-Key
// and, when forwarded, the service's status and X-Request-Id.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** What a gateway answers: its own HTML page, never the API's envelope. */
export const GATEWAY_PAGES = {
  502: "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
  504: "<html><body><h1>504 Gateway Time-out</h1>\nThe server didn't respond in time.\n</body></html>\n",
} as const;

export type GatewayFault = { status: keyof typeof GATEWAY_PAGES; forward: boolean };

export type ProxiedRequest = {
  method: string;
  path: string;
  idempotencyKey: string | null;
  /** What the client got. */
  answered: number;
  /** The service's answer, when the request was forwarded (also when the proxy then dropped it). */
  upstream: { status: number; requestId: string | null } | null;
};

export type FakeProxy = { url: string; requests: ProxiedRequest[]; close(): Promise<void> };

const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "host", "content-length"]);

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks)));
    request.on("error", reject);
  });
}

export async function startFakeProxy(options: { upstream: string; fault: GatewayFault }): Promise<FakeProxy> {
  const requests: ProxiedRequest[] = [];
  const faulted = new Set<string>();

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const method = request.method ?? "GET";
    const path = request.url ?? "/";
    const header = request.headers["idempotency-key"];
    const idempotencyKey = typeof header === "string" ? header : null;
    const body = await readBody(request);
    const fault =
      method === "POST" && path === "/v1/messages" && idempotencyKey !== null && !faulted.has(idempotencyKey);
    if (fault) faulted.add(idempotencyKey);

    let upstream: ProxiedRequest["upstream"] = null;
    let answer: Response | null = null;
    if (!fault || options.fault.forward) {
      const headers = new Headers();
      for (const [name, value] of Object.entries(request.headers))
        if (typeof value === "string" && !HOP_BY_HOP.has(name)) headers.set(name, value);
      answer = await fetch(`${options.upstream}${path}`, {
        method,
        headers,
        ...(body.length > 0 ? { body: new Uint8Array(body) } : {}),
      });
      upstream = { status: answer.status, requestId: answer.headers.get("x-request-id") };
    }
    if (fault) {
      await answer?.arrayBuffer();
      const status = options.fault.status;
      requests.push({ method, path, idempotencyKey, answered: status, upstream });
      response.writeHead(status, { "Content-Type": "text/html" }).end(GATEWAY_PAGES[status]);
      return;
    }
    const answered = answer as Response;
    requests.push({ method, path, idempotencyKey, answered: answered.status, upstream });
    const headers: Record<string, string> = {};
    answered.headers.forEach((value, name) => {
      if (!HOP_BY_HOP.has(name)) headers[name] = value;
    });
    response.writeHead(answered.status, headers).end(Buffer.from(await answered.arrayBuffer()));
  }

  const server: Server = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(599).end();
      else response.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The access-log lines of the server (`server.output`) as objects. */
function accessLog(output: readonly string[]): Array<Record<string, unknown>> {
  return output.flatMap((line) => {
    try {
      const entry = JSON.parse(line) as Record<string, unknown>;
      return entry.msg === "request" ? [entry] : [];
    } catch {
      return [];
    }
  });
}

/** The project the service answered a request for (its access-log line, by X-Request-Id). */
export function projectOfRequest(output: readonly string[], requestId: string): string | null {
  const line = accessLog(output).find((entry) => entry.request_id === requestId);
  return typeof line?.project_id === "string" ? line.project_id : null;
}

/** How many `POST /v1/messages` of a project the service answered `201` (a new message each). */
export function messagesCreated(output: readonly string[], projectId: string): number {
  return accessLog(output).filter(
    (entry) =>
      entry.method === "POST" &&
      entry.route === "/v1/messages" &&
      entry.status === 201 &&
      entry.project_id === projectId,
  ).length;
}

/**
 * What the clients' proxy tests assert of one logical send through a faulted proxy: the same Idempotency-Key
 * sent twice, the first answered with the gateway's page, and the service's view: the project it was sent for
 * and how many messages that project got.
 */
export function sendThroughProxy(proxy: FakeProxy, output: readonly string[], idempotencyKey: string) {
  const seen = proxy.requests.filter((request) => request.idempotencyKey === idempotencyKey);
  const requestId = seen.map((request) => request.upstream?.requestId).find((id) => typeof id === "string");
  const projectId = requestId ? projectOfRequest(output, requestId) : null;
  return {
    keys: seen.map((request) => request.idempotencyKey),
    answered: seen.map((request) => request.answered),
    upstream: seen.map((request) => request.upstream?.status ?? null),
    projectId,
    messagesCreated: projectId ? messagesCreated(output, projectId) : 0,
  };
}
