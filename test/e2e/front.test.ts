import { execFileSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { alive } from "../../local-front/process/data-lock.js";
import { removeDir, startFront, type Front } from "../support/front.js";

const fronts: Front[] = [];
afterAll(async () => {
  for (const f of fronts) await f.stop().catch(() => {});
  for (const f of fronts) removeDir(f.dataDir);
});

/** The workerd processes a front started: one per shard. */
function workerdChildren(pid: number): number[] {
  try {
    return execFileSync("pgrep", ["-P", String(pid), "workerd"]).toString().trim().split("\n").map(Number);
  } catch {
    return [];
  }
}

describe("the front", () => {
  it("refuses to listen on a non-loopback address, with a clear message", async () => {
    const err = await startFront({ env: { SERVICE_AGENTS_HOST: "0.0.0.0" } }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/exited 2/);
    expect((err as Error).message).toMatch(/binds loopback only/);
  });

  it("logs one start line with address, data directory and build, and stops cleanly on SIGTERM", async () => {
    const front = await startFront();
    const line = front.output().split("\n").find((l) => l.includes("listening on"))!;
    expect(line).toContain(front.url);
    expect(line).toContain(`data=${front.dataDir}`);
    expect(line).toMatch(/build=\S+/);
    const workerd = workerdChildren(front.proc.pid!);
    expect(workerd).toHaveLength(2);
    expect(workerd.every(alive)).toBe(true);
    expect(await front.stop()).toBe(0);
    expect(workerd.some(alive)).toBe(false);
    removeDir(front.dataDir);
  });

  it("refuses a second runtime on the same data directory", async () => {
    const front = await startFront();
    fronts.push(front);
    const err = await startFront({ dataDir: front.dataDir }).catch((e: Error) => e);
    expect((err as Error).message).toMatch(/another runtime .* is serving this data directory/);
  });

  it("does not leave workerd running after a kill -9, and restarts on the same data", async () => {
    const front = await startFront();
    const { threadId } = await front.client.spawn();
    const workerd = workerdChildren(front.proc.pid!);
    expect(workerd).toHaveLength(2);
    await front.kill9();
    const again = await startFront({ dataDir: front.dataDir });
    fronts.push(again);
    expect(workerd.some(alive)).toBe(false);
    expect((await again.client.thread(threadId)).id).toBe(threadId);
  });

  it("stops, saying why, when one of its workerd processes dies, and takes the other with it", async () => {
    const front = await startFront();
    const [survivor, other] = workerdChildren(front.proc.pid!);
    process.kill(other!, "SIGKILL");
    const code = await new Promise<number | null>((r) => front.proc.once("exit", (c) => r(c)));
    expect(code).toBe(1);
    expect(front.output()).toMatch(new RegExp(`a workerd process \\(pid ${other}\\) exited; stopping the host`));
    expect(alive(survivor!)).toBe(false);
    removeDir(front.dataDir);
  });
});
