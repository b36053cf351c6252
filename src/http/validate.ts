import { zValidator } from "@hono/zod-validator";
import type { Context, ValidationTargets } from "hono";
import { createMiddleware } from "hono/factory";
import { routePath } from "hono/route";
import type { z, ZodType } from "zod";
import { CODES } from "../api/errors.js";
import type { AppEnv } from "./app-env.js";
import { refused } from "./answer.js";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../rules/json-depth.js";
import { keysAt } from "./schema-keys.js";

type Target = "json" | "query" | "param" | "header";

const TARGET: Record<Target, { noun: string; code: string }> = {
  json: { noun: "body", code: CODES.invalidBody },
  query: { noun: "query", code: CODES.invalidQuery },
  param: { noun: "path", code: CODES.invalidParam },
  header: { noun: "header", code: CODES.invalidHeader },
};

interface Issue {
  code: string;
  path: readonly PropertyKey[];
  message: string;
  keys?: readonly string[];
}

/**
 * One sentence for an issue. An unknown key is most often a misspelt one, so the sentence
 * names the keys the route takes where the key was found, which zod's own message does not.
 */
function sentence(c: Context, schema: ZodType, noun: string, i: Issue): string {
  const where = i.path.map(String).join(".");
  if (i.code !== "unrecognized_keys" || !i.keys) return where ? `${where}: ${i.message}` : i.message;
  const unknown = i.keys.map((k) => JSON.stringify(k)).join(", ");
  const known = keysAt(schema, i.path);
  const takes = known === null ? "" : `; ${c.req.method} ${routePath(c)} takes ${where ? `in ${where} ` : ""}${known.length ? known.join(", ") : `no ${noun} keys`}`;
  return `unknown ${noun} key${i.keys.length > 1 ? "s" : ""} ${unknown}${where ? ` in ${where}` : ""}${takes}`;
}

function explain(c: Context, target: Target, schema: ZodType, error: { issues: readonly Issue[] }): never {
  const { noun, code } = TARGET[target];
  refused(400, `invalid ${noun}: ${error.issues.map((i) => sentence(c, schema, noun, i)).join("; ")}`, code);
}

/**
 * The schema a validator checks, on the middleware itself: test/unit/contract.test.ts reads
 * it off the router to hold src/api/contract.ts (and so GET /openapi.json) to what is checked.
 */
export const VALIDATES = Symbol("validates");

export interface Validates {
  target: "json" | "query";
  schema: ZodType;
}

/** zod on the query or params, with the runtime's error shape: 400, a code, and one readable sentence. */
export function valid<T extends ZodType, V extends Exclude<keyof ValidationTargets, "json">>(target: V, schema: T) {
  const mw = zValidator(target, schema, (result, c) => (result.success ? undefined : explain(c, target as Target, schema, result.error)));
  return Object.assign(mw, { [VALIDATES]: { target, schema } as Validates });
}

/**
 * A JSON body validated by zod. The body is parsed as JSON whatever its content-type
 * says (the runtime speaks nothing else, and curl's default form type would otherwise
 * turn a malformed body into `{}`); an empty body counts as `{}`.
 */
export function jsonBody<T extends ZodType>(schema: T) {
  const mw = createMiddleware<AppEnv, string, { in: { json: z.input<T> }; out: { json: z.output<T> } }>(async (c, next) => {
    const text = await c.req.text();
    let data: unknown = {};
    if (text.trim() !== "") {
      try {
        data = JSON.parse(text);
      } catch (err) {
        refused(400, `body is not valid JSON: ${(err as Error).message}`, CODES.invalidBody);
      }
    }
    if (nestsDeeperThan(data, MAX_JSON_DEPTH)) refused(400, `body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`, CODES.invalidBody);
    const result = schema.safeParse(data);
    if (!result.success) explain(c, "json", schema, result.error);
    c.req.addValidatedData("json", result.data as object);
    await next();
  });
  return Object.assign(mw, { [VALIDATES]: { target: "json", schema } as Validates });
}
