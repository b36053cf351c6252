/** The only variables of the front's environment an engine's process gets. */
const PASSED_ENV = ["PATH", "LANG", "LC_ALL", "TZ"];

/**
 * An engine process's base environment: enough to run, none of the front's secrets, and
 * the session's network variables (`session`: proxy and CA trust, see access.ts).
 */
export function childEnv(session: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of PASSED_ENV) if (process.env[name]) env[name] = process.env[name]!;
  return { ...env, ...session };
}
