// Runs first inside a sandbox that has a network of its own and runs one program (an
// engine's CLI, a merge's git): it opens the session's loopback ports (loopback-relay.mjs),
// then runs the program and ends with it. Plain JavaScript, so that it starts without a
// TypeScript loader.
// Usage: node loopback-forwarder.mjs <socket dir> <port>... -- <command> [args...]
import { spawn } from "node:child_process";
import { constants } from "node:os";
import { openPorts } from "./loopback-relay.mjs";

const split = process.argv.indexOf("--");
const [dir, ...ports] = process.argv.slice(2, split);
const argv = process.argv.slice(split + 1);

await openPorts(dir, ports);
const child = spawn(argv[0], argv.slice(1), { stdio: "inherit" });
child.on("error", (err) => {
  process.stderr.write(`sandbox: ${argv[0]}: ${err.message}\n`);
  process.exit(127);
});
child.on("exit", (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)));
