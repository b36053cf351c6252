import { Validator } from "@seriousme/openapi-schema-validator";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { COMPLETIONS_CODES } from "../../src/api/completions.js";
import { CONTRACT, PATH_PARAM } from "../../src/api/contract.js";
import { CODES } from "../../src/api/errors.js";
import { OpenApiDocument } from "../../src/api/operator.js";
import { openApiDocument } from "../../src/http/openapi.js";

const root = resolve(import.meta.dirname, "../..");

/**
 * The router, as the fuzz test reads it: worker code, typechecked by the worker's project,
 * that Node runs as it is. Its handlers carry what they check (src/http/validate.ts).
 */
interface RouterRoute {
  method: string;
  path: string;
  handler: { drains?: true; localOnly?: true } & Record<symbol, { target: string; schema: unknown } | undefined>;
}
const appModule = join(root, "src/app.ts");
const validateModule = join(root, "src/http/validate.ts");
const { app } = (await import(appModule)) as { app: { routes: RouterRoute[]; request(path: string, init?: RequestInit, env?: object): Promise<Response> } };
const { VALIDATES } = (await import(validateModule)) as { VALIDATES: symbol };

/** Each route's handlers (its middleware and its own), by `METHOD /path`. */
function routerRoutes(): Map<string, RouterRoute["handler"][]> {
  const out = new Map<string, RouterRoute["handler"][]>();
  for (const r of app.routes) {
    if (r.method === "ALL" || r.path.includes("*")) continue;
    const key = `${r.method} ${r.path}`;
    out.set(key, [...(out.get(key) ?? []), r.handler]);
  }
  return out;
}

/** Codes only the front answers, or the router's own fallbacks, which belong to no one route. */
const NOT_A_ROUTE_S = new Set<string>([
  CODES.upstreamUnavailable,
  CODES.badRequestFraming,
  CODES.headTooLarge,
  CODES.methodNotImplemented,
  CODES.requestTimeout,
  CODES.methodNotAllowed,
  CODES.internal,
  // A bug in one of the front's bindings, passed on by whichever route asked it.
  CODES.bindingFailed,
  // The engine host's answer to the Thread's steer, recorded in the log as a steer not taken.
  CODES.steerNotTaken,
  // Any write while the data volume is full: the router's, from wherever the fault surfaced.
  CODES.storageFull,
  // A clash of random thread ids: a bug, not a refusal any route means to give.
  CODES.threadExists,
  CODES.routeNotFound,
  // The Thread's answer to the Host's eviction under the session cap, which no route asks.
  CODES.turnNotIdle,
  // Every route's, added to each by src/http/openapi.ts.
  CODES.invalidBody,
  CODES.invalidQuery,
  CODES.invalidParam,
  CODES.untrustedCaller,
  // Every `localOnly` route's, added to it by src/http/openapi.ts.
  CODES.callerNotLocal,
  CODES.bodyTooLarge,
  CODES.draining,
  // The code service's answers to the worker's `/git/...` asks (docs/code-host.md, "Getting the code") that no route passes on: the worker names worktrees one mode each and makes them before it reads them.
  CODES.worktreeNotFound,
  CODES.worktreeModeMismatch,
]);

