import { createMiddleware } from "hono/factory";
import { CODES } from "../api/errors.js";
import type { AppEnv } from "./app-env.js";
import { judgeCaller, notLocalCaller } from "../rules/caller-policy.js";
import { refused } from "./answer.js";

/** Methods the API serves, for preflights. */
const CORS_METHODS = "GET, HEAD, POST, PUT, PATCH, DELETE";
/** Request headers the API reads (plus the OpenAI clients' own, for the completions endpoint). */
const CORS_HEADERS = ["content-type", "last-event-id", "idempotency-key", "authorization"];
const CORS_HEADER_PREFIXES = ["x-service-", "x-stainless-"];
/** Response headers a browser client must be able to read. */
const EXPOSED_HEADERS = "retry-after";
/** How long a browser may reuse a preflight's answer. */
const PREFLIGHT_MAX_AGE_S = "600";

/** The headers of a preflight's request that the API accepts, as the browser asked for them. */
function allowedRequestHeaders(requested: string | null): string {
  const names = (requested ?? "")
    .split(",")
    .map((h) => h.trim().toLowerCase())
    .filter((h) => h && (CORS_HEADERS.includes(h) || CORS_HEADER_PREFIXES.some((p) => h.startsWith(p))));
  return [...new Set([...CORS_HEADERS, ...names])].join(", ");
}

/** `res` with `headers` added: in place when its headers can change, else remade (an object's own answer arrives with immutable ones). */
function withHeaders(res: Response, headers: Record<string, string>): Response {
  try {
    for (const [name, value] of Object.entries(headers)) res.headers.set(name, value);
    return res;
  } catch {
    const out = new Response(res.body, res);
    for (const [name, value] of Object.entries(headers)) out.headers.set(name, value);
    return out;
  }
}

/** A call through a service binding (a program, never a browser) may carry no Host: its URL names the host instead. */
function callerHeaders(req: Request): { get(name: string): string | null } {
  return req.headers.has("host") ? req.headers : { get: (name: string) => (name === "host" ? new URL(req.url).host : req.headers.get(name)) };
}

/**
 * The gate of a route its contract row marks `localOnly` (src/http/serve.ts puts it first):
 * after the caller gate let the request in, a caller that is not a program on this machine
 * gets 403 `caller-not-local` (src/rules/caller-policy.ts, `notLocalCaller`).
 */
export const localCallerOnly = Object.assign(
  createMiddleware<AppEnv>(async (c, next) => {
    const why = notLocalCaller(callerHeaders(c.req.raw));
    if (why) refused(403, `refused: ${why}`, CODES.callerNotLocal);
    await next();
  }),
  /** Read off the router by test/unit/contract.test.ts: the routes src/api/contract.ts marks `localOnly`. */
  { localOnly: true as const },
);

/**
 * Every request passes here first (docs/operating.md, "Callers"): a `Host` that is not
 * this runtime's, or a browser page whose origin is not allowed, gets 403
 * `untrusted-caller` before any route runs; an allowed origin gets CORS answers
 * (preflights here, headers on every response), and nothing else gets CORS headers.
 */
export const callerGate = createMiddleware<AppEnv>(async (c, next) => {
  const req = c.req.raw;
  const headers = callerHeaders(req);
  const verdict = judgeCaller(req.method, headers, c.var.config.callers);
  if (!verdict.ok) refused(403, `refused: ${verdict.why}`, CODES.untrustedCaller);
  const origin = verdict.corsOrigin;
  if (req.method === "OPTIONS" && origin && req.headers.has("access-control-request-method")) {
    return new Response(null, {
      status: 204,
      headers: {
        "access-control-allow-origin": origin,
        "access-control-allow-methods": CORS_METHODS,
        "access-control-allow-headers": allowedRequestHeaders(req.headers.get("access-control-request-headers")),
        "access-control-max-age": PREFLIGHT_MAX_AGE_S,
        vary: "Origin",
      },
    });
  }
  await next();
  if (!origin) return;
  const res = withHeaders(c.res, { "access-control-allow-origin": origin, "access-control-expose-headers": EXPOSED_HEADERS, vary: "Origin" });
  if (res !== c.res) c.res = res;
});
