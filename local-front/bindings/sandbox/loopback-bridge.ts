import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { connect, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PROXY_VARIABLES } from "../../../src/api/threads.js";
import { isLoopback } from "../../../src/shared/loopback.js";

/**
 * The loopback addresses a session must reach (its proxy, and its provider's base URL
 * when that is the simulator), or null when its route out is not a proxy on loopback (the
 * proxy is off, or is another host): then it keeps the host's network.
 */
export function loopbackReach(env: Record<string, string>, baseUrl?: string): string[] | null {
  const proxy = PROXY_VARIABLES.map((name) => env[name]).find(Boolean);
  const onLoopback = (url: string) => {
    try {
      return isLoopback(new URL(url).hostname);
    } catch {
      return false;
    }
  };
  if (!proxy || !onLoopback(proxy)) return null;
  return [proxy, ...(baseUrl && onLoopback(baseUrl) ? [baseUrl] : [])];
}

/** The port a URL names, its scheme's default when it names none. */
export function portOf(url: string): number {
  const u = new URL(url);
  return Number(u.port || (u.protocol === "https:" ? 443 : 80));
}

/**
 * The front's end of the sessions' loopback: one Unix socket per port, `<dir>/<port>.sock`,
 * relayed to that port on the host's 127.0.0.1. The directory is bound into each sandbox,
 * where loopback-forwarder.mjs listens on the same ports; nothing else on the host's
 * loopback is reachable from inside.
 */
export class LoopbackBridge {
  readonly dir: string;
  private readonly servers = new Map<number, Server>();

  /** `<data dir>/net`, emptied at each start; in the system's temporary directory when that path is too long for a socket's (about 100 bytes). */
  constructor(dataDir: string) {
    const own = join(dataDir, "net");
    if (join(own, "65535.sock").length <= 100) {
      rmSync(own, { recursive: true, force: true });
      mkdirSync(own, { mode: 0o700 });
      this.dir = own;
    } else this.dir = mkdtempSync(join(tmpdir(), "agent-runtime-net-"));
    chmodSync(this.dir, 0o700);
  }

  /** Opens `port`'s socket if it is not open yet; it accepts from the moment this returns. */
  open(port: number): void {
    if (this.servers.has(port)) return;
    const server = createServer((inside) => {
      const host = connect(port, "127.0.0.1");
      inside.pipe(host).pipe(inside);
      inside.on("error", () => host.destroy());
      host.on("error", () => inside.destroy());
    });
    server.listen(join(this.dir, `${port}.sock`));
    this.servers.set(port, server);
  }

  close(): void {
    for (const server of this.servers.values()) server.close();
    this.servers.clear();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
