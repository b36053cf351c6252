import { readFileSync } from "node:fs";
import { HostClients } from "./bindings/code-host/clients.js";
import { newToken } from "./bindings/http.js";
import { issuesSentence } from "../src/shared/issues.js";
import { Seed, SeedRepo, startCodeHostSimulator, type CodeHostSimulator } from "./code-host-simulator/server.js";
import { ConfigError, type FrontConfig } from "./process/config.js";

export interface CodeHost {
  clients: HostClients;
  simulator: CodeHostSimulator | null;
  /** One line for the start log. */
  describe: string;
  close(): Promise<void>;
}

/**
 * The seed the front's own code-host simulator starts from: the operator's file
 * (SERVICE_CODE_HOST_SEED), and every workspace's repository (its slug) that the file
 * does not hold, empty, so a workspace's reads answer an empty list rather than 404.
 */
function seedOf(config: FrontConfig): Seed {
  let seed: Seed = Seed.parse({});
  if (config.codeHostSimulator.seedPath) {
    const path = config.codeHostSimulator.seedPath;
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(path, "utf8"));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new ConfigError(code ? `SERVICE_CODE_HOST_SEED ${path} cannot be read (${code})` : `SERVICE_CODE_HOST_SEED ${path} is not valid JSON: ${(err as Error).message}`);
    }
    const parsed = Seed.safeParse(raw);
    if (!parsed.success) throw new ConfigError(`SERVICE_CODE_HOST_SEED ${path}: ${issuesSentence(parsed.error, "(file)")}`);
    seed = parsed.data;
  }
  for (const slug of config.codeHostSimulator.slugs) {
    const [owner, name] = slug.split("/") as [string, string];
    // A slug GitHub would not take (an owner with `_`) has no repository to stand in for.
    const repo = SeedRepo.safeParse({ owner, name });
    if (repo.success && !seed.repos.some((r) => r.owner.toLowerCase() === owner.toLowerCase() && r.name.toLowerCase() === name.toLowerCase())) seed.repos.push(repo.data);
  }
  return seed;
}

/** The code host's clients (docs/code-host.md): the accounts' tokens, or a simulator of our own with a token made for this boot. */
export async function startCodeHost(config: FrontConfig): Promise<CodeHost> {
  if (!config.codeHostSimulator.on) {
    const ids = config.codeHostAccounts.map((a) => a.id);
    return { clients: new HostClients(config.codeHostAccounts, null), simulator: null, describe: ids.length ? `codeHostAccounts=${ids.join(",")}` : "codeHost=none", close: async () => {} };
  }
  let simulator: CodeHostSimulator;
  try {
    simulator = await startCodeHostSimulator({ seed: seedOf(config) });
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`the code-host simulator could not start from its seed: ${(err as Error).message}`);
  }
  const token = newToken();
  // It writes: an acting overlap pass rehearsed on the simulator comments and labels there.
  simulator.addToken(token, { login: "agent-runtime", access: "write" });
  return {
    // While the simulator runs, every repository is read there: an acting pass must not reach a real host by way of an account.
    clients: new HostClients([], { url: simulator.url, token }),
    simulator,
    describe: `codeHostSimulator=${simulator.url}`,
    close: () => simulator.close(),
  };
}
