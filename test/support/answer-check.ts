import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { readFileSync } from "node:fs";
import { CODES } from "../../src/api/errors.js";

/**
 * Every answer an end-to-end test receives through `call()` is checked against the OpenAPI
 * document the runtime serves (generated in-process from the same contract), so a drift
 * between what a route sends and what the contract says fails the test that saw it.
 */

type Schema = Record<string, unknown>;
interface Response {
  content?: Record<string, { schema?: Schema }>;
  "x-codes"?: string[];
}
interface Operation {
  responses: Record<string, Response>;
}

type Document = { paths: Record<string, Record<string, Operation>>; components?: Schema };

/**
 * Generated once a test run by its global setup (test/support/answer-document.ts) from the
 * checkout as it was when the run began, which is what every front of the run serves;
 * elsewhere (the bench) here. Each file generating its own cost it half a second of CPU.
 */
const generated = process.env.TEST_OPENAPI_DOCUMENT;
const document: Document = generated
  ? (JSON.parse(readFileSync(generated, "utf8")) as Document)
  : ((await import("../../src/http/openapi.js")).openApiDocument("test") as Document);

/** Templates with fewer parameters first, so `/rooms/capabilities` wins over `/rooms/{id}`. */
const templates = Object.keys(document.paths)
  .map((template) => ({
    template,
    params: (template.match(/\{/g) ?? []).length,
    pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, "[^/]+")}$`),
  }))
  .sort((a, b) => a.params - b.params);

/** Answers no route declares because the router or the front gives them to any request. */
const ANY_ROUTE = new Set<string>([
  CODES.routeNotFound,
  CODES.methodNotAllowed,
  CODES.methodNotImplemented,
  CODES.badRequestFraming,
  CODES.headTooLarge,
  CODES.requestTimeout,
  CODES.upstreamUnavailable,
  CODES.storageFull,
]);

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
const compiled = new Map<Schema, ValidateFunction>();

function validator(schema: Schema): ValidateFunction {
  let v = compiled.get(schema);
  // A recursive schema's references point into the document's `components`: each schema is compiled with them beside it.
  if (!v) compiled.set(schema, (v = ajv.compile(document.components ? { ...schema, components: document.components } : schema)));
  return v;
}

/** The runtimes whose answers are checked: fronts of this checkout, which serve this contract. */
const runtimes = new Set<string>();

export function checkAnswersOf(baseUrl: string): void {
  runtimes.add(baseUrl);
}

/** A front that stopped: its port may serve something else next, in this file or a later one in the same worker. */
export function stopCheckingAnswersOf(baseUrl: string): void {
  runtimes.delete(baseUrl);
}

/** A refusal's code: the runtime's `{error, code}`, or OpenAI's `{error: {code}}` on the completions routes. */
function codeOf(body: unknown): string | null {
  if (typeof body !== "object" || body === null) return null;
  const { code, error } = body as { code?: unknown; error?: unknown };
  if (typeof code === "string") return code;
  const inner = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof inner === "string" ? inner : null;
}

/** What is wrong with an answer by the document, or null. Only for bases registered with `checkAnswersOf`. */
export function answerProblem(base: string, method: string, target: string, status: number, contentType: string, body: unknown): string | null {
  if (!runtimes.has(base)) return null;
  const path = new URL(target, "http://x").pathname;
  const template = templates.find((t) => t.pattern.test(path))?.template;
  const op = template ? document.paths[template]![method.toLowerCase()] : undefined;
  const code = codeOf(body);
  if (code && ANY_ROUTE.has(code)) return null;
  const at = `${method} ${path} answered ${status}`;
  if (!op) return `${at}, but the document has no ${method} ${template ?? path}`;
  const declared = op.responses[String(status)];
  if (!declared) return `${at}, a status the document does not declare for ${method} ${template} (${JSON.stringify(body).slice(0, 300)})`;
  if (status >= 400) {
    if (!code) return `${at} with no code: ${JSON.stringify(body).slice(0, 300)}`;
    if (declared["x-codes"] && !declared["x-codes"].includes(code)) return `${at} with code ${code}, which the document does not declare for that status (it declares ${declared["x-codes"].join(", ")})`;
  }
  const media = contentType.split(";")[0]!.trim();
  const schema = declared.content?.[media]?.schema ?? declared.content?.["*/*"]?.schema;
  if (!declared.content) return null;
  if (!schema) return `${at} as ${media}, which the document does not list (${Object.keys(declared.content).join(", ")})`;
  if (media !== "application/json") return null;
  const validate = validator(schema);
  if (validate(body)) return null;
  const errors = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || "/"} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ""}`);
  return `${at}, which does not match the document: ${errors.join("; ")} — body: ${JSON.stringify(body).slice(0, 400)}`;
}
