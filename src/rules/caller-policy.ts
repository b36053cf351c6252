import { isLoopback } from "../shared/loopback.js";

/**
 * Who may call the runtime from a browser. The listener is loopback only, yet any web
 * page the user opens can reach it through the browser: by DNS rebinding (the page's own
 * name resolves to 127.0.0.1, so the request carries that name as `Host`) or by a
 * cross-site request (the browser sends it with the user's network position, and a
 * "simple" POST needs no preflight). These rules are pure so that the worker and the
 * front's follow relay judge a request the same way (docs/operating.md, "Callers").
 */
export interface CallerPolicy {
  /** Host names (`name`) or `name:port` the operator adds to the loopback names. */
  hosts: ReadonlySet<string>;
  /** Origins (`scheme://host[:port]`) allowed to call from a browser. */
  origins: ReadonlySet<string>;
}

/** The application server's origins (SPEC `{app_url}`), allowed by default. */
export const DEFAULT_ORIGINS = ["http://127.0.0.1:5189", "http://localhost:5189"] as const;

/** Methods that only read: the Origin rule for state changes leaves them be. */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
/** `sec-fetch-site` values a browser gives a request its user, or the runtime's own page, made. */
const SAME_SITE_FETCH = new Set(["same-origin", "none"]);

export class CallerPolicyError extends Error {}

