import { createServer } from "node:net";

export class PortUnavailable extends Error {}

/** The sentence a user reads when the front cannot have its port; null for any other error (another listener's included). */
export function portRefusal(host: string, port: number, err: NodeJS.ErrnoException & { port?: number }): PortUnavailable | null {
  if (err.syscall !== "listen" || err.port !== port) return null;
  const code = err.code;
  if (code === "EADDRINUSE") return new PortUnavailable(`port ${port} on ${host} is in use by another program; stop it or set SERVICE_AGENTS_PORT`);
  if (code === "EACCES") return new PortUnavailable(`port ${port} on ${host} needs privileges this user does not have; set SERVICE_AGENTS_PORT to 1024 or above`);
  if (code === "EADDRNOTAVAIL") return new PortUnavailable(`${host} is not an address of this machine; set SERVICE_AGENTS_HOST`);
  return null;
}

/**
 * Binds the front's port for a moment before anything else starts: found only when the
 * front listens, a busy port would come after workerd, the engines and the lock file,
 * all started for nothing. Port 0 always succeeds.
 */
export async function checkPort(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) => reject(portRefusal(host, port, err) ?? err));
    server.listen({ host, port, exclusive: true }, resolve);
  });
  await new Promise((resolve) => server.close(resolve));
}
