/**
 * What the front keeps of its environment once its configuration is read. Every process
 * it starts inherits `process.env` (Miniflare gives workerd the whole of it, and so does
 * esbuild's service), and none of them needs a provider key or any other credential a
 * user exported before `npm start`: those were read into the configuration already.
 */
const KEPT = new Set(["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM", "NODE_ENV", "MINIFLARE_WORKERD_PATH"]);

/** The runtime's own settings stay (SERVICE_LOG is read as lines are logged), but not those that may carry a credential. */
const SECRET_SETTINGS = new Set(["SERVICE_PROXY_URL"]);

function kept(name: string): boolean {
  if (KEPT.has(name) || name.startsWith("LC_")) return true;
  return name.startsWith("SERVICE_") && !SECRET_SETTINGS.has(name);
}

/** Drops every other variable from `env` (the front's `process.env`), in place. */
export function scrubEnvironment(env: NodeJS.ProcessEnv): void {
  for (const name of Object.keys(env)) if (!kept(name)) delete env[name];
}
