/** A route as hono lists it (`app.routes`). */
export interface RouteEntry {
  method: string;
  path: string;
}

/**
 * The methods served on a path, from the router's own route list, so that a known path
 * asked with the wrong method gets 405 and an `Allow` header (RFC 9110 15.5.6) instead of
 * a 404 that reads as "no such thing". HEAD comes with GET (hono answers it from GET), and
 * OPTIONS is answered on every known path.
 */
export function allowedMethods(routes: readonly RouteEntry[]): (path: string) => string[] {
  const patterns: { method: string; re: RegExp }[] = [];
  for (const r of routes) {
    if (r.method === "ALL" || r.path.includes("*")) continue;
    const source = r.path
      .split("/")
      .map((part) => (part.startsWith(":") ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
      .join("/");
    patterns.push({ method: r.method, re: new RegExp(`^${source}$`) });
  }
  return (path) => {
    const methods = new Set(patterns.filter((p) => p.re.test(path)).map((p) => p.method));
    if (methods.size === 0) return [];
    if (methods.has("GET")) methods.add("HEAD");
    methods.add("OPTIONS");
    return ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"].filter((m) => methods.has(m));
  };
}
