// What loopback-forwarder.mjs and session-runner.mjs share: inside a sandbox's network of
// its own, each loopback port the session may reach (the credential proxy, the simulator)
// listens and relays every connection to the front over the Unix socket `<dir>/<port>.sock`.
import { connect, createServer } from "node:net";

function relay(dir, port) {
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

/** Opens every port, or exits 125 saying why: nothing of the session runs without its network. */
export async function openPorts(dir, ports) {
  try {
    await Promise.all(ports.map((port) => relay(dir, port)));
  } catch (err) {
    process.stderr.write(`sandbox: could not open the session's loopback ports: ${err.message}\n`);
    process.exit(125);
  }
}
