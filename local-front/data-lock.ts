import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

interface LockFile {
  front: number;
  /** One pid per workerd process; a single number in lock files written before there were two. */
  workerd: number[] | number | null;
}

/** Running, as opposed to gone or a zombie nobody reaped (an orphan's parent may never reap it). */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return "";
  }
}

async function waitGone(pid: number, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (alive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
}

export class DataDirBusy extends Error {}

function readLock(path: string): LockFile | null {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as LockFile;
  } catch {
    return null;
  }
}

/** The pid of a live front other than this process that holds `dataDir`'s lock, or null. */
export function frontHolding(dataDir: string): number | null {
  const lock = readLock(join(dataDir, "front.pid"));
  return lock && lock.front !== process.pid && alive(lock.front) && commandOf(lock.front).includes("local-front") ? lock.front : null;
}

/**
 * One runtime per data directory. The lock file names the front and its workerd; a
 * front killed with SIGKILL leaves workerd running (it does not notice its parent
 * dying), so a new front stops that orphan before opening the same stores.
 */
export class DataLock {
  private readonly path: string;
  private watchdog: number | null = null;

  constructor(dataDir: string) {
    mkdirSync(dataDir, { recursive: true });
    this.path = join(dataDir, "front.pid");
  }

  async acquire(): Promise<void> {
    const holder = frontHolding(dirname(this.path));
    if (holder) throw new DataDirBusy(`another runtime (pid ${holder}) is serving this data directory`);
    const previous = readLock(this.path);
    for (const pid of [previous?.workerd ?? []].flat()) {
      if (!alive(pid) || !commandOf(pid).includes("workerd")) continue;
      process.kill(pid, "SIGKILL");
      await waitGone(pid, 5000);
    }
    this.write({ front: process.pid, workerd: null });
  }

  /** Records the workerd processes and starts a watchdog that kills them if this front dies without cleaning up. */
  attach(workerd: number[]): void {
    this.write({ front: process.pid, workerd });
    const child = spawn("sh", ["-c", `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; kill -9 ${workerd.join(" ")} 2>/dev/null`], {
      detached: true,
      stdio: "ignore",
    });
    child.unref();
    this.watchdog = child.pid ?? null;
  }

  release(): void {
    if (this.watchdog) {
      try {
        process.kill(this.watchdog, "SIGKILL");
      } catch {
        /* already gone */
      }
    }
    rmSync(this.path, { force: true });
  }

  private write(lock: LockFile): void {
    writeFileSync(this.path, JSON.stringify(lock));
  }
}

/** The workerd processes Miniflare started for us: our children named workerd. */
export function findWorkerdChildren(): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      const name = stat.slice(stat.indexOf("(") + 1, close);
      const ppid = Number(stat.slice(close + 2).split(" ")[1]);
      if (ppid === process.pid && name === "workerd") found.push(Number(entry));
    } catch {
      /* process ended while we looked */
    }
  }
  return found;
}
