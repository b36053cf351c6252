import { createServer } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEgressGuard, type EgressGuard } from "../../local-front/egress-guard.js";

let guard: EgressGuard;
const local = createServer((_req, res) => res.end("local ok"));
beforeAll(async () => {
  guard = await startEgressGuard(["api.example.net"]);
  await new Promise<void>((r) => local.listen(0, "127.0.0.1", r));
});
afterAll(async () => {
  await guard.close();
  local.close();
});

function tunnel(target: string): Promise<string> {
  const { port } = new URL(guard.url);
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), "127.0.0.1", () => s.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
    s.once("data", (d) => {
      resolve(d.toString().split("\r\n")[0]!);
      s.destroy();
    });
    s.on("error", reject);
  });
}

describe("the egress guard", () => {
  it("refuses outside hosts and says which", async () => {
    expect(await tunnel("example.com:443")).toBe("HTTP/1.1 403 Forbidden");
    // A request that is not for a proxy (no absolute URI) is refused as malformed.
    expect((await fetch(`${guard.url}/`)).status).toBe(400);
    expect(guard.refused).toContain("example.com:443");
  });

  it("lets loopback and the configured provider hosts through", async () => {
    const { port } = local.address() as AddressInfo;
    expect(await tunnel(`127.0.0.1:${port}`)).toBe("HTTP/1.1 200 Connection Established");
    expect(guard.refused).not.toContain(`127.0.0.1:${port}`);
  });
});
