import { readFileSync } from "node:fs";

/** What /proc says of a process: enough to tell it from a later one that got the same pid. */
export interface ProcessIdentity {
  pid: number;
  /** Clock ticks after boot at which it started (field 22 of /proc/<pid>/stat). */
  start: string;
}

interface Stat {
  state: string;
  start: string;
}

/** Fields after the command name, which may itself hold spaces and parentheses. */
function stat(pid: number): Stat | null {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = raw.slice(raw.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0]!, start: fields[19]! };
  } catch {
    return null;
  }
}

/** Running, as opposed to gone or a zombie nobody reaped (an orphan's parent may never reap it). */
export function alive(pid: number): boolean {
  const s = stat(pid);
  return s !== null && s.state !== "Z";
}

/** The identity of a running process, or null. */
export function identify(pid: number): ProcessIdentity | null {
  const s = stat(pid);
  return s && s.state !== "Z" ? { pid, start: s.start } : null;
}

/** The same process is still running: same pid, same start time, not a zombie. */
export function stillRunning(id: ProcessIdentity): boolean {
  return identify(id.pid)?.start === id.start;
}

/**
 * Kills a process we started, after checking it is still that process; its process group
 * too when it leads one (a pid that is not a group leader names no group, so `-pid` hits
 * nobody else).
 */
export function killIfSame(id: ProcessIdentity): boolean {
  if (!stillRunning(id)) return false;
  for (const target of [-id.pid, id.pid]) {
    try {
      process.kill(target, "SIGKILL");
    } catch {
      // no such group, or gone meanwhile
    }
  }
  return true;
}
