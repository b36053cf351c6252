import * as z from "zod";
import { CONTRACT, PATH_PARAM, type RouteContract, type RouteError } from "../api/contract.js";
import { CODES } from "../api/errors.js";


type Schema = Record<string, unknown>;

/**
 * JSON Schema 2020-12 (OpenAPI 3.1's dialect). What a caller sends is read as zod reads
 * input (defaults optional, unknown keys as the schema allows); what it receives as zod
 * writes output, so a plain object answer lists every key it has and no other.
 */
function jsonSchema(schema: z.ZodType, io: "input" | "output" = "input"): Schema {
  const { $schema: _, $defs, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Schema;
  if (!$defs) return rest;
  // A recursive schema (an interface's tree) is a definition of its own, named by its `meta({id})`: the
  // document keeps it once, in `components`, where a reference inside a path can reach it.
  // zod names a definition without an id `__schema0` in every document it writes: two would overwrite each other.
  const unnamed = Object.keys($defs as Schema).filter((name) => name.startsWith("__schema"));
  if (unnamed.length > 0) throw new Error(`a recursive schema needs .meta({ id }) to be named in the document (${unnamed.join(", ")})`);
  const [own, defs] = [rest, $defs].map((s) => JSON.parse(JSON.stringify(s).replaceAll('"#/$defs/', '"#/components/schemas/')) as Schema);
  Object.assign(COMPONENTS, defs);
  return own!;
}

/** The definitions the schemas refer to, gathered as the document is built. */
const COMPONENTS: Record<string, Schema> = {};

/** An event stream, with what each of its frames carries (`x-events`, by SSE `event:` name). */
function eventStream(route: RouteContract): Schema {
  const events = Object.entries(route.events ?? {});
  const names = events.map(([name, e]) => `\`${name}\` (${e.when})`).join("; ");
  return {
    schema: { type: "string", description: events.length ? `Server-sent events: ${names}.` : "Server-sent events." },
    ...(events.length ? { "x-events": Object.fromEntries(events.map(([name, e]) => [name, { description: e.when, ...(e.data ? { data: jsonSchema(e.data, "output") } : {}) }])) } : {}),
  };
}

const ERROR_BODY: Schema = {
  type: "object",
  required: ["error"],
  properties: { error: { type: "string", description: "For people." }, code: { type: "string", description: "For programs to branch on." } },
  additionalProperties: true,
};
const COMPLETIONS_ERROR: Schema = {
  type: "object",
  required: ["error"],
  properties: {
    error: { type: "object", required: ["message", "type", "code"], properties: { message: { type: "string" }, type: { type: "string" }, code: { type: "string" }, param: { type: ["string", "null"] } } },
  },
};

/** Refusals every route of a kind may give, besides its own. */
function commonErrors(key: string, route: RouteContract): RouteError[] {
  const path = key.slice(key.indexOf(" ") + 1);
  const out: RouteError[] = [[403, CODES.untrustedCaller]];
  if (route.localOnly) out.push([403, CODES.callerNotLocal]);
  if (route.body) out.push([400, CODES.invalidBody], [413, CODES.bodyTooLarge]);
  if (route.query) out.push([400, CODES.invalidQuery]);
  if (/:(?!id\b)\w+/.test(path)) out.push([400, CODES.invalidParam]);
  if (path.startsWith("/threads/:id")) out.push([404, CODES.threadNotFound]);
  if (route.drains) out.push([503, CODES.draining]);
  // Any write, whichever object or file it reaches, while the data volume is full.
  if (!key.startsWith("GET ")) out.push([507, CODES.storageFull]);
  return out;
}

function responses(key: string, route: RouteContract): Schema {
  const status = String(route.status ?? 200);
  const json = { schema: route.answer ? jsonSchema(route.answer, "output") : { type: "object" } };
  const media =
    route.media === "sse"
      ? { "text/event-stream": eventStream(route) }
      : route.media === "json-or-sse"
        ? { "application/json": json, "text/event-stream": eventStream(route) }
        : route.media === "json-or-prometheus"
          ? { "application/json": json, "text/plain": { schema: { type: "string", description: "Prometheus' text exposition format." } } }
          : route.media === "binary"
            ? { "*/*": { schema: { type: "string", format: "binary", description: "The bytes, with the media type they were stored with." } } }
            : { "application/json": json };
  const out: Schema = { [status]: { description: "Success.", content: media } };
  for (const other of route.also ?? [])
    out[String(other.status)] = {
      description: `Success: ${other.when}`,
      ...(other.codes ? { "x-codes": other.codes } : {}),
      content: other.answer ? { "application/json": { schema: jsonSchema(other.answer, "output") } } : media,
    };
  const refusals = [...(route.completionsErrors ? [] : commonErrors(key, route)), ...(route.errors ?? [])];
  const byStatus = new Map<number, string[]>();
  for (const [s, code] of refusals) byStatus.set(s, [...(byStatus.get(s) ?? []), code]);
  for (const [s, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    const body = route.completionsErrors ? COMPLETIONS_ERROR : ERROR_BODY;
    const described = `Refused: ${codes.map((c) => `\`${c}\``).join(", ")}.`;
    const shared = out[String(s)] as { description: string; content: Record<string, { schema: Schema }>; "x-codes"?: readonly string[] } | undefined;
    if (shared) {
      // A success status that also carries a refusal that is not an error (an approval already closed): either body.
      shared.description = `${shared.description} Or a refusal that is not an error: ${codes.map((c) => `\`${c}\``).join(", ")}.`;
      shared["x-codes"] = [...(shared["x-codes"] ?? []), ...codes];
      const jsonAnswer = shared.content["application/json"];
      if (jsonAnswer) shared.content = { ...shared.content, "application/json": { schema: { anyOf: [jsonAnswer.schema, body] } } };
      continue;
    }
    out[String(s)] = { description: described, "x-codes": codes, content: { "application/json": { schema: body } } };
  }
  return out;
}

function operation(key: string, route: RouteContract): Schema {
  const path = key.slice(key.indexOf(" ") + 1);
  const parameters: Schema[] = [...path.matchAll(PATH_PARAM)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } }));
  if (route.query) {
    const q = jsonSchema(route.query) as { properties?: Record<string, Schema>; required?: string[] };
    for (const [name, schema] of Object.entries(q.properties ?? {})) parameters.push({ name, in: "query", required: q.required?.includes(name) ?? false, schema });
  }
  return {
    operationId: key.replace(/[^A-Za-z0-9]+/g, "_").replace(/_$/, ""),
    summary: route.summary,
    ...(route.localOnly ? { "x-local-only": true } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(route.body ? { requestBody: { required: true, content: { "application/json": { schema: jsonSchema(route.body) } } } } : {}),
    responses: responses(key, route),
  };
}

/** The OpenAPI 3.1 document of every route, from the contract table and its zod schemas. */
export function openApiDocument(build: string): Schema {
  const paths: Record<string, Record<string, Schema>> = {};
  for (const [key, route] of Object.entries(CONTRACT)) {
    const [method, path] = key.split(" ") as [string, string];
    const openPath = path.replace(PATH_PARAM, "{$1}");
    (paths[openPath] ??= {})[method.toLowerCase()] = operation(key, route);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Agent runtime",
      version: build,
      description: "Durable, event-logged conversation threads with coding-agent engines. Refusals are `{error, code?}`; branch on `code`.",
    },
    servers: [{ url: "http://127.0.0.1:4741" }],
    paths,
    ...(Object.keys(COMPONENTS).length ? { components: { schemas: COMPONENTS } } : {}),
  };
}

let cached: { build: string; text: string } | null = null;

/** The document as served: built once per build, as the schemas cannot change under a running worker. */
export function openApiText(build: string): string {
  if (cached?.build !== build) cached = { build, text: JSON.stringify(openApiDocument(build)) };
  return cached.text;
}
