import { readdirSync, readFileSync } from "node:fs";

/** Every process below `root` (children, their children, ...), read from /proc. */
export function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const walk = (pid: number) => {
    for (const [child, p] of parent) if (p === pid) (found.push(child), walk(child));
  };
  walk(root);
  return found;
}

/** A process's command name, or null when it is gone (it may exit between a listing and this read). */
export function nameOf(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return null;
  }
}