describe("the contract (src/api/contract.ts)", () => {
  const routes = routerRoutes();

  it("names every route the router serves, and no other", () => {
    expect(Object.keys(CONTRACT).sort()).toEqual([...routes.keys()].sort());
  });

  it("holds the schemas the router validates with, and marks the routes that refuse while draining", () => {
    // Completions reads its body itself, to refuse in the OpenAI shape: with the same schema.
    const validatedByHand = new Set(["POST /v1/chat/completions"]);
    for (const [key, handlers] of routes) {
      const route = CONTRACT[key as keyof typeof CONTRACT]!;
      const checks = handlers.map((h) => h[VALIDATES]).filter((v) => v !== undefined);
      const body = checks.find((v) => v.target === "json")?.schema;
      const query = checks.find((v) => v.target === "query")?.schema;
      if (!validatedByHand.has(key)) expect(body, `${key}: body`).toBe(route.body);
      if (query !== undefined) expect(query, `${key}: query`).toBe(route.query);
      expect(handlers.some((h) => h.drains === true), `${key}: drains`).toBe(route.drains === true);
      expect(handlers.some((h) => h.localOnly === true), `${key}: localOnly`).toBe(route.localOnly === true);
    }
  });

  it("marks the operator's account resets and the access-token route local-only, and only them, in the router and the document", () => {
    const local = Object.entries(CONTRACT).filter(([, route]) => route.localOnly).map(([key]) => key);
    expect(local.sort()).toEqual(["DELETE /accounts/:id/model-refusals/:model", "POST /accounts/:id/access-token", "POST /accounts/:id/engine-b/credit-reset"]);
    const doc = openApiDocument("test") as { paths: Record<string, Record<string, { "x-local-only"?: true; responses: Record<string, { "x-codes"?: string[] }> }>> };
    for (const key of Object.keys(CONTRACT)) {
      const [method, path] = key.split(" ") as [string, string];
      const op = doc.paths[path.replace(PATH_PARAM, "{$1}")]![method.toLowerCase()]!;
      expect(op["x-local-only"], key).toBe(local.includes(key) ? true : undefined);
      expect(op.responses["403"]?.["x-codes"]?.includes(CODES.callerNotLocal) ?? false, key).toBe(local.includes(key));
    }
  });

  it("names only codes the runtime has, and every code some route answers", () => {
    const runtime = new Set<string>(Object.values(CODES));
    const completions = new Set<string>(Object.values(COMPLETIONS_CODES));
    const used = new Set<string>();
    for (const [key, route] of Object.entries(CONTRACT))
      for (const [status, code] of [...(route.errors ?? []), ...(route.also ?? []).flatMap((a) => (a.codes ?? []).map((c) => [a.status, c] as const))]) {
        expect(route.completionsErrors ? completions.has(code) : runtime.has(code), `${key}: ${code}`).toBe(true);
        expect(status, `${key}: ${code}`).toBeGreaterThanOrEqual(200);
        used.add(code);
      }
    expect([...runtime].filter((code) => !used.has(code) && !NOT_A_ROUTE_S.has(code))).toEqual([]);
  });

  it("declares every success's answer: a schema for each JSON body, the frames of each event stream", () => {
    const lacking: string[] = [];
    for (const [key, route] of Object.entries(CONTRACT)) {
      const json = route.media === undefined || route.media === "json-or-sse" || route.media === "json-or-prometheus";
      if (json && !route.answer) lacking.push(`${key}: no answer schema`);
      if ((route.media === "sse" || route.media === "json-or-sse") && Object.keys(route.events ?? {}).length === 0) lacking.push(`${key}: no event frames`);
    }
    expect(lacking).toEqual([]);
  });

  it("declares each JSON success exactly: its fields and no other, each alternative so", () => {
    // Passed on as the provider sent it, and the document itself: their declared fields, and any other (docs/decisions.md).
    const LOOSE = new Set(["GET /openapi.json", "POST /v1/chat/completions"]);
    type Schema = { type?: string; properties?: object; anyOf?: Schema[]; additionalProperties?: unknown };
    const exact = (s: Schema, loose: boolean): boolean =>
      s.anyOf ? s.anyOf.every((a) => exact(a, loose)) : s.type === "object" && Object.keys(s.properties ?? {}).length > 0 && (loose || s.additionalProperties === false);
    const doc = openApiDocument("test") as { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>> };
    const inexact: string[] = [];
    for (const key of Object.keys(CONTRACT)) {
      const [method, path] = key.split(" ") as [string, string];
      const op = doc.paths[path.replace(PATH_PARAM, "{$1}")]![method.toLowerCase()]!;
      for (const [status, r] of Object.entries(op.responses)) {
        const schema = r.content?.["application/json"]?.schema;
        if (!status.startsWith("2") || !schema) continue;
        // A status that also carries a refusal (approval-closed) is the answer or the error body.
        const answers = schema.anyOf?.some((a) => a.additionalProperties === true) ? schema.anyOf.filter((a) => a.additionalProperties !== true) : [schema];
        if (!answers.every((a) => exact(a, LOOSE.has(key)))) inexact.push(`${key} ${status}`);
      }
    }
    expect(inexact).toEqual([]);
    // The one loose answer of the runtime's own: the document it serves matches what it declares of it.
    expect(OpenApiDocument.safeParse(doc).success).toBe(true);
  });

  it("is in docs/api.md, route by route", () => {
    const doc = readFileSync(join(root, "docs/api.md"), "utf8");
    const missing = Object.keys(CONTRACT).filter((key) => !doc.includes(key.slice(key.indexOf(" ") + 1)));
    expect(missing).toEqual([]);
  });
});

describe("GET /openapi.json", () => {
  it("is a valid OpenAPI 3.1 document with every route, its schemas and its error codes", async () => {
    const res = await app.request("/openapi.json", { headers: { host: "127.0.0.1:4741" } }, {});
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, any>> };
    const checked = await new Validator().validate(doc);
    expect(checked.errors ?? []).toEqual([]);
    expect(checked.valid).toBe(true);
    expect(doc.openapi).toBe("3.1.0");
    const served = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`));
    expect(served.sort()).toEqual(Object.keys(CONTRACT).sort());

    const spawn = doc.paths["/spawn"]!.post;
    expect(spawn.requestBody.content["application/json"].schema.properties.engine.enum).toEqual(["engine_a", "engine_b", "pi"]);
    expect(spawn.responses["201"]).toBeDefined();
    expect(spawn.responses["503"]["x-codes"]).toEqual(expect.arrayContaining(["draining", "engine-unavailable", "spawns-paused"]));
    const tail = doc.paths["/threads/{id}/tail"]!.get;
    expect(tail.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(["path:id", "query:after", "query:before", "query:limit", "query:wait"]);
    expect(tail.responses["404"]["x-codes"]).toEqual(["thread-not-found"]);
    // A parameter with digits in its name is one parameter.
    const attachment = doc.paths["/threads/{id}/attachments/{sha256}"]!.get;
    expect(attachment.parameters.map((p: { name: string }) => p.name)).toEqual(["id", "sha256"]);
    // Bytes are documented as bytes, and a route's other successes as successes.
    expect(Object.keys(attachment.responses["200"].content)).toEqual(["*/*"]);
    const retain = doc.paths["/workspaces/{name}/memory/retain"]!.post;
    expect([retain.responses["201"].description, retain.responses["200"].description]).toEqual(["Success.", expect.stringMatching(/^Success: The same text was kept already/)]);
    const send = doc.paths["/threads/{id}/send"]!.post.responses["202"];
    expect(send).toMatchObject({ description: expect.stringMatching(/^Success: /), "x-codes": ["seat-elsewhere", "thread-degraded", "thread-archived"] });
    expect(send.content["application/json"].schema).not.toHaveProperty("required", ["error"]);
    const completions = doc.paths["/v1/chat/completions"]!.post;
    expect(completions.responses["429"]["x-codes"]).toEqual(["accounts_exhausted", "rate_limited"]);
    expect(completions.responses["429"].content["application/json"].schema.properties.error.type).toBe("object");
  });
});
