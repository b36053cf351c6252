/**
 * `npm run backup -- <dir> [--data-dir <dir>] [--engine-state <dir>] [--scratch]`
 * `npm run restore -- <backup dir> [<data dir>] [--engine-state <dir>] [--force]`
 * The data and engine state directories default as the front's do (SERVICE_AGENTS_DATA_DIR,
 * SERVICE_ENGINE_STATE_DIR, else the engine state of the data directory given). docs/backup.md has the details.
 */
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { buildOf, dataDirOf, engineStateDirOf } from "../process/config.js";
import { installMissing } from "../process/debian-packages.js";
import { backup } from "./backup.js";
import { Refusal } from "./files.js";
import { restore } from "./restore.js";
import { SQLITE_PACKAGE } from "./sqlite.js";

const projectDir = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const log = (line: string) => console.log(line);

const USAGE = {
  backup: "usage: npm run backup -- <empty or new dir> [--data-dir <dir>] [--engine-state <dir>] [--scratch]",
  restore: "usage: npm run restore -- <backup dir> [<data dir>] [--engine-state <dir>] [--force]",
};

function args(argv: string[], flags: Record<string, "string" | "boolean">, positionals: [number, number], usage: string) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: Object.fromEntries(Object.entries(flags).map(([k, type]) => [k, { type }])) });
  } catch (err) {
    throw new Refusal(`${(err as Error).message}; ${usage}`);
  }
  if (parsed.positionals.length < positionals[0] || parsed.positionals.length > positionals[1]) throw new Refusal(usage);
  return { values: parsed.values as Record<string, string | boolean | undefined>, positionals: parsed.positionals.map((p) => resolve(p)) };
}

async function main(command: string | undefined, argv: string[]): Promise<void> {
  const env = process.env;
  const dir = (flag: string | boolean | undefined, fallback: string) => (typeof flag === "string" ? resolve(flag) : fallback);
  if (command === "backup") {
    const { values, positionals } = args(argv, { "data-dir": "string", "engine-state": "string", scratch: "boolean" }, [1, 1], USAGE.backup);
    const dataDir = dir(values["data-dir"], dataDirOf(env));
    // As `npm start` installs bubblewrap, and under the same setting.
    const missing = installMissing([SQLITE_PACKAGE], env.SERVICE_SANDBOX_INSTALL !== "off", log);
    if (missing) throw new Refusal(`${missing.reason}; ${missing.remedy}`);
    await backup({
      target: positionals[0]!,
      dataDir,
      engineStateDir: dir(values["engine-state"], engineStateDirOf(env, dataDir)),
      scratch: values.scratch === true,
      build: buildOf(env, projectDir),
      log,
    });
    // Files the front reads from outside the data directory are the operator's to keep.
    for (const name of ["SERVICE_WORKSPACES_FILE", "SERVICE_ACCOUNTS_FILE", "SERVICE_PROXY_CA"])
      if (env[name]) log(`backup: note: ${name}=${env[name]} is not copied unless it lies in the data directory`);
  } else if (command === "restore") {
    const { values, positionals } = args(argv, { "engine-state": "string", force: "boolean" }, [1, 2], USAGE.restore);
    const dataDir = positionals[1] ?? dataDirOf(env);
    try {
      // The engine state goes where a front on that data directory will look for it.
      await restore({ backupDir: positionals[0]!, dataDir, engineStateDir: dir(values["engine-state"], engineStateDirOf(env, dataDir)), force: values.force === true, log });
    } catch (err) {
      if (err instanceof Refusal) throw err;
      throw new Error(`${(err as Error).message} (${dataDir} may hold a partial restore: empty it before trying again)`);
    }
  } else throw new Refusal(`${USAGE.backup}\n${USAGE.restore}`);
}

const command = process.argv[2];
main(command, process.argv.slice(3)).catch((err: unknown) => {
  const name = command === "restore" ? "restore" : "backup";
  if (err instanceof Refusal) {
    console.error(`${name}: ${err.message}`);
    process.exit(2);
  }
  console.error(`${name} failed: ${(err as Error).message}`);
  process.exit(1);
});
