import { describe, expect, it } from "vitest";
import { bindingSocket } from "../../local-front/bindings/http.js";
import { ok } from "../../src/api/outcome.js";

describe("a binding's socket taken before it serves", () => {
  it("holds a request that comes before the binding serves, and answers it once it does, behind the gate", async () => {
    const socket = await bindingSocket();
    try {
      const early = fetch(`http://${socket.address}/x`, { headers: { "x-token": "t" } });
      const stranger = fetch(`http://${socket.address}/x`);
      let settled = false;
      void early.finally(() => (settled = true));
      await new Promise((r) => setTimeout(r, 200));
      expect(settled).toBe(false);
      socket.serve({ name: "the test binding", gate: { header: "x-token", token: "t" } }, async (_req, _res, url) => ok({ path: url.pathname }));
      const r = await early;
      expect(r.status).toBe(200);
      expect(await r.json()).toEqual({ path: "/x" });
      expect((await stranger).status).toBe(403);
      expect(() => socket.serve({ name: "the test binding" }, async () => ok({}))).toThrow(/served already/);
    } finally {
      await socket.close();
    }
  });
});
