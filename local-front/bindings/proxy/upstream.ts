import { request as httpRequest, type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

/**
 * Where the credential proxy and the account pool send provider traffic: the provider
 * itself, or (SERVICE_PROVIDER_UPSTREAM=simulator) the built-in simulator served with TLS
 * on loopback, reached under the provider's own host name so certificates and `Host`
 * stay what they would be.
 */
export interface Upstream {
  /** What `/health`-style logs call it. */
  name: string;
  request(url: URL, method: string, headers: OutgoingHttpHeaders): ClientRequest;
}

export interface SimulatorUpstream {
  port: number;
  /** The CA that signed the simulator's certificates. */
  ca: string;
}

export function providerUpstream(simulator: SimulatorUpstream | null): Upstream {
  if (simulator) {
    // Kept alive as Node's own agents keep a provider's connections: a connection a call
    // costs one TLS handshake more, and a new secure context from the CA's PEM.
    const agent = new HttpsAgent({ keepAlive: true, ca: simulator.ca });
    return {
      name: `simulator (https://127.0.0.1:${simulator.port})`,
      request: (url, method, headers) =>
        httpsRequest({
          host: "127.0.0.1",
          port: simulator.port,
          servername: url.hostname,
          method,
          path: url.pathname + url.search,
          headers: { ...headers, host: url.host },
          agent,
        }),
    };
  }
  return {
    name: "providers",
    request: (url, method, headers) =>
      (url.protocol === "https:" ? httpsRequest : httpRequest)(url, { method, headers: { ...headers, host: url.host } }),
  };
}

/** Sends a JSON body and reads the JSON answer (for token refreshes). Rejects only when the upstream cannot be reached. */
export function postJson(upstream: Upstream, url: URL, body: unknown): Promise<{ status: number; json: unknown; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = upstream.request(url, "POST", { "content-type": "application/json", accept: "application/json", "content-length": Buffer.byteLength(payload) });
    req.setTimeout(30_000, () => req.destroy(new Error(`no answer from ${url.host} within 30 s`)));
    req.on("error", reject);
    req.on("response", (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let json: unknown = null;
        try {
          json = JSON.parse(text);
        } catch {
          // A non-JSON answer is reported by status and text.
        }
        resolve({ status: res.statusCode ?? 0, json, text });
      });
    });
    req.end(payload);
  });
}
