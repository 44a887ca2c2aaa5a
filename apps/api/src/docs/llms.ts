// GET /llms.txt and GET /llms-full.txt (the llms.txt convention): the
// documentation as Markdown for language models and coding agents, built at
// start-up from the OpenAPI document that /docs renders (its guide pages in
// the tag descriptions, its operations, their responses and examples) and the
// MCP tools' own descriptions, so that neither can drift from /docs or the
// service. /llms.txt is the short index; /llms-full.txt has every guide page
// and the whole reference inline.
import { TOOLS } from "../mcp/tools.ts";

type Operation = {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: unknown[];
  parameters?: Array<{ in: string; name: string; required?: boolean; description?: string }>;
  requestBody?: { content?: Record<string, { schema?: { $ref?: string } }> };
  responses?: Record<
    string,
    { description?: string; content?: Record<string, { examples?: Record<string, { value?: unknown }> }> }
  >;
};

/** The parts of the OpenAPI document (openapi.ts) read here. */
export type LlmsSource = {
  info: { title: string; description?: string };
  servers?: Array<{ url: string }>;
  tags?: Array<{ name: string; description?: string }>;
  paths?: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, { oneOf?: Array<{ $ref?: string }>; example?: unknown }> };
  "x-tagGroups"?: Array<{ name: string; tags: string[] }>;
};

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

function operations(document: LlmsSource): Array<{ method: string; path: string; operation: Operation }> {
  return Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    METHODS.flatMap((method) => {
      const operation = item[method];
      return operation ? [{ method: method.toUpperCase(), path, operation }] : [];
    }),
  );
}

/** The tag groups of /docs: the guide pages, then the reference's groups. */
function tagGroup(document: LlmsSource, name: string): string[] {
  return document["x-tagGroups"]?.find((group) => group.name === name)?.tags ?? [];
}

/** The first sentence; a paragraph that leads into a list or a table (ends with ":") ends there. */
function firstSentence(text: string | undefined): string {
  const flat = (text ?? "").replace(/\s+/g, " ").trim();
  return (flat.match(/^.*?[.!?](\s|$)/)?.[0] ?? flat).trim().replace(/:$/, ".");
}

