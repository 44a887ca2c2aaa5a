// The request samples of /docs (OpenAPI `x-codeSamples`), one per language,
// for every operation. Scalar's own generated samples are hidden (docs.ts):
// they put the parameter's example into the `Idempotency-Key` header, so a
// copied script replayed its first message on every later run (`200`,
// nothing sent) and got `409` for a changed body. Here every sample that
// sends a message makes a new key each time it runs, with an expression of
// its own language, and reads the API key from the environment.

/** One sample as Scalar reads it (`x-codeSamples`). */
export type CodeSample = { lang: string; label: string; source: string };

export type SampleRequest = {
  method: string;
  /** `/v1/messages/{message_id}`: each `{name}` becomes a variable of the sample's language. */
  path: string;
  /** The API key goes in `Authorization`. */
  protect: boolean;
  /** The request carries an `Idempotency-Key`: each run of the sample makes a new one. */
  idempotent: boolean;
  /** The JSON body (the schema's own example), if the operation takes one. */
  body?: unknown;
};

/**
 * What makes a new key in each language: never a fixed value. The shell's
 * reads 16 random bytes as hex with tools that Linux and macOS both have.
 */
export const FRESH_KEY = {
  shell: "$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')",
  node: "crypto.randomUUID()",
  python: "str(uuid.uuid4())",
  php: "bin2hex(random_bytes(16))",
} as const;

const names = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as string);
const upper = (name: string) => name.toUpperCase();
const camel = (name: string) => name.replace(/_(\w)/g, (_, c: string) => c.toUpperCase());

function shell(baseUrl: string, request: SampleRequest): string {
  const url = `${baseUrl}${request.path.replace(/\{(\w+)\}/g, (_, n: string) => `$${upper(n)}`)}`;
  // The status goes to stderr, so the body stays pipeable: a 200 on a send is a replay.
  const lines = [`curl -sS -X ${request.method} "${url}" -w '%{stderr}HTTP %{http_code}\\n'`];
  if (request.protect) lines.push(`-H "Authorization: Bearer $SMS_API_KEY"`);
  if (request.idempotent) lines.push(`-H "Idempotency-Key: ${FRESH_KEY.shell}"`);
  if (request.body !== undefined) {
    lines.push(`-H "Content-Type: application/json"`);
    lines.push(`-d '${JSON.stringify(request.body)}'`);
  }
  return lines.join(" \\\n  ");
}

function node(baseUrl: string, request: SampleRequest): string {
  const path = request.path.replace(/\{(\w+)\}/g, (_, n: string) => `\${${camel(n)}}`);
  const headers: string[] = [];
  if (request.protect) headers.push("Authorization: `Bearer ${process.env.SMS_API_KEY}`");
  if (request.idempotent)
    headers.push(`// A new key for each message; reuse it only to retry this one.\n    "Idempotency-Key": ${FRESH_KEY.node}`);
  if (request.body !== undefined) headers.push(`"Content-Type": "application/json"`);
  const init = [`method: "${request.method}"`];
  if (headers.length > 0) init.push(`headers: {\n    ${headers.join(",\n    ")},\n  }`);
  if (request.body !== undefined) init.push(`body: JSON.stringify(${JSON.stringify(request.body)})`);
  const declared = names(request.path).map((n) => `const ${camel(n)} = process.argv[2];\n`).join("");
  return `${declared}const response = await fetch(\`${baseUrl}${path}\`, {\n  ${init.join(",\n  ")},\n});\nconsole.log(response.status, await response.json());`;
}

function python(baseUrl: string, request: SampleRequest): string {
  const path = request.path.replace(/\{(\w+)\}/g, (_, n: string) => `{${n}}`);
  const headers: string[] = [];
  if (request.protect) headers.push(`"Authorization": f"Bearer {os.environ['SMS_API_KEY']}"`);
  if (request.idempotent) headers.push(`# A new key for each message; reuse it only to retry this one.\n        "Idempotency-Key": ${FRESH_KEY.python}`);
  if (request.body !== undefined) headers.push(`"Content-Type": "application/json"`);
  const imports = [
    "json",
    "os",
    ...(names(request.path).length > 0 ? ["sys"] : []),
    "urllib.request",
    ...(request.idempotent ? ["uuid"] : []),
  ];
  const declared = names(request.path).map((n) => `${n} = sys.argv[1]\n`).join("");
  const data = request.body !== undefined ? `\n    data=json.dumps(${JSON.stringify(request.body)}).encode(),` : "";
  return `import ${imports.join(", ")}

${declared}request = urllib.request.Request(
    f"${baseUrl}${path}",
    method="${request.method}",${data}
    headers={${headers.length > 0 ? `\n        ${headers.join(",\n        ")},\n    ` : ""}},
)
with urllib.request.urlopen(request) as response:  # raises HTTPError on 4xx/5xx: read its .read()
    print(response.status, json.load(response))`;
}

function php(baseUrl: string, request: SampleRequest): string {
  const path = request.path.replace(/\{(\w+)\}/g, (_, n: string) => `{$${camel(n)}}`);
  const headers: string[] = [];
  if (request.protect) headers.push(`'Authorization: Bearer ' . getenv('SMS_API_KEY')`);
  if (request.idempotent) headers.push(`// A new key for each message; reuse it only to retry this one.\n        'Idempotency-Key: ' . ${FRESH_KEY.php}`);
  if (request.body !== undefined) headers.push(`'Content-Type: application/json'`);
  const declared = names(request.path).map((n) => `$${camel(n)} = $argv[1];\n`).join("");
  const content =
    request.body !== undefined
      ? `\n    'content' => json_encode(${phpLiteral(request.body)}),`
      : "";
  return `<?php
${declared}$context = stream_context_create(['http' => [
    'method' => '${request.method}',
    'header' => [${headers.length > 0 ? `\n        ${headers.join(",\n        ")},\n    ` : ""}],${content}
    'ignore_errors' => true, // read 4xx/5xx bodies too
]]);
$body = file_get_contents("${baseUrl}${path}", false, $context);
echo $http_response_header[0], "\\n", $body, "\\n";`;
}

/** A JSON value as a PHP array literal (objects become string-keyed arrays). */
function phpLiteral(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(phpLiteral).join(", ")}]`;
  if (value !== null && typeof value === "object")
    return `[${Object.entries(value)
      .map(([key, item]) => `'${key.replace(/'/g, "\\'")}' => ${phpLiteral(item)}`)
      .join(", ")}]`;
  if (typeof value === "string") return `'${value.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
  return JSON.stringify(value);
}

/** The samples of one operation: curl, Node.js, Python and PHP. */
export function codeSamples(baseUrl: string, request: SampleRequest): CodeSample[] {
  return [
    { lang: "shell", label: "curl", source: shell(baseUrl, request) },
    { lang: "node", label: "Node.js", source: node(baseUrl, request) },
    { lang: "python", label: "Python", source: python(baseUrl, request) },
    { lang: "php", label: "PHP", source: php(baseUrl, request) },
  ];
}
