import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDir, startFront, type Front } from "../support/front.js";
import { call, events, waitFor, type LoggedEvent } from "../support/http.js";

const dataDir = mkdtempSync(join(tmpdir(), "agent-runtime-subs-"));
let front: Front;
let base: string;

beforeAll(async () => {
  writeFileSync(join(dataDir, "workspaces.json"), JSON.stringify({ workspaces: [{ name: "team", slug: "acme/team", accounts: [] }] }));
  front = await startFront({ dataDir });
  base = front.url;
});
afterAll(async () => {
  await front?.stop();
  removeDir(dataDir);
});

const spawn = async (spec: Record<string, unknown> = {}) => (await call(base, "POST", "/spawn", { model: "sim-1", ...spec })).body.threadId as string;
/** The system line of a wake chain cut, on either thread, once there is one. */
const chainCut = (ids: string[]) =>
  waitFor(async () => {
    for (const id of ids) {
      const line = (await events(base, id)).find((e) => e.kind === "system" && String(e.body.text).startsWith("wake chain cut"));
      if (line) return line;
    }
    return null;
  }, 30_000);

const wakes = async (id: string, at = base): Promise<LoggedEvent[]> => (await events(at, id)).filter((e) => e.kind === "message" && String(e.body.from).startsWith("watch:"));

describe("subscriptions", () => {
  it("wakes the subscriber with a message when the watched thread records a matching event, which starts a turn", async () => {
    const watcher = await spawn();
    const watched = await spawn();
    const sub = await call(base, "POST", `/threads/${watcher}/subscriptions`, { watch: { thread: watched }, filter: { kinds: ["reply"] }, note: "tell me what it says" });
    expect(sub.status, JSON.stringify(sub.body)).toBe(201);
    expect(sub.body).toMatchObject({ watch: expect.stringMatching(/^watch_/), target: { thread: watched }, filter: { kinds: ["reply"] }, note: "tell me what it says", deliver: null, wakes: 0 });
    await call(base, "POST", `/threads/${watched}/send`, { text: "the news" });
    const [wake] = await waitFor(async () => ((await wakes(watcher)).length > 0 ? wakes(watcher) : null));
    expect(wake!.body.from).toBe(`watch:${sub.body.watch}`);
    expect(wake!.body.text).toContain("tell me what it says");
    expect(wake!.body.text).toContain("echo: the news");
    expect(wake!.body.wake).toMatchObject({ watch: sub.body.watch, source: watched, depth: 1 });
    await waitFor(async () => (await events(base, watcher)).some((e) => e.kind === "turn-ended"));
    expect((await call(base, "GET", `/threads/${watcher}/subscriptions`)).body.subscriptions).toMatchObject([{ watch: sub.body.watch, wakes: 1 }]);
  });

  it("matches on text, coalesces a burst into fewer wakes, and stops once removed", async () => {
    const watcher = await spawn();
    const watched = await spawn();
    const { watch } = (await call(base, "POST", `/threads/${watcher}/subscriptions`, { watch: { thread: watched }, filter: { kinds: ["message"], text: "ALERT" } })).body;
    // Watches the same events, after it: the watched thread delivers to it after the watcher, in each delivery.
    const control = await spawn();
    await call(base, "POST", `/threads/${control}/subscriptions`, { watch: { thread: watched }, filter: { kinds: ["message"], text: "late" } });
    await Promise.all(Array.from({ length: 6 }, (_, i) => call(base, "POST", `/threads/${watched}/messages`, { text: `ALERT ${i}`, hold: true })));
    await call(base, "POST", `/threads/${watched}/messages`, { text: "quiet", hold: true });
    const listed = await waitFor(async () => {
      const seqs = (await wakes(watcher)).flatMap((w) => w.body.wake.seqs as number[]);
      return seqs.length === 6 ? seqs : null;
    });
    expect(new Set(listed).size).toBe(6);
    expect((await wakes(watcher)).length).toBeLessThan(6);
    expect((await call(base, "DELETE", `/threads/${watcher}/subscriptions/${watch}`)).status).toBe(200);
    const before = (await wakes(watcher)).length;
    const late = await call(base, "POST", `/threads/${watched}/messages`, { text: "ALERT late", hold: true });
    // Once the control heard of it, a delivery to the removed subscription would have been made too.
    await waitFor(async () => (await wakes(control)).some((w) => (w.body.wake.seqs as number[]).includes(late.body.seq)));
    expect((await wakes(watcher)).length).toBe(before);
    expect((await call(base, "DELETE", `/threads/${watcher}/subscriptions/${watch}`)).body.code).toBe("subscription-not-found");
    const self = await call(base, "POST", `/threads/${watcher}/subscriptions`, { watch: { thread: watcher } });
    expect([self.status, self.body.code]).toEqual([404, "watch-target-not-found"]);
  });

  it("watches a workspace's threads, those there now and those spawned later, not the subscriber", async () => {
    const watcher = await spawn({ workspace: "team" });
    const early = await spawn({ workspace: "team" });
    const sub = await call(base, "POST", `/threads/${watcher}/subscriptions`, { watch: { workspace: "team" }, filter: { kinds: ["turn-ended"] } });
    expect(sub.status, JSON.stringify(sub.body)).toBe(201);
    const late = await spawn({ workspace: "team" });
    await call(base, "POST", `/threads/${early}/send`, { text: "one" });
    await call(base, "POST", `/threads/${late}/send`, { text: "two" });
    const sources = await waitFor(async () => {
      const s = new Set((await wakes(watcher)).map((w) => w.body.wake.source as string));
      return s.size === 2 ? s : null;
    });
    expect([...sources].sort()).toEqual([early, late].sort());
    expect((await call(base, "POST", `/threads/${watcher}/subscriptions`, { watch: { workspace: "nowhere" } })).body.code).toBe("workspace-not-found");
  });

  it("cuts a chain of wakes that would loop, with a system line", async () => {
    const a = await spawn();
    const b = await spawn();
    await call(base, "POST", `/threads/${a}/subscriptions`, { watch: { thread: b }, filter: { kinds: ["reply"] } });
    await call(base, "POST", `/threads/${b}/subscriptions`, { watch: { thread: a }, filter: { kinds: ["reply"] } });
    await call(base, "POST", `/threads/${a}/send`, { text: "start the chain" });
    const cut = await chainCut([a, b]);
    expect(cut.body.text).toContain("depth 4");
    const all = [...(await wakes(a)), ...(await wakes(b))];
    expect(all.map((w) => w.body.wake.depth).sort()).toEqual([1, 2, 3]);
  });

  it("cuts a loop on the turns themselves: a turn a wake started carries the wake's depth from its first event", async () => {
    const a = await spawn();
    const b = await spawn();
    await call(base, "POST", `/threads/${a}/subscriptions`, { watch: { thread: b }, filter: { kinds: ["turn-started"] } });
    await call(base, "POST", `/threads/${b}/subscriptions`, { watch: { thread: a }, filter: { kinds: ["turn-started"] } });
    // Hears of a marker on each thread once both went quiet: what they matched before it was delivered by then.
    const control = await spawn();
    for (const t of [a, b]) await call(base, "POST", `/threads/${control}/subscriptions`, { watch: { thread: t }, filter: { kinds: ["message"], text: "marker" } });
    await call(base, "POST", `/threads/${a}/send`, { text: "go" });
    await chainCut([a, b]);
    await waitFor(async () => {
      for (const t of [a, b]) {
        const turn = (await call(base, "GET", `/threads/${t}/turn`)).body;
        if (turn.running || turn.queued > 0) return false;
      }
      return true;
    }, 30_000);
    for (const t of [a, b]) await call(base, "POST", `/threads/${t}/messages`, { text: "marker", hold: true });
    await waitFor(async () => new Set((await wakes(control)).map((w) => w.body.wake.source)).size === 2);
    expect([...(await wakes(a)), ...(await wakes(b))].map((w) => w.body.wake.depth).sort()).toEqual([1, 2, 3]);
  });
});

