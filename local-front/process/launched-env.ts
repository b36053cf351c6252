import { readFileSync } from "node:fs";

/**
 * The environment the user started the front with. Under `npm start` (local-front/start.mjs)
 * the process itself was given only the system's variables, so that no process it starts
 * before the front scrubs its environment (esbuild's, which bundles the worker) inherits a
 * secret, and the whole environment arrives on the descriptor SERVICE_ENV_FD names; it is
 * read here, before any other module of the front reads `process.env`. Started directly
 * (`node .front/main.mjs`, as the tests start it), this is `process.env` as it is.
 */
function launched(): void {
  const fd = process.env.SERVICE_ENV_FD;
  if (fd === undefined) return;
  delete process.env.SERVICE_ENV_FD;
  const given = JSON.parse(readFileSync(Number(fd), "utf8")) as Record<string, string>;
  for (const [name, value] of Object.entries(given)) if (process.env[name] === undefined) process.env[name] = value;
}

launched();
