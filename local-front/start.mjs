// `npm start`: builds the front (local-front/front-bundle.mjs, a second or less, and nothing
// when no source changed) and runs it. Both start with only the system's variables: esbuild
// starts a process of its own, which would inherit every variable the user exported,
// provider keys included. The front gets the whole environment on a pipe (fd 3), which
// local-front/process/launched-env.ts reads first thing. Signals go on to the child of the
// moment, and the front's exit code comes back.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { FRONT_FLAGS } from "./front-bundle.mjs";

const SYSTEM = new Set(["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM", "NODE_ENV"]);
const env = { SERVICE_ENV_FD: "3" };
for (const [name, value] of Object.entries(process.env)) if (SYSTEM.has(name) || name.startsWith("LC_")) env[name] = value;

const projectDir = join(dirname(fileURLToPath(import.meta.url)), "..");
let child = null;
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => (child ? child.kill(signal) : process.exit(128)));

const builder = spawn(process.execPath, ["local-front/front-bundle.mjs"], { cwd: projectDir, env, stdio: ["ignore", "pipe", "inherit"] });
child = builder;
let bundle = "";
builder.stdout.on("data", (d) => (bundle += d));
const built = await new Promise((resolve) => builder.on("exit", (code, signal) => resolve(code === 0 ? bundle : (process.exit(code ?? (signal ? 128 : 1)), null))));

const front = spawn(process.execPath, [...FRONT_FLAGS, built], { cwd: projectDir, env, stdio: ["inherit", "inherit", "inherit", "pipe"] });
child = front;
front.stdio[3].on("error", () => undefined);
front.stdio[3].end(JSON.stringify(process.env));
front.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
