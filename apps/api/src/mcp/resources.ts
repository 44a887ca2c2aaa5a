// The MCP server's resources (resources/list, resources/read): what an agent
// may read before it calls a tool, from the same sources /docs uses. The guide
// pages are /docs's (docs/guide.ts, one resource each, Markdown); the template
// catalogue is @sms/templates'; the simulator numbers are @sms/provider-sim's.
// list_templates answers the catalogue and the numbers too, for clients that
// do not read resources.
import { SIMULATOR_NUMBERS } from "@sms/provider-sim";
import { LOCALES, TEMPLATE_IDS, TEMPLATES, VARIABLE_RULES } from "@sms/templates";
import { z } from "zod";
import { guidePages } from "../docs/guide.ts";

/** What a test key's send to each number answers, and what to do about it. */
export const SIMULATOR_TABLE = [
  { to: SIMULATOR_NUMBERS.rejected, answer: "failed, error provider_rejected", advice: "do not retry" },
  {
    to: SIMULATOR_NUMBERS.unreachable,
    answer: "tool error provider_unavailable (nothing kept)",
    advice: "retry with the same idempotency_key",
  },
  {
    to: SIMULATOR_NUMBERS.indeterminate,
    answer: "unknown, error provider_unavailable",
    advice: "do not retry: it may have been sent",
  },
  {
    to: SIMULATOR_NUMBERS.undeliverable,
    answer: "submitted, then undeliverable",
    advice: "wait_for_message; handle the failure",
  },
  { to: "any other valid number", answer: "submitted, then delivered", advice: "wait_for_message" },
] as const;

export const ZSimulatorNumbers = z.array(
  z.strictObject({
    to: z.string().describe("The recipient to send to with a test key."),
    answer: z.string().describe("What the send answers."),
    advice: z.string().describe("What an agent does about it."),
  }),
);

export const ZTemplateCatalogue = z.strictObject({
  templates: z.array(
    z.strictObject({
      id: z.enum(TEMPLATE_IDS),
      variables: z.array(z.strictObject({ name: z.string(), rule: z.string(), example: z.string() })),
      text: z
        .record(z.enum(LOCALES), z.string())
        .describe("The template's text per locale, {variables} in braces."),
    }),
  ),
  locales: z.array(z.enum(LOCALES)),
  default_locale: z.enum(LOCALES),
  recipient_format: z.string(),
});

/** The templates, their variables' rules and texts, the locales and the recipient format. */
export function templateCatalogue(): z.output<typeof ZTemplateCatalogue> {
  return {
    templates: TEMPLATE_IDS.map((id) => ({
      id,
      variables: TEMPLATES[id].variables.map((name) => ({
        name,
        rule: VARIABLE_RULES[name].requirement,
        example: VARIABLE_RULES[name].example,
      })),
      text: { ...TEMPLATES[id].text },
    })),
    locales: [...LOCALES],
    default_locale: "ka",
    recipient_format: "+9955 followed by exactly eight digits, e.g. +995555123456; never normalised",
  };
}

export type McpResource = {
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: "text/markdown" | "application/json";
  text(): string;
};

const URI_BASE = "sms-api://";

/** A guide page's name in its URI: "Getting started" → "getting-started". */
const slug = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");

/** Every resource, for a service at `baseUrl` (the guide's examples name it). */
export function mcpResources(baseUrl: string): McpResource[] {
  const guide = guidePages(baseUrl).map(
    (page): McpResource => ({
      uri: `${URI_BASE}guide/${slug(page.name)}`,
      name: `guide/${slug(page.name)}`,
      title: `Guide: ${page.name}`,
      description: `The "${page.name}" page of the API guide (/docs), in Markdown.`,
      mimeType: "text/markdown",
      text: () => `# ${page.name}\n\n${page.description}\n`,
    }),
  );
  return [
    ...guide,
    {
      uri: `${URI_BASE}templates`,
      name: "templates",
      title: "Template catalogue",
      description:
        "The message templates (id, variables and their rules, the text in Georgian and English), the locales and " +
        "the recipient format, as JSON.",
      mimeType: "application/json",
      text: () => JSON.stringify(templateCatalogue(), null, 2),
    },
    {
      uri: `${URI_BASE}simulator-numbers`,
      name: "simulator-numbers",
      title: "Simulator numbers",
      description:
        "The test numbers that make a test key answer as a failing provider would, what each answers and what to do, as JSON.",
      mimeType: "application/json",
      text: () => JSON.stringify(SIMULATOR_TABLE, null, 2),
    },
  ];
}
