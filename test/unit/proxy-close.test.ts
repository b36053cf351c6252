import { mkdtempSync } from "node:fs";
import { connect, createServer, type AddressInfo, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PROVIDER_BASE_URLS } from "../../src/api/accounts.js";
import { AccountPool } from "../../local-front/bindings/accounts/pool.js";
import { TokenStore } from "../../local-front/bindings/accounts/token-store.js";
import { loadOrCreateCa } from "../../local-front/bindings/proxy/ca.js";
import { Placeholders } from "../../local-front/bindings/proxy/placeholder.js";
import { startCredentialProxy } from "../../local-front/bindings/proxy/server.js";
import { providerUpstream } from "../../local-front/bindings/proxy/upstream.js";
import { removeDir } from "../support/front.js";

const dir = mkdtempSync(join(tmpdir(), "proxy-close-"));
afterAll(() => removeDir(dir));

/** A CONNECT through the proxy to `target`, answered 200 and then left open and idle, as a session's kept tunnel is. */
async function openTunnel(proxyPort: number, target: string): Promise<{ socket: Socket; closed: Promise<void> }> {
  const socket = connect(proxyPort, "127.0.0.1");
  socket.on("error", () => {});
  const closed = new Promise<void>((r) => socket.once("close", () => r()));
  socket.write(`CONNECT ${target} HTTP/1.1\r\nhost: ${target}\r\n\r\n`);
  const head = await new Promise<string>((r) => socket.once("data", (d: Buffer) => r(d.toString("latin1"))));
  expect(head).toMatch(/^HTTP\/1\.1 200 /);
  return { socket, closed };
}

// The front's stop closes the proxy; a session's idle tunnel (its client keeps it for
// seconds, 4 for undici's ProxyAgent, pi's) held that close, and the stop with it, until the client let go.
describe("the credential proxy's close", () => {
  it("ends the tunnels its clients keep open, a provider's and a loopback one with the connection it passes to, and does not wait for them", async () => {
    const ca = await loadOrCreateCa(join(dir, "proxy", "ca.pem"));
    await ca.ready;
    const upstream = providerUpstream(null);
    const pool = new AccountPool([], new TokenStore(join(dir, "tokens.json")), upstream, 60);
    const proxy = await startCredentialProxy({ ca, pool, placeholders: new Placeholders(join(dir, "placeholder.key")), upstream });
    // The loopback tunnel's far side: its connection ends with the tunnel, not when the far end gives up.
    let farClosed!: Promise<void>;
    const local = createServer((s) => {
      s.on("error", () => {});
      farClosed = new Promise<void>((r) => s.once("close", () => r()));
    });
    await new Promise<void>((r) => local.listen(0, "127.0.0.1", r));
    const port = Number(new URL(proxy.url).port);
    const tunnels = [
      await openTunnel(port, `${new URL(PROVIDER_BASE_URLS.openai).hostname}:443`),
      await openTunnel(port, `127.0.0.1:${(local.address() as AddressInfo).port}`),
    ];
    await proxy.close();
    await Promise.all(tunnels.map((t) => t.closed));
    expect(tunnels.map((t) => t.socket.destroyed)).toEqual([true, true]);
    await farClosed;
    local.close();
  }, 15_000);
});
