import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/** A command the runtime (or its tests) runs, the Debian package that provides it, and what it is for. */
export interface Needed {
  command: string;
  pkg: string;
  purpose: string;
}

/** What decides whether missing packages can be installed here. */
export interface MachineFacts {
  missing: Needed[];
  isRoot: boolean;
  /** `sudo -n true` succeeds: sudo without a password. */
  hasSudo: boolean;
  hasApt: boolean;
  /** The operator allows installing (SERVICE_SANDBOX_INSTALL is not `off`). */
  allowed: boolean;
}

/** Why the missing packages are not there, and what a person runs to bring them (the caller says when to restart). */
export interface Unavailable {
  reason: string;
  remedy: string;
}

export type InstallPlan =
  | { action: "none" }
  | { action: "install"; packages: string[]; /** `sudo -n` when not root. */ prefix: string[]; /** The line said before installing. */ announce: string }
  | ({ action: "cannot" } & Unavailable);

const names = (missing: Needed[]) => missing.map((m) => m.pkg).join(" ");

/** The command a person runs, as them, to install `missing`. */
function byHand(missing: Needed[], isRoot: boolean): string {
  return `${isRoot ? "" : "sudo "}apt-get install ${names(missing)}`;
}

/** Whether and how `facts.missing` gets installed: a pure decision, so each case is said and tested. */
export function planInstall(facts: MachineFacts): InstallPlan {
  const { missing, isRoot } = facts;
  if (missing.length === 0) return { action: "none" };
  const pkgs = missing.map((m) => m.pkg).join(" and ");
  const [isAre, it] = missing.length === 1 ? ["is", "it"] : ["are", "them"];
  if (!facts.allowed)
    return {
      action: "cannot",
      reason: `${pkgs} ${isAre} not installed and SERVICE_SANDBOX_INSTALL=off forbids installing ${it}`,
      remedy: `run '${byHand(missing, isRoot)}' (or unset SERVICE_SANDBOX_INSTALL)`,
    };
  if (!facts.hasApt)
    return { action: "cannot", reason: `${pkgs} ${isAre} not installed and this machine has no apt-get to install ${it} with`, remedy: `install ${pkgs} with this system's package manager` };
  if (!isRoot && !facts.hasSudo)
    return { action: "cannot", reason: `${pkgs} ${isAre} not installed and this user cannot install ${it} (not root, and no sudo without a password)`, remedy: `run '${byHand(missing, false)}'` };
  const purposes = missing.map((m) => `${m.pkg} (${m.purpose})`).join(", ");
  return {
    action: "install",
    packages: missing.map((m) => m.pkg),
    // sudo's env_reset would drop DEBIAN_FRONTEND, and apt-get could then ask a question nobody answers.
    prefix: isRoot ? [] : ["sudo", "-n", "env", "DEBIAN_FRONTEND=noninteractive"],
    announce: `installing ${purposes} from Debian's packages: ${isRoot ? "" : "sudo -n "}apt-get install ${names(missing)}`,
  };
}

/** `command` is an executable file in one of PATH's directories. */
export function onPath(command: string, path = process.env.PATH ?? ""): boolean {
  return path.split(delimiter).some((dir) => {
    try {
      accessSync(join(dir || ".", command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** The facts of this machine for `needed`. */
export function machineFacts(needed: Needed[], allowed: boolean): MachineFacts {
  const missing = needed.filter((n) => !onPath(n.command));
  const isRoot = process.getuid?.() === 0;
  // Asked only when it could matter: sudo may log each try.
  const hasSudo = allowed && missing.length > 0 && !isRoot && onPath("sudo") && spawnSync("sudo", ["-n", "true"], { stdio: "ignore", timeout: 10_000 }).status === 0;
  return { missing, isRoot, hasSudo, hasApt: onPath("apt-get"), allowed };
}

/** apt-get's error line (its warnings come first), or how it ended. */
function failureOf(run: ReturnType<typeof spawnSync>): string {
  if (run.error) return run.error.message;
  const lines = (run.stderr?.toString() ?? "").split("\n").filter((l) => l.trim());
  const said = lines.find((l) => l.startsWith("E:")) ?? lines.at(-1) ?? "";
  return said || (run.signal ? `killed by ${run.signal}` : `exit code ${run.status}`);
}

/**
 * Installs what `needed` lacks from Debian's packages when this machine allows it, saying
 * what it installs through `say` first; null when everything is there afterwards, else why
 * not and what to run. apt-get's own output goes to this process's stdout.
 */
export function installMissing(needed: Needed[], allowed: boolean, say: (line: string) => void): Unavailable | null {
  const facts = machineFacts(needed, allowed);
  const plan = planInstall(facts);
  if (plan.action === "none") return null;
  if (plan.action === "cannot") return { reason: plan.reason, remedy: plan.remedy };
  say(plan.announce);
  const pkgs = plan.packages.join(" and ");
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  for (const args of [["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "--no-install-recommends", ...plan.packages]]) {
    const [file, ...rest] = [...plan.prefix, ...args];
    const run = spawnSync(file!, rest, { stdio: ["ignore", "inherit", "pipe"], env, timeout: 600_000 });
    if (run.status !== 0)
      return { reason: `installing ${pkgs} failed (${args.slice(0, 2).join(" ")}: ${failureOf(run)})`, remedy: `run '${byHand(facts.missing, facts.isRoot)}' and read its error` };
  }
  const still = facts.missing.filter((n) => !onPath(n.command));
  if (still.length)
    return { reason: `${pkgs} was installed but ${still.map((s) => s.command).join(", ")} is still not on PATH`, remedy: `add the directory that holds ${still[0]!.command} to PATH` };
  return null;
}
