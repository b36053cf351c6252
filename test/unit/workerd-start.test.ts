import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PortTaken, startWorkerd } from "../../local-front/process/workerd.js";

// A workerd peer port another process took between the front choosing it and workerd
// binding it must be told as such, so that the start chooses again: Miniflare alone
// reported about one such start in seven as a bare ERR_RUNTIME_FAILURE with no output
// (workerd's stderr read after its control pipe closed), and the front then failed to start.
describe("a workerd start whose socket's port another process holds", () => {
  let holder: Server;
  let port: number;
  beforeAll(async () => {
    holder = createServer();
    await new Promise<void>((r) => holder.listen(0, "127.0.0.1", r));
    port = (holder.address() as { port: number }).port;
  });
  afterAll(() => holder.close());

  it("is PortTaken every time, never a bare runtime failure", async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < 25; i++) {
      const started = startWorkerd(
        {
          modules: true,
          script: "export default { fetch() { return new Response('up') } }",
          name: "w",
          unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }, { host: "127.0.0.1", port }],
        },
        "w",
        "[workerd test]",
      );
      outcomes.push(await started.then(
        async (s) => (await s.mf.dispose(), "started"),
        (err: unknown) => (err instanceof PortTaken ? "PortTaken" : `${(err as { code?: string }).code}: ${(err as Error).message}`),
      ));
    }
    expect(outcomes.filter((o) => o !== "PortTaken")).toEqual([]);
  });

  it("starts when the port is free", async () => {
    const { mf, direct } = await startWorkerd(
      { modules: true, script: "export default { fetch() { return new Response('up') } }", name: "w", unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }] },
      "w",
      "[workerd test]",
    );
    try {
      expect(await (await fetch(direct)).text()).toBe("up");
    } finally {
      await mf.dispose();
    }
  });
});
