import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from "node:child_process";
import { existsSync, realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { LoopbackBridge, portOf } from "./loopback-bridge.js";
import type { StartedProcesses } from "./started.js";
import { FencedCommand, KeptSandbox, RUNNER } from "./session-sandbox.js";
import type { Unavailable } from "../../process/debian-packages.js";
import type { SandboxReport } from "../../../src/api/engines.js";

const FORWARDER = join(import.meta.dirname, "loopback-forwarder.mjs");
/** What every session runs on, bound from the host's `/`: another runtime's place over any of these would break every session. */
const SYSTEM = ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/dev", "/proc"];

/** `bwrap`: every engine process and tool command runs fenced; `off`: unfenced (SERVICE_SANDBOX=off, unsafe); `unavailable`: refused. */
export type SandboxState = Exclude<SandboxReport["state"], "unknown">;

export class SandboxRefused extends Error {}

/** What no session may read, and the few things inside it that sessions are handed. */
export interface FencedPlaces {
  /** Directories and files hidden from every session: the data directory, the engine state, secret files kept elsewhere. */
  hidden: string[];
  /** Other runtimes' places, hidden the same way; asked again for each session, as runtimes start after this one. */
  others?: () => string[];
  /** Files inside hidden places that sessions are told to read (the proxy's CA certificate and trust bundle). */
  readable: string[];
  /**
   * What the front runs (runtime.ts): the checkout, its node_modules, Node. Read-only in
   * every session whatever its `cwd`, and never the `cwd`'s descendant: a session that
   * changed them would run its code in the front, outside any sandbox, at its next start.
   */
  runtime: string[];
  /**
   * The runtime-owned worktree holding a path (a session's real cwd), as the runtime
   * recorded it, where no session writes (bindings/git/worktrees.ts): its root, mode and the
   * mirror it borrows objects from. Null: the path is in none.
   */
  worktreeOf?: (path: string) => { root: string; mode: "review" | "build"; mirror: string } | null;
}

/** Where one session works. */
export interface SessionPlaces {
  /** Its working directory: the spawn's `cwd`, or its own scratch directory. */
  cwd: string;
  /** Directories of its own that may lie inside hidden places (its scratch directory, its engine's home): bound back writable. */
  own: string[];
  /**
   * A program of the runtime's own that only reads (ripgrep over a code root): its cwd stays
   * read-only, so it may hold the runtime's programs (a code root above the checkout).
   */
  readOnly?: true;
  /**
   * The loopback URLs it must reach (its proxy, the simulator): it gets a network of its
   * own in which only these answer. Null or absent: the host's network (no proxy on loopback to go through).
   */
  reach?: string[] | null;
  /** Places besides the cwd it reads (a merged child's checkout): bound read-only, unless they lie in hidden places, which stay hidden. */
  reads?: string[];
  /**
   * The session works in a runtime-owned worktree of a pull request (under the hidden data
   * directory): bound writable for a build thread, read-only for a review thread, with the
   * mirror it borrows from read-only, and nothing else of the data directory.
   */
  worktree?: "review" | "build";
}

const BASE = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"];
/**
 * Namespaces of its own: pids (other processes' /proc, their environment included, are
 * not there) and, unless the session keeps the host's network, the network; a session of
 * its own (no terminal to push input into); the whole sandbox killed with bwrap or its
 * parent, the front.
 */
const ISOLATION = ["--unshare-all", "--die-with-parent", "--new-session"];

/**
 * How long a session's kept sandbox waits for its next command (the next tool call of a
 * turn, the next turn), and how many are kept at once: each holds a bwrap and an idle Node
 * (about 7 MB of its own).
 */
const KEPT_IDLE_MS = 60_000;
const KEPT_MAX = 32;

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

function within(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/**
 * What another runtime's place may not be, whatever a registry entry (or a symlink swapped in
 * after it was read) says: `/` or a directory holding the system or this runtime's own
 * programs (each of those and every directory above it).
 */
function unhideable(runtime: string[]): Set<string> {
  const out = new Set<string>();
  for (const p of [...SYSTEM, ...runtime, real(process.execPath)]) for (let dir = p; !out.has(dir); dir = dirname(dir)) out.add(dir);
  return out;
}

/**
 * A place by its real path, and whether it is a directory or a file; null for a place that
 * is gone: it may vanish between two looks (a runtime's data directory removed meanwhile).
 * Looked at before its path is resolved: most of the registry's places are gone, and a
 * resolve that throws costs ten times a look that does not.
 */
function placeOf(path: string): { real: string; kind: "dir" | "file" } | null {
  try {
    const st = statSync(path, { throwIfNoEntry: false });
    return st ? { real: realpathSync.native(path), kind: st.isDirectory() ? "dir" : "file" } : null;
  } catch {
    return null;
  }
}

/** Whether `path` lies strictly below one of `places`: its ancestors looked up, not every place compared. */
function below(path: string, places: Set<string>): boolean {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    if (places.has(dir)) return true;
    if (dir === dirname(dir)) return false;
  }
}

/**
 * The hidden places a session could see, so the ones that need hiding: a place under /tmp
 * is already out of sight under the session's private /tmp unless a bind brings it back
 * (it lies in a checkout, a cwd or a read bound there). Masking the rest would hide nothing,
 * and since every runtime that starts or stops on the machine (each test's, a CI clone's)
 * adds or removes such places, it changed the arguments of every fence, so a session's
 * kept sandbox could not be reused across two commands with a runtime starting between them.
 * `args`: the fence's binds, before and after the masks.
 */
function shown(hidden: string[], args: string[]): string[] {
  if (real("/tmp") !== "/tmp") return hidden;
  const roots: string[] = [];
  for (let i = 0; i < args.length; i++) if ((args[i] === "--bind" || args[i] === "--ro-bind") && args[i + 2] !== "/") roots.push(args[i + 2]!);
  return hidden.filter((h) => !within(h, "/tmp") || roots.some((r) => within(h, r)));
}

/** The way around a missing sandbox, said where a session is refused, never taken for the operator. */
const UNFENCED = "or set SERVICE_SANDBOX=off to run sessions unfenced (unsafe: a session can then read the data directory's secrets and the front's environment)";

/** bwrap is there but may not make the namespaces it needs (a container without user namespaces, a kernel that forbids them). */
const NAMESPACES =
  "allow unprivileged user namespaces (sysctl -w kernel.unprivileged_userns_clone=1 on Debian, kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu; in a container, run it with --privileged or a seccomp profile that allows them)";

/**
 * The fence around everything a session runs: bubblewrap with a read-only view of the
 * machine, a private /tmp, its working directory writable, the runtime's own programs
 * read-only over it, the hidden places under empty tmpfs (or /dev/null for files),
 * the session's own directories bound back writable, in pids (and, behind a proxy on
 * loopback, a network) of its own. Decided once at start; with bwrap missing or broken,
 * nothing a session asks to run runs at all.
 */
export class Sandbox {
  /** The runtime's programs by their real paths, found once: they are there from the front's start on. */
  private readonly runtime: string[];

  private constructor(
    readonly state: SandboxState,
    /** Why the sandbox is unavailable, and what an operator runs to have it. */
    readonly unavailable: Unavailable | null,
    private readonly places: FencedPlaces,
    private readonly started: StartedProcesses,
    private readonly bridge: LoopbackBridge | null = null,
  ) {
    this.runtime = [...new Set(places.runtime.filter(existsSync).map(real))];
  }

  private closing = false;

  /** Each session's kept sandbox, by its owner (a thread), with the timer that ends it when idle; oldest use first. */
  private readonly kept = new Map<string, { box: KeptSandbox; idle: NodeJS.Timeout | null }>();

  /**
   * `dataDir` keeps the sessions' loopback sockets (loopback-bridge.ts). `notInstalled`:
   * why bubblewrap could not be installed at start, which is why bwrap would be missing.
   */
  static start(mode: "on" | "off", places: FencedPlaces, started: StartedProcesses, dataDir: string, notInstalled: Unavailable | null = null): Sandbox {
    if (mode === "off") return new Sandbox("off", null, places, started);
    const unavailable = (u: Unavailable) => new Sandbox("unavailable", { reason: u.reason, remedy: `${u.remedy}, then restart the runtime` }, places, started);
    const trial = spawnSync("bwrap", [...BASE, ...ISOLATION, "true"], { stdio: ["ignore", "ignore", "pipe"], timeout: 10_000, env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
    if (trial.error) {
      if ((trial.error as NodeJS.ErrnoException).code === "ENOENT")
        return unavailable(notInstalled ?? { reason: "bubblewrap (bwrap) is not installed", remedy: "install Debian's bubblewrap package (apt-get install bubblewrap)" });
      return unavailable({ reason: `bwrap could not run: ${trial.error.message}`, remedy: "reinstall Debian's bubblewrap package (apt-get install --reinstall bubblewrap)" });
    }
    if (trial.status !== 0)
      return unavailable({ reason: `bubblewrap is installed but bwrap cannot make its namespaces here: ${trial.stderr.toString().trim() || `exit ${trial.status}`}`, remedy: NAMESPACES });
    return new Sandbox("bwrap", null, places, started, new LoopbackBridge(dataDir));
  }

  /** Ends the kept sandboxes and closes the sessions' loopback sockets (at stop). */
  close(): void {
    this.closing = true;
    for (const owner of [...this.kept.keys()]) this.drop(owner);
    this.bridge?.close();
  }

  /** For the start line: when there is no sandbox, why and what to run. */
  describe(): string {
    return this.unavailable ? `sandbox=unavailable (${this.unavailable.reason}: ${this.unavailable.remedy})` : `sandbox=${this.state}`;
  }

  /** For /health (through the engine host's `GET /engines`). */
  report(): SandboxReport {
    if (this.state === "off") return { state: "off", reason: "SERVICE_SANDBOX=off: sessions run unfenced and can read the host's secrets", remedy: "unset SERVICE_SANDBOX, then restart the runtime" };
    return { state: this.state, ...this.unavailable };
  }

  /** The sentence a refused tool command or engine reports. */
  refusal(): string {
    return `tool commands run only inside the sandbox, and ${this.unavailable?.reason}: ${this.unavailable?.remedy}; ${UNFENCED}`;
  }

  /** The bwrap arguments that fence `session`, or a refusal. */
  private fenceArgs(session: SessionPlaces): string[] {
    const kinds = new Map<string, "dir" | "file">();
    const runtime = this.runtime;
    const kept = unhideable(runtime);
    for (const p of this.places.hidden) {
      const place = placeOf(p);
      if (place) kinds.set(place.real, place.kind);
    }
    for (const o of this.places.others?.() ?? []) {
      const place = placeOf(o);
      if (place && !kept.has(place.real)) kinds.set(place.real, place.kind);
    }
    const present = new Set(kinds.keys());
    // A secret inside a hidden directory is hidden with it.
    const hidden = [...present].filter((h) => !below(h, present));
    const own = session.own.map(real);
    const cwd = real(session.cwd);
    const inHidden = (p: string) => hidden.some((h) => within(p, h));
    const tree = session.worktree ? (this.places.worktreeOf?.(cwd) ?? null) : null;
    if (session.worktree && !tree) throw new SandboxRefused(`the working directory ${session.cwd} is no worktree the runtime made; a ${session.worktree} thread works only in one`);
    // A thread may be stricter than its worktree (review in a build worktree), never looser.
    if (tree && session.worktree === "build" && tree.mode === "review")
      throw new SandboxRefused(`the working directory ${session.cwd} is a review worktree, which no build thread may change`);
    if (tree) own.push(...(session.worktree === "build" ? [real(tree.root)] : []));
    else if (inHidden(cwd) && !own.some((o) => within(cwd, o)))
      throw new SandboxRefused(`the working directory ${session.cwd} is inside the runtime's private data; sessions may not work there`);
    // The worker refused such a cwd as written (src/rules/spawn.ts); a link can still lead here.
    const held = session.readOnly ? null : runtime.find((p) => within(p, cwd));
    if (held) throw new SandboxRefused(`the working directory ${session.cwd} holds the runtime's own programs (${held}), which sessions may not change; sessions may not work there`);
    const writable = [...(session.readOnly || session.worktree === "review" ? [] : [cwd]), ...own].filter(existsSync);
    const args = [...BASE];
    // A reader's cwd is bound all the same, read-only: under /tmp the private /tmp would hide it.
    if (session.readOnly && existsSync(cwd) && !inHidden(cwd)) args.push("--ro-bind", cwd, cwd);
    for (const p of writable) if (!inHidden(p)) args.push("--bind", p, p);
    for (const p of (session.reads ?? []).map(real).filter(existsSync)) if (!inHidden(p) && !writable.some((w) => within(p, w))) args.push("--ro-bind", p, p);
    // After the writable binds, so that they win (bwrap mounts in order); this also brings back a checkout or a Node under /tmp (a CI's fresh clone), which the private /tmp hides.
    for (const p of runtime) args.push("--ro-bind", p, p);
    const late: string[] = [];
    for (const p of writable) if (inHidden(p)) late.push("--bind", p, p);
    // After the hidden places, which hide them: a review worktree read-only, and the mirror whose objects either kind reads through alternates.
    if (tree) for (const p of [...(session.worktree === "review" ? [tree.root] : []), tree.mirror].map(real).filter(existsSync)) late.push("--ro-bind", p, p);
    for (const f of this.places.readable.filter(existsSync).map(real)) if (inHidden(f)) late.push("--ro-bind", f, f);
    if (session.reach) late.push("--ro-bind", this.bridge!.dir, this.bridge!.dir);
    for (const h of shown(hidden, [...args, ...late])) args.push(...(kinds.get(h) === "dir" ? ["--tmpfs", h] : ["--ro-bind", "/dev/null", h]));
    return [...args, ...late, ...ISOLATION, ...(session.reach ? [] : ["--share-net"]), "--chdir", cwd];
  }

  /** The forwarder's (or the session runner's) arguments that open the session's loopback ports inside its network. */
  private ports(reach: string[]): string[] {
    const ports = [...new Set(reach.map(portOf))];
    for (const port of ports) this.bridge!.open(port);
    return [this.bridge!.dir, ...ports.map(String)];
  }

  /** The forwarder that opens the session's loopback ports inside its network, before `argv`. */
  private forwarded(argv: string[], reach: string[]): string[] {
    return [process.execPath, FORWARDER, ...this.ports(reach), "--", ...argv];
  }

  /** `argv` as the program and arguments to spawn: inside bwrap, as is with the sandbox off, or a refusal. */
  command(argv: string[], session: SessionPlaces): { file: string; args: string[] } {
    if (this.state === "off") return { file: argv[0]!, args: argv.slice(1) };
    if (this.state === "unavailable") throw new SandboxRefused(this.refusal());
    const fence = this.fenceArgs(session);
    return { file: "bwrap", args: [...fence, "--", ...(session.reach ? this.forwarded(argv, session.reach) : argv)] };
  }

  /** Why a process of `session` may not run (no sandbox, or a working directory among the secrets), or null. */
  refusalFor(session: SessionPlaces): string | null {
    try {
      this.command(["true"], session);
      return null;
    } catch (err) {
      if (err instanceof SandboxRefused) return err.message;
      throw err;
    }
  }

  /**
   * Runs one command of `owner`'s session (a pi turn's tool command) fenced for `session`, in
   * the session's kept sandbox: one bwrap per session, started with its first command and
   * kept while its fence is the same, each command run inside it by session-runner.mjs. The
   * fence is worked out again for every command, as for a sandbox of its own; a command whose
   * fence differs (another runtime registered meanwhile, a place gone or come) gets a new
   * sandbox, and the old one ends. A sandbox busy with a command (none of a session's commands
   * overlap) or one that ended (a command stopped) is not used again.
   */
  run(owner: string, argv: string[], session: SessionPlaces, options: { env: Record<string, string>; input: boolean }): FencedCommand {
    if (this.state !== "bwrap") return FencedCommand.of(this.spawn(argv, session, { env: options.env, stdio: [options.input ? "pipe" : "ignore", "pipe", "pipe"] }), options.input);
    const argsOf = () => {
      // A sandbox set up again after the front's stop would open ports in a closed bridge.
      if (this.closing) throw new SandboxRefused("the runtime is stopping");
      return [...this.fenceArgs(session), "--", process.execPath, RUNNER, ...(session.reach ? this.ports(session.reach) : [])];
    };
    const args = argsOf();
    const key = JSON.stringify(args);
    const env = { ...options.env, ...this.started.env() };
    const start = () => new KeptSandbox(args, session.cwd, { PATH: process.env.PATH ?? "/usr/bin:/bin", ...this.started.env() }, this.started, argsOf);
    let entry = this.kept.get(owner);
    if (entry?.box.busy) {
      const box = start();
      const command = box.run(argv, env, options.input);
      command.once("close", () => box.end());
      return command;
    }
    if (entry && (entry.box.fence !== key || entry.box.ended)) {
      this.drop(owner);
      entry = undefined;
    }
    if (!entry) {
      for (const [other, e] of this.kept) if (this.kept.size >= KEPT_MAX && !e.box.busy) this.drop(other);
      entry = { box: start(), idle: null };
    }
    if (entry.idle) clearTimeout(entry.idle);
    entry.idle = null;
    // Last used, last in the map: the oldest idle one is dropped first.
    this.kept.delete(owner);
    this.kept.set(owner, entry);
    const command = entry.box.run(argv, env, options.input);
    const kept = entry;
    command.once("close", () => {
      if (this.kept.get(owner) !== kept) return;
      if (kept.box.ended) return void this.kept.delete(owner);
      kept.idle = setTimeout(() => this.kept.get(owner) === kept && this.drop(owner), KEPT_IDLE_MS).unref();
    });
    return command;
  }

  private drop(owner: string): void {
    const entry = this.kept.get(owner);
    if (!entry) return;
    if (entry.idle) clearTimeout(entry.idle);
    this.kept.delete(owner);
    entry.box.end();
  }

  /**
   * Spawns `argv` fenced for `session`, in a process group of its own, carrying this
   * boot's tag and recorded until it exits, so that a later boot can stop it if the front dies first.
   */
  spawn(argv: string[], session: SessionPlaces, options: Omit<SpawnOptions, "cwd" | "detached"> & { env: Record<string, string> }): ChildProcess {
    const { file, args } = this.command(argv, session);
    const child = spawn(file, args, { ...options, cwd: session.cwd, detached: true, env: { ...options.env, ...this.started.env() } });
    this.started.add(child.pid);
    child.once("exit", () => this.started.remove(child.pid));
    return child;
  }
}

