import { execFile } from "node:child_process";
import { statfs } from "node:fs/promises";
import { cpus, freemem, loadavg, totalmem } from "node:os";
import { promisify } from "node:util";
import type { HostReport, KeeperThresholds } from "../../src/api/operator.js";

export interface KeeperConfig {
  intervalMs: number;
  pauseBelowBytes: number;
  resumeAboveBytes: number;
}

/** Booted iOS simulators where `xcrun` exists (macOS); no machine here has any other kind. */
async function bootedSimulators(): Promise<HostReport["deviceSimulators"]> {
  if (process.platform !== "darwin") return [];
  try {
    const { stdout } = await promisify(execFile)("xcrun", ["simctl", "list", "devices", "booted", "-j"], { timeout: 5000 });
    const devices = (JSON.parse(stdout) as { devices: Record<string, { name: string }[]> }).devices;
    return Object.entries(devices).flatMap(([runtime, list]) => list.map((d) => ({ name: d.name, runtime })));
  } catch {
    return [];
  }
}

/** The data directory's volume now: what the keeper samples, and what the worker asks of an opaque write failure. */
export async function measureVolume(dataDir: string): Promise<{ freeBytes: number; totalBytes: number }> {
  const fs = await statfs(dataDir);
  return { freeBytes: fs.bavail * fs.bsize, totalBytes: fs.blocks * fs.bsize };
}

export async function measureHost(dataDir: string): Promise<HostReport> {
  return {
    at: new Date().toISOString(),
    disk: { path: dataDir, ...(await measureVolume(dataDir)) },
    load: loadavg() as [number, number, number],
    cpus: cpus().length,
    memory: { freeBytes: freemem(), totalBytes: totalmem() },
    deviceSimulators: await bootedSimulators(),
  };
}

/**
 * Measures the machine now and every `intervalMs`, and tells the worker (the Host object
 * decides the spawn pause from it). A failed report is logged and tried again next time.
 */
export function startHostReports(dataDir: string, keeper: KeeperConfig, send: (body: { report: HostReport; thresholds: KeeperThresholds }) => Promise<void>): { stop(): void; now(): Promise<void> } {
  const thresholds: KeeperThresholds = {
    pauseBelowBytes: keeper.pauseBelowBytes,
    resumeAboveBytes: keeper.resumeAboveBytes,
    retryAfterS: Math.max(1, Math.ceil(keeper.intervalMs / 1000)),
  };
  const once = async () => {
    try {
      await send({ report: await measureHost(dataDir), thresholds });
    } catch (err) {
      console.error(`agent-runtime: host report failed: ${(err as Error).message}`);
    }
  };
  const timer = setInterval(() => void once(), keeper.intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer), now: once };
}