/** A guide page's first sentence, when the page opens with prose (not a table or code). */
function pageSummary(page: string | undefined): string {
  const opening = (page ?? "").trimStart();
  return /^(\||```|#)/.test(opening) ? "" : `: ${firstSentence(opening.split("\n\n")[0])}`;
}

/** A guide page's anchor in /llms-full.txt (GitHub's heading slugs). */
const anchor = (title: string) =>
  title
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s-]/gu, "")
    .replace(/\s/g, "-");

const json = (value: unknown) => `\`\`\`json\n${JSON.stringify(value, null, 2)}\n\`\`\``;

/** The request body's examples: one per schema the body may take (one per template). */
function bodyExamples(document: LlmsSource, operation: Operation): unknown[] {
  const ref = operation.requestBody?.content?.["application/json"]?.schema?.$ref;
  const schemas = document.components?.schemas ?? {};
  const named = (reference: string | undefined) => schemas[reference?.split("/").pop() ?? ""];
  const body = named(ref);
  if (!body) return [];
  const variants = body.oneOf ? body.oneOf.map((variant) => named(variant.$ref)) : [body];
  return variants.flatMap((variant) => (variant?.example === undefined ? [] : [variant.example]));
}

function operationText(document: LlmsSource, method: string, path: string, operation: Operation): string {
  const lines = [`### ${operation.summary ?? operation.operationId}: \`${method} ${path}\``, ""];
  if (operation.description) lines.push(operation.description, "");
  lines.push(
    (operation.security?.length ?? 0) > 0
      ? "Authentication: `Authorization: Bearer <API_KEY>`."
      : "No authentication.",
    "",
  );
  for (const parameter of operation.parameters ?? []) {
    lines.push(
      `- ${parameter.in} \`${parameter.name}\`${parameter.required ? " (required)" : ""}: ${parameter.description ?? ""}`,
    );
  }
  if ((operation.parameters?.length ?? 0) > 0) lines.push("");
  const examples = bodyExamples(document, operation);
  if (examples.length > 0) lines.push("Request bodies:", "", ...examples.map(json), "");
  lines.push("Responses:", "");
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    lines.push(
      `- **${status}**: ${(response.description ?? "").replace(/\n\n/g, "\n").replace(/\n/g, "\n  ")}`,
    );
  }
  const success = Object.entries(operation.responses ?? {}).find(([status]) => status.startsWith("2"));
  const example = Object.values(success?.[1].content?.["application/json"]?.examples ?? {})[0]?.value;
  if (example !== undefined) lines.push("", `Example \`${success?.[0]}\` body:`, "", json(example));
  return lines.join("\n");
}

function mcpText(baseUrl: string, full: boolean): string {
  const lines = [
    "## MCP server",
    "",
    `\`${baseUrl}/mcp\`: a Model Context Protocol server (Streamable HTTP, JSON answers, POST and DELETE). ` +
      "The key `create_test_key` makes serves the rest of its MCP session; an `Authorization: Bearer <API_KEY>` header " +
      "of the MCP connection wins over it. A key is never a tool argument; `create_test_key` and `list_templates` " +
      "need none. Resources: the guide, the template catalogue and the simulator numbers. Tool errors carry the " +
      "API's `code`, `message` and `request_id`.",
    "",
  ];
  for (const tool of TOOLS) {
    lines.push(`- \`${tool.name}\`: ${full ? tool.description : firstSentence(tool.description)}`);
  }
  return lines.join("\n");
}

export function buildLlmsTexts(document: LlmsSource): { index: string; full: string } {
  const baseUrl = document.servers?.[0]?.url ?? "";
  const tags = new Map((document.tags ?? []).map((tag) => [tag.name, tag.description ?? ""]));
  const guides = tagGroup(document, "Guide");
  const reference = tagGroup(document, "Reference");
  const ops = operations(document);
  const title = `# ${document.info.title}`;
  const summary = `> ${firstSentence(document.info.description)}`;

  const index = [
    title,
    "",
    summary,
    "",
    document.info.description ?? "",
    "",
    "## Docs",
    "",
    `- [Full documentation for language models](${baseUrl}/llms-full.txt): every guide page and the whole reference, in one Markdown file`,
    `- [Interactive reference](${baseUrl}/docs): the same guide and reference, for a browser`,
    `- [OpenAPI document](${baseUrl}/openapi.json): the machine-readable description (OpenAPI 3.1)`,
    "",
    "## Guides",
    "",
    ...guides.map(
      (name) => `- [${name}](${baseUrl}/llms-full.txt#${anchor(name)})${pageSummary(tags.get(name))}`,
    ),
    "",
    "## API",
    "",
    ...ops.map(
      ({ method, path, operation }) =>
        `- [${operation.summary}](${baseUrl}/llms-full.txt#${anchor(`${operation.summary}: ${method} ${path}`)}): \`${method} ${path}\``,
    ),
    "",
    mcpText(baseUrl, false),
    "",
  ].join("\n");

  const full = [
    title,
    "",
    summary,
    "",
    document.info.description ?? "",
    "",
    ...guides.flatMap((name) => [`## ${name}`, "", tags.get(name) ?? "", ""]),
    ...reference.flatMap((group) => [
      `## ${group}`,
      "",
      tags.get(group) ?? "",
      "",
      ...ops
        .filter(({ operation }) => operation.tags?.includes(group))
        .flatMap(({ method, path, operation }) => [operationText(document, method, path, operation), ""]),
    ]),
    mcpText(baseUrl, true),
    "",
  ].join("\n");
  return { index, full };
}
