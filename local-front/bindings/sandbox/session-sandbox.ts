import { spawn, type ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { constants } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import type { StartedProcesses } from "./started.js";

export const RUNNER = join(import.meta.dirname, "session-runner.mjs");

/** The frames session-runner.mjs reads and writes (its header says how they are laid out). */
const RUN = 1;
const STDIN = 2;
const STDIN_END = 3;
const STDOUT = 4;
const STDERR = 5;
const EXIT = 6;
const READY = 7;

function frame(type: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header[0] = type;
  header.writeUInt32BE(payload.length, 1);
  return Buffer.concat([header, payload]);
}

/**
 * One command of a session, run by a fence: its output, its input when it takes one, and
 * `stop`, which kills it and everything it started. Emits `close` (code, signal) once, as a
 * ChildProcess does: `signal` is set only when it was stopped; a command that died of a
 * signal of its own has the code a shell gives it (128 + the signal's number), as bwrap gives it.
 */
export class FencedCommand extends EventEmitter<{ close: [number | null, NodeJS.Signals | null]; error: [Error] }> {
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  readonly stdin: PassThrough | null;
  private closed = false;

  constructor(
    input: boolean,
    readonly stop: () => void,
  ) {
    super();
    this.stdin = input ? new PassThrough() : null;
  }

  /** The one end of the command. */
  finish(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.closed) return;
    this.closed = true;
    this.stdout.end();
    this.stderr.end();
    this.emit("close", code, signal);
  }

  /** A command run as a process of its own (the sandbox off): its group killed by `stop`. */
  static of(child: ChildProcess, input: boolean): FencedCommand {
    const command = new FencedCommand(input, () => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    });
    child.stdout!.pipe(command.stdout, { end: false });
    child.stderr!.pipe(command.stderr, { end: false });
    if (input) {
      child.stdin!.on("error", () => {});
      command.stdin!.pipe(child.stdin!);
    }
    child.on("error", (err) => command.emit("error", err));
    child.on("close", (code, signal) => command.finish(code, signal));
    return command;
  }
}

/**
 * A session's kept sandbox: one bwrap, started with the session's fence, whose first process
 * (session-runner.mjs) runs the session's commands one at a time. Recorded while it runs, and
 * killed whole (its process group, and with bwrap's --die-with-parent everything inside) by
 * `end`, by a command's `stop`, or with the front.
 */
export class KeptSandbox {
  private bwrap!: ChildProcess;
  private current: { command: FencedCommand; stopped: boolean; request: Buffer; fedInput: boolean } | null = null;
  private pending: Buffer = Buffer.alloc(0);
  private stopping = false;
  /** The runner said it is set up (its first frame): bwrap built the fence, and nothing of a command ran before this. */
  private spoke = false;
  /** bwrap's and the runner's words before the runner spoke, held so that a sandbox set up again (`retry`) does not hand a failed setup's words to the command. */
  private early: Buffer[] = [];
  private retries = 0;
  ended = false;

  /** The bwrap arguments as one string, the fence included: a command whose fence is another runs elsewhere. */
  fence: string;

  constructor(
    args: string[],
    private readonly cwd: string,
    private readonly env: Record<string, string>,
    private readonly started: StartedProcesses,
    /** The session's bwrap arguments worked out again (see `retry`). */
    private readonly refence: () => string[] = () => args,
  ) {
    this.fence = JSON.stringify(args);
    this.launch(args);
  }

  private launch(args: string[]): void {
    const bwrap = spawn("bwrap", args, { cwd: this.cwd, detached: true, env: this.env, stdio: ["pipe", "pipe", "pipe"] });
    this.bwrap = bwrap;
    this.started.add(bwrap.pid);
    bwrap.stdin!.on("error", () => {});
    bwrap.stdout!.on("data", (chunk: Buffer) => this.read(chunk));
    // bwrap's and the runner's own words (a mount refused, a port that would not open) are the running command's.
    bwrap.stderr!.on("data", (chunk: Buffer) => (this.spoke ? this.current?.command.stderr.write(chunk) : this.early.push(chunk)));
    bwrap.on("error", (err) => {
      this.ended = true;
      this.current?.command.emit("error", err);
      this.current = null;
    });
    bwrap.once("close", (code, signal) => {
      this.started.remove(bwrap.pid);
      const current = this.current;
      if (current && !current.stopped && this.retry(current)) return;
      this.ended = true;
      this.flushEarly();
      this.current = null;
      if (!current) return;
      if (current.stopped) return current.command.finish(null, "SIGKILL");
      // The sandbox ended under a running command (its ports could not open, bwrap refused a mount): its code is the command's, as it was when each command had its own bwrap.
      current.command.finish(code ?? 128 + (constants.signals[signal!] ?? 0), null);
    });
  }

