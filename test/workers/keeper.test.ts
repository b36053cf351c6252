import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { HostReport } from "../../src/api/operator.js";
import { hostOf } from "../../src/platform/stubs.js";

const GB = 1e9;
const thresholds = { pauseBelowBytes: 10 * GB, resumeAboveBytes: 30 * GB, retryAfterS: 30 };
let clock = Date.parse("2026-01-01T00:00:00Z");

function report(freeGb: number): HostReport {
  clock += 30_000;
  return {
    at: new Date(clock).toISOString(),
    disk: { path: "/data", freeBytes: freeGb * GB, totalBytes: 100 * GB },
    load: [0.5, 0.4, 0.3],
    cpus: 2,
    memory: { freeBytes: GB, totalBytes: 4 * GB },
    deviceSimulators: [],
  };
}

describe("the disk keeper (inside the Host object)", () => {
  it("pauses under 10 GB, stays paused until over 30 GB, and keeps an operator's clear until the volume recovers", async () => {
    const host = hostOf(env);
    const paused = async (freeGb: number) => (await host.hostReport(report(freeGb), thresholds)).paused;
    expect(await paused(50)).toBe(false);
    expect(await paused(9)).toBe(true);
    // Between the thresholds nothing changes, either way.
    expect(await paused(20)).toBe(true);
    expect(await paused(31)).toBe(false);
    expect(await paused(20)).toBe(false);
    expect(await paused(5)).toBe(true);
    const cleared = await host.clearSpawnPause("made room by hand");
    expect(cleared).toMatchObject({ paused: false, cleared: { reason: "made room by hand" } });
    expect(await paused(4)).toBe(false);
    // A volume that keeps filling after the clear (under half of the 5 GB it had) pauses again.
    expect(await paused(2)).toBe(true);
    await host.clearSpawnPause("made more room");
    // Recovery ends the clear; the next drop pauses again.
    expect(await paused(40)).toBe(false);
    expect((await host.spawnPause()).cleared).toBeNull();
    expect(await paused(3)).toBe(true);
    expect((await host.hostSamples(0)).length).toBe(10);
  });
});
