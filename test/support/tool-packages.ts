import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";

/**
 * Tools a test drives that cannot live in the project's own dependencies: openapi-typescript
 * needs TypeScript 5's compiler API, which the project's TypeScript 7 does not ship. Each has
 * its own package and lockfile under test/tools/, installed here with `npm ci` when what is
 * installed is not what the lockfile pins, so `npm test` needs nothing installed by hand.
 */
const TOOLS = ["openapi-typescript"];

const root = resolve(import.meta.dirname, "../tools");

function installed(dir: string): boolean {
  const lock = join(dir, "package-lock.json");
  const copy = join(dir, "node_modules/.package-lock.json");
  if (!existsSync(copy)) return false;
  const pinned = (JSON.parse(readFileSync(lock, "utf8")) as { packages: Record<string, { version?: string }> }).packages;
  const present = (JSON.parse(readFileSync(copy, "utf8")) as { packages: Record<string, { version?: string }> }).packages;
  return Object.entries(pinned).every(([path, p]) => path === "" || present[path]?.version === p.version);
}

/** Installs the tool package in `dir` (its own package.json and lockfile) unless what its lockfile pins is there. */
export function ensureToolPackage(dir: string, say: (line: string) => void): void {
  if (installed(dir)) return;
  say(`installing ${basename(dir)} into ${dir}`);
  execFileSync("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: dir, stdio: "inherit" });
}

export default function setup(): void {
  for (const tool of TOOLS) ensureToolPackage(join(root, tool), (line) => console.log(`test setup: ${line}`));
}
