import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/** The first port of the kernel's ephemeral range, where port-0 listeners and outgoing connections get theirs. */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(low) ? low : 32768;
  } catch {
    return 32768;
  }
}

/** Listens on `port` (0: the kernel's choice) for a moment; the port it had, or null if it was taken. */
async function tryPort(port: number): Promise<number | null> {
  const server = createServer();
  const bound = await new Promise<boolean>((r) => {
    server.once("error", () => r(false));
    server.listen(port, "127.0.0.1", () => r(true));
  });
  if (!bound) return null;
  const taken = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return taken;
}

/** How many ports below the ephemeral range the choice is drawn from. */
const SPAN = 10_000;

/**
 * A loopback port that was free a moment ago: for a listener another process must know of
 * before it starts. Drawn below the ephemeral range: a port the kernel handed out for
 * port 0 is soon handed to another port-0 listener (every front starting beside this one
 * binds a dozen), which then holds it when workerd binds it.
 */
export async function freePort(): Promise<number> {
  const low = ephemeralLow();
  if (low > SPAN + 1024)
    for (let tries = 0; tries < 20; tries++) {
      const port = await tryPort(low - SPAN + Math.floor(Math.random() * SPAN));
      if (port !== null) return port;
    }
  return (await tryPort(0))!;
}
