import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Host } from "../../objects/host.js";

const hostNamed = (name: string) => env.HOST.get(env.HOST.idFromName(name));
const rows = (host: ReturnType<typeof hostNamed>, sql: string) =>
  runInDurableObject(host, (_h: Host, state) => state.storage.sql.exec<{ thread_id: string }>(sql).toArray().map((r) => r.thread_id));

describe("the Host while the data volume is full", () => {
  it("keeps the running index and the failed turns told to it in memory, shows them, and writes them once the volume takes writes", async () => {
    const host = hostNamed("while-full");
    await host.turnStarted("thr_before");
    await host.storageRefused("SQLITE_FULL: database or disk is full", "thr_busy", Date.now());
    expect((await host.storageState()).state).toBe("full");

    // Turns go on starting and ending under the fault (alarms, wakes, loops), and some fail.
    await host.turnStarted("thr_during");
    await host.turnEnded("thr_before");
    await host.recordFailure("thr_during", "session", "the engine died");
    expect(await host.runningTurns()).toEqual(["thr_during"]);
    expect((await host.drainStatus()).active).toEqual(["thr_during"]);
    // Nothing of it is on the full volume yet.
    expect(await rows(host, "SELECT thread_id FROM running")).toEqual(["thr_before"]);

    await host.storageWritten(Date.now() + 1);
    expect((await host.storageState()).state).toBe("ok");
    expect(await rows(host, "SELECT thread_id FROM running")).toEqual(["thr_during"]);
    expect(await rows(host, "SELECT thread_id FROM failures WHERE class = 'session'")).toEqual(["thr_during"]);
    expect((await host.incidents(0)).find((i) => i.class === "session")?.threadIds).toContain("thr_during");
  });
});
