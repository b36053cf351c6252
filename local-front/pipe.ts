import { connect, createServer, type Server, type Socket } from "node:net";

export interface Upstream {
  host: string;
  port: number;
}

/**
 * The front: a byte pipe from each client connection to workerd's direct socket.
 * Nothing is parsed or re-encoded, so request and response bodies (SSE above all)
 * stream through as they are written, at the cost of one socket pair per connection.
 * Header checks (Host, Origin) belong to the worker, which sees every request.
 */
export function startPipe(listen: { host: string; port: number }, upstream: Upstream): Promise<{ server: Server; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer({ noDelay: true }, (client) => {
    const backend = connect({ host: upstream.host, port: upstream.port, noDelay: true });
    sockets.add(client);
    sockets.add(backend);
    const close = () => {
      client.destroy();
      backend.destroy();
      sockets.delete(client);
      sockets.delete(backend);
    };
    client.on("error", close).on("close", close);
    backend.on("error", close).on("close", close);
    client.pipe(backend);
    backend.pipe(client);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(listen.port, listen.host, () => {
      server.off("error", reject);
      resolve({
        server,
        close: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}
