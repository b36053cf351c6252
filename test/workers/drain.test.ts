import { env, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { hostOf } from "../../src/platform/stubs.js";
import type { Host } from "../../objects/host.js";
import { value } from "./support.js";

/** A Host object of its own per test, so no test sees another's drain. */
const hostNamed = (name: string) => env.HOST.get(env.HOST.idFromName(name));

describe("the drain in the Host object", () => {
  it("arms, reports the threads mid-turn, and disarms when nobody claimed it", async () => {
    const host = hostNamed("drain-plain");
    expect(await host.drainStatus()).toMatchObject({ armed: false, owner: null, since: null, activeThreads: 0, active: [] });
    await host.turnStarted("thr_busy");
    const armed = value(await host.armDrain(null, "maintenance"));
    expect(armed).toMatchObject({ armed: true, owner: null, reason: "maintenance", activeThreads: 1, active: ["thr_busy"] });
    expect(Date.parse(armed.since!)).toBeGreaterThan(0);
    // Arming again changes nothing, not even when it was armed.
    expect(value(await host.armDrain(null, "again"))).toEqual(armed);
    expect(value(await host.disarmDrain())).toMatchObject({ armed: false, activeThreads: 1 });
    expect(value(await host.disarmDrain())).toMatchObject({ armed: false });
  });

  it("lets only the claiming owner release a claimed drain", async () => {
    const host = hostNamed("drain-claimed");
    const armed = value(await host.armDrain("reload", "pulling"));
    expect(armed).toMatchObject({ armed: true, owner: "reload", reason: "pulling" });
    expect(await host.disarmDrain()).toMatchObject({ ok: false, status: 409, body: { code: "drain-claimed", owner: "reload" } });
    expect(await host.releaseDrain("someone-else")).toMatchObject({ ok: false, status: 409, body: { code: "drain-claimed", owner: "reload" } });
    expect(await host.armDrain("someone-else", null)).toMatchObject({ ok: false, status: 409, body: { code: "drain-claimed", owner: "reload" } });
    // The owner arming again, or anyone arming without a claim, leaves the claim as it is.
    expect(value(await host.armDrain("reload", null))).toEqual(armed);
    expect(value(await host.armDrain(null, null))).toEqual(armed);
    expect((await host.drainStatus()).owner).toBe("reload");
    expect(value(await host.releaseDrain("reload"))).toMatchObject({ armed: false, owner: null });
    // Nothing left to release: the owner's retry is not an error.
    expect(value(await host.releaseDrain("reload"))).toMatchObject({ armed: false });
  });

  it("lets an owner claim an unclaimed drain, which DELETE /drain/claim alone can then release", async () => {
    const host = hostNamed("drain-late-claim");
    const first = value(await host.armDrain(null, null));
    expect(await host.releaseDrain("reload")).toMatchObject({ ok: false, status: 409, body: { code: "drain-not-claimed" } });
    const claimed = value(await host.armDrain("reload", "reload"));
    expect(claimed).toMatchObject({ armed: true, owner: "reload", reason: "reload", since: first.since });
    expect(await host.disarmDrain()).toMatchObject({ ok: false, status: 409 });
    expect(value(await host.releaseDrain("reload"))).toMatchObject({ armed: false });
  });

  it("ignores a drain an earlier boot armed: a restart disarms it", async () => {
    const host = hostNamed("drain-old-boot");
    await host.drainStatus();
    await runInDurableObject(host, (_: Host, state) => {
      state.storage.sql.exec("INSERT INTO drain (one, boot, owner, reason, since) VALUES (1, 'an-earlier-boot', 'reload', 'old', 1)");
    });
    expect(await host.drainStatus()).toMatchObject({ armed: false, owner: null });
    expect(value(await host.disarmDrain())).toMatchObject({ armed: false });
    expect(value(await host.armDrain(null, "new"))).toMatchObject({ armed: true, owner: null, reason: "new" });
  });
});

describe("the router's view of the drain", () => {
  it("sees a drain armed behind its back (another isolate, on Cloudflare) within a second", async () => {
    const spawn = () => SELF.fetch("https://runtime/spawn", { method: "POST", body: "{}" });
    expect((await SELF.fetch("https://runtime/drain")).status).toBe(200);
    value(await hostOf(env).armDrain(null, "armed elsewhere"));
    try {
      let res = await spawn();
      for (let i = 0; i < 40 && res.status !== 503; i++) {
        await new Promise((r) => setTimeout(r, 50));
        res = await spawn();
      }
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("30");
      expect(await res.json()).toMatchObject({ code: "draining", active: [], activeThreads: 0, reason: "armed elsewhere" });
    } finally {
      value(await hostOf(env).disarmDrain());
    }
    // The refusal itself re-read the Host object, so the disarm is seen as soon as it happened there.
    let res = await spawn();
    for (let i = 0; i < 40 && res.status === 503; i++) {
      await new Promise((r) => setTimeout(r, 50));
      res = await spawn();
    }
    expect(res.status).toBe(201);
  });
});