describe("a wake across a restart between the match and its delivery", () => {
  it("is delivered after the restart, once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agent-runtime-subs-restart-"));
    let held: Front | undefined = await startFront({ dataDir: dir, env: { SERVICE_FAULTS: "wake-deliver" } });
    try {
      const at = held.url;
      const watcher = (await call(at, "POST", "/spawn", { model: "sim-1" })).body.threadId as string;
      const watched = (await call(at, "POST", "/spawn", { model: "sim-1" })).body.threadId as string;
      await call(at, "POST", `/threads/${watcher}/subscriptions`, { watch: { thread: watched }, filter: { kinds: ["message"] } });
      const sent = await call(at, "POST", `/threads/${watched}/messages`, { text: "matched before the stop", hold: true });
      await held.stop();
      const restartedAt = Date.now();
      held = await startFront({ dataDir: dir });
      const again = held.url;
      // The watched thread delivers its outbox once its object is up again.
      await call(again, "GET", `/threads/${watched}`);
      const [wake] = await waitFor(async () => ((await wakes(watcher, again)).length > 0 ? wakes(watcher, again) : null));
      expect(wake!.body.wake.seqs).toEqual([sent.body.seq]);
      // Held until the stop (the wake-deliver drill), written only after it.
      expect(Date.parse(wake!.ts)).toBeGreaterThan(restartedAt);
      // A later match's wake carries only its own event: the first was not delivered again.
      const later = await call(again, "POST", `/threads/${watched}/messages`, { text: "matched after", hold: true });
      const all = await waitFor(async () => {
        const w = await wakes(watcher, again);
        return w.some((x) => (x.body.wake.seqs as number[]).includes(later.body.seq)) && w;
      });
      expect(all.map((w) => w.body.wake.seqs)).toEqual([[sent.body.seq], [later.body.seq]]);
    } finally {
      await held?.stop();
      removeDir(dir);
    }
  });
});
