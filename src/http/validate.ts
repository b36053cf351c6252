import { zValidator } from "@hono/zod-validator";
import type { ValidationTargets } from "hono";
import { createMiddleware } from "hono/factory";
import type { z, ZodType } from "zod";
import type { AppEnv } from "./app-env.js";
import { refusal } from "./answer.js";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../rules/json-depth.js";

function explain(target: string, error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): Response {
  const issues = error.issues.map((i) => (i.path.length ? `${i.path.map(String).join(".")}: ${i.message}` : i.message));
  return refusal(400, `invalid ${target}: ${issues.join("; ")}`);
}

/** zod on the query or params, with the runtime's error shape: 400 and one readable sentence. */
export function valid<T extends ZodType, Target extends Exclude<keyof ValidationTargets, "json">>(target: Target, schema: T) {
  return zValidator(target, schema, (result) => (result.success ? undefined : explain(target, result.error)));
}

/**
 * A JSON body validated by zod. The body is parsed as JSON whatever its content-type
 * says (the runtime speaks nothing else, and curl's default form type would otherwise
 * turn a malformed body into `{}`); an empty body counts as `{}`.
 */
export function jsonBody<T extends ZodType>(schema: T) {
  return createMiddleware<AppEnv, string, { in: { json: z.input<T> }; out: { json: z.output<T> } }>(async (c, next) => {
    const text = await c.req.text();
    let data: unknown = {};
    if (text.trim() !== "") {
      try {
        data = JSON.parse(text);
      } catch (err) {
        return refusal(400, `body is not valid JSON: ${(err as Error).message}`);
      }
    }
    if (nestsDeeperThan(data, MAX_JSON_DEPTH)) return refusal(400, `body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`);
    const result = schema.safeParse(data);
    if (!result.success) return explain("body", result.error);
    c.req.addValidatedData("json", result.data as object);
    await next();
  });
}
