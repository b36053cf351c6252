import { connect, createServer, type Server, type Socket } from "node:net";
import { parseFollowRequest, type FollowRelays } from "./follow-relay.js";

export interface Upstream {
  host: string;
  port: number;
}

/** A request head larger than this is not a follow request worth reading further. */
const MAX_PEEK = 16 * 1024;

/**
 * The front: a byte pipe from each client connection to workerd's direct socket.
 * Nothing is parsed or re-encoded, so request and response bodies (SSE above all)
 * stream through as they are written. Header checks (Host, Origin) belong to the
 * worker, which sees every request.
 *
 * One exception: when a connection's first request is `GET /threads/:id/follow`, the
 * follow relay may serve it (see follow-relay.ts), so that workerd sends each event once
 * per thread rather than once per follower.
 */
export function startPipe(
  listen: { host: string; port: number },
  upstream: Upstream,
  relays: FollowRelays | null,
): Promise<{ server: Server; close(): Promise<void> }> {
  const sockets = new Set<Socket>();

  const pipe = (client: Socket, head: Buffer | null) => {
    const backend = connect({ host: upstream.host, port: upstream.port, noDelay: true });
    sockets.add(backend);
    const close = () => {
      client.destroy();
      backend.destroy();
      sockets.delete(backend);
    };
    client.on("error", close).on("close", close);
    backend.on("error", close).on("close", close);
    if (head) backend.write(head);
    client.pipe(backend);
    backend.pipe(client);
  };

  const server = createServer({ noDelay: true }, (client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    if (!relays) return pipe(client, null);
    let head = Buffer.alloc(0);
    const peek = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0 && head.length < MAX_PEEK) return;
      client.off("data", peek);
      client.pause();
      const follow = end >= 0 && head.length === end + 4 ? parseFollowRequest(head.subarray(0, end).toString("latin1")) : null;
      if (follow && relays.serve(client, follow)) return;
      pipe(client, head);
      client.resume();
    };
    client.on("data", peek);
    client.on("error", () => client.destroy());
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