  private flushEarly(): void {
    for (const chunk of this.early) this.current?.command.stderr.write(chunk);
    this.early = [];
  }

  /**
   * A sandbox that ended before its runner said it was set up, whose fence is no longer the session's,
   * is set up again with the new fence and given the command again: the fence is worked out
   * from places that exist when it is, and one can vanish before bwrap mounts over it
   * (another runtime's data directory removed in those milliseconds), which bwrap, unable
   * to make a mount point in the read-only view, refuses. Nothing of the command ran, and
   * none of its input was taken. A fence that is still the same failed for a reason of its
   * own: the command gets bwrap's words and code, as before.
   */
  private retry(current: NonNullable<KeptSandbox["current"]>): boolean {
    if (this.spoke || current.fedInput || this.stopping || this.retries >= 3) return false;
    let args: string[];
    try {
      args = this.refence();
    } catch {
      return false;
    }
    const fence = JSON.stringify(args);
    if (fence === this.fence) return false;
    this.retries++;
    this.fence = fence;
    this.early = [];
    this.pending = Buffer.alloc(0);
    this.launch(args);
    this.bwrap.stdin!.write(current.request);
    return true;
  }

  get busy(): boolean {
    return this.current !== null;
  }

  /** Runs `argv` with `env` (which the runner hands it whole); `input`: the command reads its stdin from `command.stdin`. */
  run(argv: string[], env: Record<string, string>, input: boolean): FencedCommand {
    if (this.busy || this.ended) throw new Error("a kept sandbox runs one command at a time, while it lives");
    const entry = { command: new FencedCommand(input, () => this.stopCurrent()), stopped: false, request: frame(RUN, Buffer.from(JSON.stringify({ argv, env, input }))), fedInput: false };
    this.current = entry;
    this.bwrap.stdin!.write(entry.request);
    entry.command.stdin?.on("data", (b: Buffer) => ((entry.fedInput = true), this.bwrap.stdin!.write(frame(STDIN, b))));
    entry.command.stdin?.on("end", () => ((entry.fedInput = true), this.bwrap.stdin!.write(frame(STDIN_END, Buffer.alloc(0)))));
    return entry.command;
  }

  /** Kills the sandbox whole, and what runs in it. */
  end(): void {
    if (this.stopping) return;
    this.stopping = true;
    try {
      if (this.bwrap.pid) process.kill(-this.bwrap.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }

  /** A stopped command (timed out, its turn interrupted) takes its sandbox with it, as when it had its own. */
  private stopCurrent(): void {
    if (this.current) this.current.stopped = true;
    this.end();
  }

  private read(chunk: Buffer): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    while (this.pending.length >= 5) {
      const length = this.pending.readUInt32BE(1);
      if (this.pending.length < 5 + length) return;
      const type = this.pending[0];
      const payload = this.pending.subarray(5, 5 + length);
      this.pending = this.pending.subarray(5 + length);
      if (type === READY) {
        this.spoke = true;
        this.flushEarly();
        continue;
      }
      const current = this.current;
      if (!current || current.stopped) continue;
      if (type === STDOUT) current.command.stdout.write(payload);
      else if (type === STDERR) current.command.stderr.write(payload);
      else if (type === EXIT) {
        const { code, signal } = JSON.parse(payload.toString()) as { code: number | null; signal: NodeJS.Signals | null };
        this.current = null;
        current.command.finish(code ?? 128 + (constants.signals[signal!] ?? 0), null);
      }
    }
  }
}
