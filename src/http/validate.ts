import { zValidator } from "@hono/zod-validator";
import type { ValidationTargets } from "hono";
import { createMiddleware } from "hono/factory";
import type { z, ZodType } from "zod";
import type { AppEnv } from "./app-env.js";
import { refused } from "./answer.js";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../rules/json-depth.js";

function explain(target: string, error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): never {
  const issues = error.issues.map((i) => (i.path.length ? `${i.path.map(String).join(".")}: ${i.message}` : i.message));
  refused(400, `invalid ${target}: ${issues.join("; ")}`);
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

/** zod on the query or params, with the runtime's error shape: 400 and one readable sentence. */
export function valid<T extends ZodType, Target extends Exclude<keyof ValidationTargets, "json">>(target: Target, schema: T) {
  const mw = zValidator(target, schema, (result) => (result.success ? undefined : explain(target, result.error)));
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
        refused(400, `body is not valid JSON: ${(err as Error).message}`);
      }
    }
    if (nestsDeeperThan(data, MAX_JSON_DEPTH)) refused(400, `body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`);
    const result = schema.safeParse(data);
    if (!result.success) explain("body", result.error);
    c.req.addValidatedData("json", result.data as object);
    await next();
  });
  return Object.assign(mw, { [VALIDATES]: { target: "json", schema } as Validates });
}
