// `npm start`: the front runs TypeScript through tsx, whose loader starts an esbuild
// process before a line of the front has run; that process (and any the loader starts
// later) would inherit every variable the user exported, provider keys included. So this
// launcher, plain JavaScript, starts the front with only the system's variables and hands
// it the whole environment on a pipe (fd 3), which local-front/process/launched-env.ts reads
// first thing. Signals go on to the front, and its exit code comes back.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const SYSTEM = new Set(["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM", "NODE_ENV"]);
const env = { SERVICE_ENV_FD: "3" };
for (const [name, value] of Object.entries(process.env)) if (SYSTEM.has(name) || name.startsWith("LC_")) env[name] = value;

const projectDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const front = spawn(process.execPath, ["--import", "tsx", "local-front/main.ts"], { cwd: projectDir, env, stdio: ["inherit", "inherit", "inherit", "pipe"] });
front.stdio[3].on("error", () => undefined);
front.stdio[3].end(JSON.stringify(process.env));
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => front.kill(signal));
front.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
