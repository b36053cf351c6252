import { createServer, type Server, type Socket } from "node:net";
import { ConfigError } from "../process/config.js";
import { parseFollowRequest, type FollowRelays } from "./follow-relay.js";
import { FRONT_LIMITS, RoutedConnection, type FrontLimits, type PickUpstream, type Takeover } from "./routed-pipe.js";

export type { Upstream } from "./routed-pipe.js";

/**
 * The front: each client connection's requests go, as bytes, to the workerd process that
 * holds their thread (routed-pipe.ts). Nothing is parsed beyond the heads or re-encoded
 * (but chunked request bodies, re-framed for workerd), so request and response bodies (SSE
 * above all) stream through as they are written. What the front checks is framing only
 * (http-framing.ts); the header policy (Host, Origin) belongs to the worker, which sees
 * every request.
 *
 * One exception: a `GET /threads/:id/follow` may be served by the follow relay (see
 * follow-relay.ts), so that workerd sends each event once per thread rather than once
 * per follower.
 */
export function startPipe(
  listen: { host: string; port: number },
  pick: PickUpstream,
  relays: FollowRelays | null,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ server: Server; close(): Promise<void> }> {
  const limits = frontLimits(env);
  const sockets = new Set<Socket>();
  const takeover: Takeover | null = relays
    ? (client, head) => {
        if (head.startLine[0] !== "GET" || !head.startLine[1]!.includes("/follow")) return false;
        const follow = parseFollowRequest(head);
        return follow !== null && relays.serve(client, follow);
      }
    : null;

  const server = createServer({ noDelay: true }, (client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    new RoutedConnection(client, pick, takeover, { limits });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(listen.port, listen.host, () => {
      server.off("error", reject);
      resolve({
        server,
        close: () =>
          new Promise<void>((done) => {
            relays?.close();
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

/** `SERVICE_HEAD_TIMEOUT_MS` and `SERVICE_IDLE_TIMEOUT_MS` over the defaults (routed-pipe.ts says why those). */
export function frontLimits(env: NodeJS.ProcessEnv): FrontLimits {
  const ms = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === "") return fallback;
    if (!/^[1-9]\d{0,8}$/.test(raw)) throw new ConfigError(`${name} must be a whole number of milliseconds above 0, not ${JSON.stringify(raw)}`);
    return Number(raw);
  };
  return { headMs: ms("SERVICE_HEAD_TIMEOUT_MS", FRONT_LIMITS.headMs), idleMs: ms("SERVICE_IDLE_TIMEOUT_MS", FRONT_LIMITS.idleMs) };
}
