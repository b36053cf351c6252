import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { alive, identify, killIfSame, type ProcessIdentity } from "../bindings/sandbox/identity.js";
import { STARTED_BY, StartedProcesses } from "../bindings/sandbox/started.js";

export { alive };

interface LockFile {
  front: number;
  /**
   * Each workerd process, with its start time so that a pid the system gave to another
   * process since is never killed; a bare pid (or one number) in lock files of earlier builds.
   */
  workerd: (ProcessIdentity | number)[] | number | null;
  /** The watchdog's pid, so that tests and operators can find it. */
  watchdog?: number | null;
}

/**
 * The watchdog: waits while the front (known by pid and start time, so a zombie or a
 * reused pid counts as dead) runs, then kills each workerd that is still the one started,
 * and every process carrying this boot's tag (what the engines started, see started.ts).
 * POSIX sh, with nothing of the front's environment.
 */
const WATCHDOG = `
start_of() { s=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 0; set -- $s; [ "$1" = Z ] || echo "\${20}"; }
while [ "$(start_of "$1")" = "$2" ]; do sleep 1; done
tag=$3; shift 3
for id in "$@"; do pid=\${id%:*}; [ "$(start_of "$pid")" = "\${id#*:}" ] && kill -9 "$pid" 2>/dev/null; done
for p in /proc/[0-9]*; do n=\${p#/proc/}; grep -qzx "${STARTED_BY}=$tag" "$p/environ" 2>/dev/null && { kill -9 "-$n" 2>/dev/null; kill -9 "$n" 2>/dev/null; }; done
`;

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

/**
 * A runtime's process by its command line: the front's bundle (what `npm start` and the
 * tests run), or one of local-front's programs run from source (a restore holds the lock too).
 */
const isRuntime = (command: string) => command.includes("/.front/main.mjs") || command.includes("local-front/");

/** The pid of a live front other than this process that holds `dataDir`'s lock, or null. */
export function frontHolding(dataDir: string): number | null {
  const lock = readLock(join(dataDir, "front.pid"));
  return lock && lock.front !== process.pid && alive(lock.front) && isRuntime(commandOf(lock.front)) ? lock.front : null;
}

/**
 * One runtime per data directory. The lock file names the front and its workerd; a
 * front killed with SIGKILL leaves workerd running (it does not notice its parent
 * dying), so a new front stops that orphan before opening the same stores.
 */
export class DataLock {
  private readonly path: string;
  private watchdog: number | null = null;
  /** What this boot starts beside workerd; the previous boot's leftovers are stopped by `acquire`. */
  readonly started: StartedProcesses;

  constructor(dataDir: string) {
    mkdirSync(dataDir, { recursive: true });
    this.path = join(dataDir, "front.pid");
    this.started = new StartedProcesses(dataDir);
  }

  async acquire(): Promise<void> {
    const holder = frontHolding(dirname(this.path));
    if (holder) throw new DataDirBusy(`another runtime (pid ${holder}) is serving this data directory`);
    const previous = readLock(this.path);
    for (const entry of [previous?.workerd ?? []].flat()) {
      // A bare pid from an earlier build can only be checked by its name.
      const id = typeof entry === "number" ? (commandOf(entry).includes("workerd") ? identify(entry) : null) : entry;
      if (id && killIfSame(id)) await waitGone(id.pid, 5000);
    }
    this.started.stopLeftovers();
    this.write({ front: process.pid, workerd: null });
  }

  /** Records the workerd processes and starts a watchdog that stops them, and what the engines started, if this front dies without cleaning up. */
  attach(workerd: number[]): void {
    const ids = workerd.map(identify).filter((id): id is ProcessIdentity => id !== null);
    const front = identify(process.pid)!;
    const child = spawn("sh", ["-c", WATCHDOG, "watchdog", String(front.pid), front.start, this.started.tag, ...ids.map((id) => `${id.pid}:${id.start}`)], {
      detached: true,
      stdio: "ignore",
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    });
    child.unref();
    this.watchdog = child.pid ?? null;
    this.write({ front: process.pid, workerd: ids, watchdog: this.watchdog });
  }

  release(): void {
    if (this.watchdog) {
      try {
        process.kill(this.watchdog, "SIGKILL");
      } catch {
        /* already gone */
      }
    }
    this.started.stopAll();
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
