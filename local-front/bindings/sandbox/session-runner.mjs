// The first process of a kept session sandbox (session-sandbox.ts): it opens the session's
// loopback ports when it has a network of its own (loopback-relay.mjs), then runs the
// session's commands one at a time as the front asks, inside this one fence, so that a
// command costs a fork and an exec, not a bubblewrap and a Node start.
// Frames both ways on its stdin and stdout: a type byte, a 4-byte big-endian length, the payload.
//   front -> runner: 1 run {argv, env, input}, 2 stdin bytes, 3 stdin ends
//   runner -> front: 4 stdout bytes, 5 stderr bytes, 6 exit {code, signal}, 7 ready (once, when set up)
// When a command exits, every other process in the sandbox is killed before its exit is
// told, as if the sandbox had ended with it (a one-command sandbox's processes die with its
// command): nothing a command started outlives it.
// Plain JavaScript, so that it starts without a TypeScript loader.
// Usage: node session-runner.mjs [<socket dir> <port>...]
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { openPorts } from "./loopback-relay.mjs";

const [dir, ...ports] = process.argv.slice(2);

// kill(-1) reaches every process this one may signal in its pid namespace: that namespace
// must be the sandbox's, whose first process (pid 1) is bwrap's.
if (readFileSync("/proc/1/comm", "utf8").trim() !== "bwrap") {
  process.stderr.write("sandbox: the session runner runs only as a bubblewrap sandbox's first process\n");
  process.exit(125);
}
if (ports.length > 0) await openPorts(dir, ports);

function frame(type, payload) {
  const header = Buffer.alloc(5);
  header[0] = type;
  header.writeUInt32BE(payload.length, 1);
  return process.stdout.write(Buffer.concat([header, payload]));
}

// Set up (inside the fence, its ports open) before any command runs: a sandbox that ends
// before this frame ran nothing of the command it was given.
frame(7, Buffer.alloc(0));

/** Every process in the sandbox but bwrap's pid 1 and this one. */
function killOthers() {
  try {
    process.kill(-1, "SIGKILL");
  } catch {
    // ESRCH: none left.
  }
}

let child = null;

function run({ argv, env, input }) {
  const c = spawn(argv[0], argv.slice(1), { env, stdio: [input ? "pipe" : "ignore", "pipe", "pipe"] });
  child = c;
  let failed = false;
  c.stdin?.on("error", () => {});
  for (const [stream, type] of [
    [c.stdout, 4],
    [c.stderr, 5],
  ])
    stream.on("data", (b) => {
      // The front reads at its pace: a command that writes faster waits for it.
      if (!frame(type, b)) {
        stream.pause();
        process.stdout.once("drain", () => stream.resume());
      }
    });
  c.on("error", (err) => {
    failed = true;
    frame(5, Buffer.from(`sandbox: ${argv[0]}: ${err.message}\n`));
    frame(6, Buffer.from(JSON.stringify({ code: 127, signal: null })));
    child = null;
  });
  c.on("exit", killOthers);
  c.on("close", (code, signal) => {
    if (failed) return;
    child = null;
    frame(6, Buffer.from(JSON.stringify({ code, signal })));
  });
}

let pending = Buffer.alloc(0);
process.stdin.on("data", (chunk) => {
  pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
  while (pending.length >= 5) {
    const length = pending.readUInt32BE(1);
    if (pending.length < 5 + length) break;
    const type = pending[0];
    const payload = pending.subarray(5, 5 + length);
    pending = pending.subarray(5 + length);
    if (type === 1) run(JSON.parse(payload.toString()));
    else if (type === 2) child?.stdin?.write(payload);
    else if (type === 3) child?.stdin?.end();
  }
});
// The front is gone or ends the session: so does everything in it.
process.stdin.on("end", () => {
  killOthers();
  process.exit(0);
});
