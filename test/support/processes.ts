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
