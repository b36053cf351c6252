import { startSimulator } from "./server.js";

// Standalone: `node --import tsx local-front/simulator/main.ts [port]`, for pointing an agent or curl at it by hand.
const port = Number(process.argv[2] ?? process.env.SIM_PORT ?? 0);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`simulator: invalid port ${process.argv[2] ?? process.env.SIM_PORT}`);
  process.exit(2);
}
const sim = await startSimulator({ host: process.env.SIM_HOST, port });
console.log(`provider simulator listening on ${sim.url}`);
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void sim.close().then(() => process.exit(0)));