/** A `Host` value as `name` and `port` (port null when absent), lower-cased; null when it cannot be one. */
export function splitHost(value: string): { name: string; port: string | null } | null {
  const m = /^(\[[0-9a-f:.]+\]|[^\s:/?#@[\]]+)(?::(\d{1,5}))?$/i.exec(value.trim());
  return m ? { name: m[1]!.toLowerCase().replace(/\.$/, ""), port: m[2] ?? null } : null;
}

function originOf(raw: string): string | null {
  try {
    const url = new URL(raw);
    return (url.protocol === "http:" || url.protocol === "https:") && url.origin !== "null" ? url.origin : null;
  } catch {
    return null;
  }
}

/** The policy from `SERVICE_ALLOWED_HOSTS` and `SERVICE_ALLOWED_ORIGINS` (comma-separated); throws on a value that is not one. */
export function readCallerPolicy(allowedHosts: string | undefined, allowedOrigins: string | undefined): CallerPolicy {
  const hosts = new Set<string>();
  for (const raw of (allowedHosts ?? "").split(",").map((s) => s.trim()).filter(Boolean)) {
    const host = splitHost(raw);
    if (!host) throw new CallerPolicyError(`SERVICE_ALLOWED_HOSTS: ${JSON.stringify(raw)} is not a host name or name:port`);
    hosts.add(host.port ? `${host.name}:${host.port}` : host.name);
  }
  const origins = new Set<string>(DEFAULT_ORIGINS);
  for (const raw of (allowedOrigins ?? "").split(",").map((s) => s.trim()).filter(Boolean)) {
    const origin = originOf(raw);
    if (!origin || raw.includes("*") || raw.replace(/\/$/, "").toLowerCase() !== origin.toLowerCase())
      throw new CallerPolicyError(`SERVICE_ALLOWED_ORIGINS: ${JSON.stringify(raw)} is not an origin (scheme://host[:port], no path, no wildcard)`);
    origins.add(origin);
  }
  return { hosts, origins };
}

/**
 * Whether `Host` names this runtime: a loopback name at any port (a browser always sends
 * the port it connected to, so the name is what rebinding forges), or a name the operator
 * added. Null when it does; otherwise why not.
 */
export function untrustedHost(host: string | null, policy: CallerPolicy): string | null {
  if (!host) return "the request has no Host header";
  const parsed = splitHost(host);
  if (!parsed) return `Host ${JSON.stringify(host)} is not a host name`;
  if (isLoopback(parsed.name)) return null;
  if (policy.hosts.has(parsed.name) || (parsed.port && policy.hosts.has(`${parsed.name}:${parsed.port}`))) return null;
  return `Host ${JSON.stringify(host)} is not one of this runtime's names (loopback, or SERVICE_ALLOWED_HOSTS)`;
}

/**
 * Whether a browser on `origin` may call: the runtime's own origin (what the `Host` names,
 * or any loopback name at the same port), the application server's, or one the operator
 * added. `host` has passed `untrustedHost`.
 */
export function originAllowed(origin: string, host: string, policy: CallerPolicy): boolean {
  const normal = originOf(origin);
  if (!normal) return false;
  if (policy.origins.has(normal)) return true;
  const theirs = splitHost(new URL(normal).host);
  const ours = splitHost(host);
  if (!theirs || !ours) return false;
  const https = normal.startsWith("https:");
  const samePort = (theirs.port ?? (https ? "443" : "80")) === (ours.port ?? (https ? "443" : "80"));
  if (!samePort) return false;
  // The loopback listener speaks plain HTTP: a page on https at that port is someone else's.
  if (isLoopback(ours.name)) return !https && isLoopback(theirs.name);
  return theirs.name === ours.name;
}

/**
 * Whether the caller is a program on this machine, for the operator routes a contract row
 * marks `localOnly` (SPEC "Authentication" 3; docs/operating.md, "Callers"): its `Host`
 * is a loopback name, and it carries nothing a browser adds. A name SERVICE_ALLOWED_HOSTS
 * adds is how the runtime is reached from elsewhere (a tunnel, a LAN name), so it is not
 * enough; a page's `Origin`, even an allowed one, or a `Sec-Fetch-Site` marks a browser,
 * and no page may reset what an account spends. Null when local; otherwise why not.
 */
export function notLocalCaller(headers: { get(name: string): string | null }): string | null {
  const host = headers.get("host");
  const parsed = host ? splitHost(host) : null;
  if (!parsed || !isLoopback(parsed.name)) return `Host ${JSON.stringify(host ?? "")} is not a loopback name, and this route answers programs on this machine only`;
  const origin = headers.get("origin");
  if (origin !== null) return `the request comes from a browser page (Origin ${JSON.stringify(origin)}), and this route answers programs on this machine only`;
  const site = headers.get("sec-fetch-site");
  if (site !== null) return `the request comes from a browser (Sec-Fetch-Site ${JSON.stringify(site)}), and this route answers programs on this machine only`;
  return null;
}

export type CallerVerdict =
  | { ok: true; /** The allowed origin to answer with CORS headers, when the request came from a browser page. */ corsOrigin: string | null }
  | { ok: false; why: string };

/**
 * The whole rule for one request: every method needs a `Host` naming this runtime; a
 * request from a page whose origin is not allowed is refused, whatever its method; and a
 * state change the browser marks as not same-origin needs an allowed `Origin`. Requests
 * without browser headers (curl, SDKs, the application server forwarding) pass on Host.
 */
export function judgeCaller(method: string, headers: { get(name: string): string | null }, policy: CallerPolicy): CallerVerdict {
  const host = headers.get("host");
  const badHost = untrustedHost(host, policy);
  if (badHost) return { ok: false, why: badHost };
  const origin = headers.get("origin");
  if (origin !== null) {
    if (!originAllowed(origin, host!, policy)) return { ok: false, why: `Origin ${JSON.stringify(origin)} is not allowed (SERVICE_ALLOWED_ORIGINS adds origins)` };
    return { ok: true, corsOrigin: originOf(origin) };
  }
  const site = headers.get("sec-fetch-site");
  if (!SAFE_METHODS.has(method.toUpperCase()) && site !== null && !SAME_SITE_FETCH.has(site.toLowerCase()))
    return { ok: false, why: `the browser marked this ${method} ${site} and named no allowed Origin` };
  return { ok: true, corsOrigin: null };
}
