// Runs first inside a sandbox that has a network namespace of its own: it listens on the
// loopback ports the session may reach (the credential proxy, the simulator), relays each
// connection to the front over the Unix socket `<dir>/<port>.sock`, then runs the session's
// command and ends with it. Plain JavaScript, so that it starts without a TypeScript loader.
// Usage: node loopback-forwarder.mjs <socket dir> <port>... -- <command> [args...]
import { spawn } from "node:child_process";
import { connect, createServer } from "node:net";
import { constants } from "node:os";

const split = process.argv.indexOf("--");
const [dir, ...ports] = process.argv.slice(2, split);
const argv = process.argv.slice(split + 1);

function relay(port) {
  return new Promise((listening, failed) => {
    const server = createServer((inside) => {
      const front = connect(`${dir}/${port}.sock`);
      inside.pipe(front).pipe(inside);
      inside.on("error", () => front.destroy());
      front.on("error", () => inside.destroy());
    });
    server.once("error", failed);
    server.listen(Number(port), "127.0.0.1", listening);
  });
}

try {
  await Promise.all(ports.map(relay));
} catch (err) {
  process.stderr.write(`sandbox: could not open the session's loopback ports: ${err.message}\n`);
  process.exit(125);
}
const child = spawn(argv[0], argv.slice(1), { stdio: "inherit" });
child.on("error", (err) => {
  process.stderr.write(`sandbox: ${argv[0]}: ${err.message}\n`);
  process.exit(127);
});
child.on("exit", (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)));
