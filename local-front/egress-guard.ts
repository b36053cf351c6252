import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { isLoopback } from "./config.js";

export interface EgressGuard {
  /** http://127.0.0.1:PORT, for the engines' HTTP_PROXY and HTTPS_PROXY. */
  url: string;
  /** Destinations refused so far, as host:port. */
  refused: string[];
  close(): Promise<void>;
}

/**
 * The engines' only way out: an HTTP proxy (CONNECT for HTTPS, absolute-URI requests for
 * HTTP) that lets through loopback and the provider hosts the runtime was configured
 * with, and refuses everything else with 403, saying so on stderr. Offline, that is
 * loopback only, so an engine that tries to reach an outside host is seen, not silently
 * allowed. Engines get it as HTTP_PROXY/HTTPS_PROXY; loopback goes direct (NO_PROXY).
 */
export async function startEgressGuard(allowedHosts: string[]): Promise<EgressGuard> {
  const allowed = new Set(allowedHosts.map((h) => h.toLowerCase()));
  const refused: string[] = [];
  const permits = (host: string) => isLoopback(host) || host === "127.0.0.1" || allowed.has(host.toLowerCase());
  const refuse = (where: string) => {
    refused.push(where);
    console.error(`agent-runtime: refused egress to ${where} (not loopback, not a configured provider)`);
  };

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let target: URL;
    try {
      target = new URL(req.url ?? "");
    } catch {
      return res.writeHead(400).end("absolute URI required");
    }
    if (!permits(target.hostname.replace(/^\[(.*)\]$/, "$1"))) {
      refuse(`${target.hostname}:${target.port || 80}`);
      return res.writeHead(403).end("egress refused");
    }
    const upstream = request(target, { method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  server.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
    // After `connect` the socket has no error handler of the server's: a reset must not crash the front.
    client.on("error", () => {});
    const [raw = "", port = "443"] = (req.url ?? "").split(/:(?=\d+$)/);
    const host = raw.replace(/^\[(.*)\]$/, "$1");
    if (!permits(host)) {
      refuse(`${host}:${port}`);
      client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
      return;
    }
    const upstream = connect(Number(port), host, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The proxy variables an engine's process gets. */
export function egressEnv(guard: string): Record<string, string> {
  return { HTTP_PROXY: guard, HTTPS_PROXY: guard, http_proxy: guard, https_proxy: guard, NO_PROXY: "127.0.0.1,localhost,::1", no_proxy: "127.0.0.1,localhost,::1" };
}
