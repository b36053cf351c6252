import { execFileSync } from "node:child_process";

/**
 * The Debian packages the Node tests drive for real: bubblewrap (the sandbox every
 * session's tool commands run in) and Chromium (the browser tests). A clean machine gets
 * them here, from Debian's packages, so `npm test` needs nothing installed by hand.
 */
const NEEDED: { command: string; pkg: string }[] = [
  { command: "bwrap", pkg: "bubblewrap" },
  { command: "chromium", pkg: "chromium" },
];

function has(command: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

export default function setup(): void {
  const missing = NEEDED.filter((n) => !has(n.command));
  if (missing.length === 0) return;
  const pkgs = missing.map((m) => m.pkg);
  const asRoot = process.getuid?.() === 0 ? [] : ["sudo", "-n"];
  const run = (args: string[]) => {
    const [cmd, ...rest] = [...asRoot, ...args];
    execFileSync(cmd!, rest, { stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }, timeout: 600_000 });
  };
  try {
    console.log(`test setup: installing ${pkgs.join(", ")} from Debian's packages`);
    run(["apt-get", "update", "-qq"]);
    run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", ...pkgs]);
  } catch (err) {
    throw new Error(`the tests need ${pkgs.join(" and ")} (apt-get install ${pkgs.join(" ")}), and installing them failed: ${(err as Error).message}`);
  }
  const still = missing.filter((n) => !has(n.command));
  if (still.length) throw new Error(`installed ${pkgs.join(", ")} but ${still.map((s) => s.command).join(", ")} is still not on PATH`);
}
