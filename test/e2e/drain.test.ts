import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDir, startFront, type Front } from "../support/front.js";
import { call, events, sim, waitFor } from "../support/http.js";

let front: Front;
const base = () => front.url;

beforeAll(async () => {
  front = await startFront();
});
afterAll(async () => {
  await front?.stop();
  removeDir(front.dataDir);
});

async function spawn(): Promise<string> {
  const r = await call(base(), "POST", "/spawn", {});
  expect(r.status).toBe(201);
  return r.body.threadId;
}

const turnOf = async (id: string) => (await call(base(), "GET", `/threads/${id}/turn`)).body;

function expectDraining(r: { status: number; body: any; headers: Headers }, active: string[]): void {
  expect(r.status).toBe(503);
  expect(r.headers.get("retry-after")).toBe("30");
  expect(r.body.code).toBe("draining");
  expect(r.body.active).toEqual(expect.arrayContaining(active));
  expect(r.body.activeThreads).toBe(r.body.active.length);
}

describe("the drain through the real front", () => {
  it("refuses new work with 503 draining while running turns finish, approvals and interrupts included", async () => {
    const waiting = await spawn();
    const slow = await spawn();
    const doomed = await spawn();
    const idle = await spawn();
    const held = (await call(base(), "POST", `/threads/${idle}/messages`, { text: "later", hold: true })).body.seq;
    await call(base(), "POST", `/threads/${waiting}/messages`, { text: sim({ tool: { name: "shell", input: { command: "echo drained" } } }) });
    await call(base(), "POST", `/threads/${slow}/messages`, { text: sim({ chunks: 8, delayMs: 250 }, "slow") });
    await call(base(), "POST", `/threads/${doomed}/messages`, { text: sim({ chunks: 10, delayMs: 500 }, "long") });
    const approvalId = await waitFor(async () => (await turnOf(waiting)).waitingOn.approvals[0]);
    await waitFor(async () => (await turnOf(slow)).running && (await turnOf(doomed)).running);

    const armed = await call(base(), "POST", "/drain", { reason: "e2e" });
    expect(armed.status).toBe(200);
    expect(armed.body).toMatchObject({ armed: true, owner: null, reason: "e2e", activeThreads: 3 });
    expect(armed.body.active).toEqual(expect.arrayContaining([waiting, slow, doomed]));
    const busy = [waiting, slow, doomed];

    expectDraining(await call(base(), "POST", "/spawn", {}), busy);
    expectDraining(await call(base(), "POST", `/threads/${idle}/messages`, { text: "no" }), busy);
    expectDraining(await call(base(), "POST", `/threads/${idle}/send`, { text: "no" }), busy);
    expectDraining(await call(base(), "POST", `/threads/${idle}/fork`, { atSeq: 1 }), busy);
    expectDraining(await call(base(), "POST", `/threads/${idle}/loop`, { prompt: "tick", maxTurns: 2 }), busy);
    expectDraining(await call(base(), "POST", `/threads/${idle}/loop/continue`, {}), busy);
    // Releasing a held message is a new message for the next turn; editing it is not.
    expectDraining(await call(base(), "PATCH", `/threads/${idle}/messages/${held}`, { hold: false }), busy);
    expect((await call(base(), "PATCH", `/threads/${idle}/messages/${held}`, { text: "edited" })).status).toBe(200);

    // Reads, interrupts and approvals still work, and the running turns finish.
    expect((await call(base(), "GET", `/threads/${idle}`)).status).toBe(200);
    expect((await call(base(), "GET", "/threads")).status).toBe(200);
    const stopped = await call(base(), "POST", `/threads/${doomed}/interrupt`);
    expect(stopped.body).toMatchObject({ outcome: "failed", failure: { class: "interrupted" } });
    const allowed = await call(base(), "POST", `/threads/${waiting}/approvals/${approvalId}`, { decision: "allow" });
    expect(allowed.status).toBe(200);
    for (const id of [waiting, slow]) {
      await waitFor(async () => !(await turnOf(id)).running);
      const kinds = (await events(base(), id)).map((e) => e.kind);
      expect(kinds).toContain("turn-ended");
      expect(kinds).not.toContain("turn-failed");
    }
    const drained = await waitFor(async () => {
      const r = await call(base(), "GET", "/drain");
      return r.body.activeThreads === 0 && r.body;
    });
    expect(drained).toMatchObject({ armed: true, active: [], reason: "e2e" });

    const disarmed = await call(base(), "DELETE", "/drain");
    expect(disarmed.body).toMatchObject({ armed: false, owner: null, since: null });
    expect((await call(base(), "POST", "/spawn", {})).status).toBe(201);
    expect((await call(base(), "PATCH", `/threads/${idle}/messages/${held}`, { hold: false })).status).toBe(200);
  });

  it("lets only the owner who claimed a drain release it", async () => {
    const armed = await call(base(), "POST", "/drain", { owner: "ops", reason: "claimed" });
    expect(armed.body).toMatchObject({ armed: true, owner: "ops" });
    const refused = await call(base(), "DELETE", "/drain");
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: "drain-claimed", owner: "ops" });
    expect((await call(base(), "DELETE", "/drain/claim?owner=intruder")).body).toMatchObject({ code: "drain-claimed", owner: "ops" });
    expect((await call(base(), "POST", "/drain", { owner: "intruder" })).status).toBe(409);
    expect((await call(base(), "DELETE", "/drain/claim")).status).toBe(400);
    expect((await call(base(), "GET", "/drain")).body).toMatchObject({ armed: true, owner: "ops" });
    const released = await call(base(), "DELETE", "/drain/claim?owner=ops");
    expect(released.status).toBe(200);
    expect(released.body).toMatchObject({ armed: false, owner: null });
    expect((await call(base(), "POST", "/spawn", {})).status).toBe(201);
  });

  it("is disarmed by a restart: the drain lives in memory", async () => {
    expect((await call(base(), "POST", "/drain", { owner: "ops" })).body.armed).toBe(true);
    expect(await front.stop()).toBe(0);
    front = await startFront({ dataDir: front.dataDir });
    expect((await call(base(), "GET", "/drain")).body).toMatchObject({ armed: false, owner: null });
    expect((await call(base(), "POST", "/spawn", {})).status).toBe(201);
  });
});

describe("the router's drain check under concurrency", () => {
  it("answers every message while many requests cross its re-checks of the Host object at once", async () => {
    const ids = await Promise.all(Array.from({ length: 8 }, () => spawn()));
    const statuses = new Map<number, number>();
    const until = Date.now() + 3500;
    let n = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (Date.now() < until) {
          const r = await fetch(`${base()}/threads/${ids[n++ % ids.length]}/messages`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ text: "x", hold: true }),
          });
          await r.arrayBuffer();
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        }
      }),
    );
    // Sharing one in-flight re-check among requests made workerd cancel some as hung (500).
    expect([...statuses.keys()]).toEqual([202]);
  });
});
