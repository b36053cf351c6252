import { createMiddleware } from "hono/factory";
import { CODES } from "./api/errors.js";
import type { AppEnv } from "./app-env.js";
import { refusal } from "./http.js";
import { isLoopback } from "./loopback.js";

/** A `Host` value or an origin's host (`name:port`, `[v6]:port`) that names this machine's loopback. */
function isLoopbackHost(hostPort: string): boolean {
  const host = hostPort.startsWith("[") ? hostPort.slice(0, hostPort.indexOf("]") + 1) : hostPort.replace(/:\d+$/, "");
  return isLoopback(host);
}

/**
 * Why a request must not be served by a route that hands out secrets or operates the
 * host, or null when it may. The listener is loopback only, but a web page the operator
 * opens can still reach it through the browser: a foreign `Origin`, a cross-site fetch,
 * or a `Host` that is not loopback (DNS rebinding) gives such a request away.
 */
export function untrustedCaller(headers: Headers): string | null {
  const host = headers.get("host");
  if (!host || !isLoopbackHost(host)) return `Host ${JSON.stringify(host ?? "")} is not this machine's loopback`;
  const origin = headers.get("origin");
  if (origin !== null) {
    let originHost: string;
    try {
      originHost = new URL(origin).host;
    } catch {
      return `Origin ${JSON.stringify(origin)} is not an origin`;
    }
    if (!isLoopbackHost(originHost)) return `Origin ${origin} is not local`;
  }
  if (headers.get("sec-fetch-site") === "cross-site") return "the browser marked this request cross-site";
  return null;
}

/** SPEC "Authentication" 3: operator routes refuse callers that are not local (403 `untrusted-caller`). */
export const operatorOnly = createMiddleware<AppEnv>(async (c, next) => {
  const why = untrustedCaller(c.req.raw.headers);
  if (why) return refusal(403, `operator routes answer local callers only: ${why}`, CODES.untrustedCaller);
  await next();
});
