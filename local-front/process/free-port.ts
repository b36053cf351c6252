import { createServer } from "node:net";

/** A loopback port that was free a moment ago: for a listener another process must know of before it starts. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}
