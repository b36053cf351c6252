import type { Handler, Hono } from "hono";
import type { z, ZodType } from "zod";
import { CONTRACT, type Declared, type RouteKey } from "../api/contract.js";
import type { AppEnv } from "./app-env.js";
import { localCallerOnly } from "./caller-gate.js";
import { notWhileDraining } from "./drain-gate.js";
import { jsonBody, valid } from "./validate.js";

type PathOf<K extends RouteKey> = K extends `${string} ${infer P}` ? P : never;

/** What a route's own checks read for its handler: its body and query, as hono's validators type them. */
type Checked<R, Own extends ReadsItself> = {
  in: (R extends { body: infer B extends ZodType } ? ("body" extends Own ? object : { json: z.input<B> }) : object) &
    (R extends { query: infer Q extends ZodType } ? ("query" extends Own ? object : { query: Record<string, string | string[]> }) : object);
  out: (R extends { body: infer B extends ZodType } ? ("body" extends Own ? object : { json: z.output<B> }) : object) &
    (R extends { query: infer Q extends ZodType } ? ("query" extends Own ? object : { query: z.output<Q> }) : object);
};

/**
 * What a handler reads itself, with the declared schema or by rules the schema cannot say:
 * completions refuses a body in OpenAI's shape; the log routes read cursors and limits
 * through src/http/query.ts, which clamps them and names the cursor a refusal is about.
 */
type ReadsItself = "body" | "query" | never;

/**
 * Serves one route of the contract: the method, path, local-caller gate, drain gate, body and query checks
 * all come from its declaration in src/api/contract.ts (as `createRoute` does for hono's
 * zod-openapi), so the router writes only what the route does.
 */
export function serve<K extends RouteKey, Own extends ReadsItself = never>(
  app: Hono<AppEnv>,
  key: K,
  handler: Handler<AppEnv, PathOf<K>, Checked<Declared<K>, Own>>,
  readsItself: readonly Own[] = [],
): void {
  const row = CONTRACT[key];
  const at = key.indexOf(" ");
  const method = key.slice(0, at);
  const path = key.slice(at + 1);
  const own = new Set<string>(readsItself);
  const checks = [
    ...(row.localOnly ? [localCallerOnly] : []),
    ...(row.drains ? [notWhileDraining] : []),
    ...(row.query && !own.has("query") ? [valid("query", row.query)] : []),
    ...(row.body && !own.has("body") ? [jsonBody(row.body)] : []),
  ];
  app.on(method, path, ...(checks as []), handler as Handler<AppEnv>);
}
