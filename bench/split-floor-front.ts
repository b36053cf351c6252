import { createServer } from "node:net";
import { RoutedConnection, type Upstream } from "../local-front/front/routed-pipe.js";

/**
 * The front of the two-process floor: the runtime's own routed pipe, in a process of its
 * own as the runtime's front is, sending `/t<n>` to floor process n % 2.
 */
const ups: Upstream[] = process.argv.slice(2).map((origin) => {
  const u = new URL(origin);
  return { host: u.hostname, port: Number(u.port) };
});
const server = createServer({ noDelay: true }, (c) => new RoutedConnection(c, (_m, target) => ups[Number(/\d+/.exec(target)?.[0] ?? 0) % ups.length]!, null));
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as { port: number };
  console.log(`listening http://127.0.0.1:${port}`);
});
process.on("SIGTERM", () => process.exit(0));
