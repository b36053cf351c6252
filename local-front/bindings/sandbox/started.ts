import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { identify, killIfSame, type ProcessIdentity } from "./identity.js";

/**
 * Every process the engines start carries this variable, valued with the boot's tag, and
 * hands it down to whatever it starts: a tool command that left its parent's process group
 * (engine_a's run in groups of their own) is still known as ours by it.
 */
export const STARTED_BY = "SERVICE_STARTED_BY";

interface StartedRecord {
  tag: string;
  processes: ProcessIdentity[];
}

function read(path: string): StartedRecord | null {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as StartedRecord;
  } catch {
    return null;
  }
}

/** Processes whose environment, as they were started, holds `STARTED_BY=<tag>`. */
function tagged(tag: string): ProcessIdentity[] {
  const needle = `\0${STARTED_BY}=${tag}\0`;
  const found: ProcessIdentity[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (!`\0${readFileSync(`/proc/${entry}/environ`, "latin1")}`.includes(needle)) continue;
    } catch {
      continue;
    }
    const id = identify(Number(entry));
    if (id) found.push(id);
  }
  return found;
}

/** Stops what a record names: each process if it is still the one recorded, and every process carrying its tag. */
function stopRecorded(record: StartedRecord): number {
  let stopped = 0;
  for (const id of [...record.processes, ...tagged(record.tag)]) if (killIfSame(id)) stopped++;
  return stopped;
}

/**
 * What this boot started outside the workerd processes (engine CLIs, tool commands, their
 * sandboxes), kept in `<data dir>/started.json` so that the next boot stops what a killed
 * front left running, and never a process it did not start: each is named by pid and start
 * time, and the tag in its environment.
 */
export class StartedProcesses {
  readonly tag = randomBytes(12).toString("hex");
  private readonly path: string;
  private readonly live = new Map<number, ProcessIdentity>();

  constructor(dataDir: string) {
    this.path = join(dataDir, "started.json");
  }

  /** The previous boot's leftovers, stopped; then this boot's record begins. Returns how many were stopped. */
  stopLeftovers(): number {
    const previous = read(this.path);
    const stopped = previous ? stopRecorded(previous) : 0;
    this.save();
    return stopped;
  }

  /** The variables every started process carries. */
  env(): Record<string, string> {
    return { [STARTED_BY]: this.tag };
  }

  add(pid: number | undefined): void {
    const id = pid === undefined ? null : identify(pid);
    if (!id) return;
    this.live.set(pid!, id);
    this.save();
  }

  remove(pid: number | undefined): void {
    if (pid === undefined || !this.live.delete(pid)) return;
    this.save();
  }

  /** At a clean stop: whatever is still running goes, and the record with it. */
  stopAll(): void {
    stopRecorded({ tag: this.tag, processes: [...this.live.values()] });
    this.live.clear();
    rmSync(this.path, { force: true });
  }

  get file(): string {
    return this.path;
  }

  private save(): void {
    writeFileSync(this.path, JSON.stringify({ tag: this.tag, processes: [...this.live.values()] } satisfies StartedRecord));
  }
}
