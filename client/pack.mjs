// `node /path/to/agent-runtime/client/pack.mjs`: writes the client library's tarball into the
// current folder, for `npm install ./<tarball>`. Node cannot load the TypeScript sources, and
// the client imports the contract from src/api/, outside client/, so the package is built
// first; that happens in a temporary copy of the files it needs, with typescript and zod
// installed there alone, so the checkout is only read and the root's install is not needed.
// Plain JavaScript: it runs where nothing is installed yet.
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const manifest = (path) => JSON.parse(readFileSync(join(root, path), "utf8"));
const client = manifest("client/package.json");
const typescript = manifest("package.json").devDependencies.typescript;

// The checkout's layout again, so client/tsconfig.json and the client's imports of src/api/ hold unchanged.
const SOURCES = [
  "tsconfig.base.json",
  "client/tsconfig.json",
  "client/README.md",
  "src/api",
  ...readdirSync(join(root, "client"))
    .filter((name) => name.endsWith(".ts"))
    .map((name) => `client/${name}`),
];

const build = mkdtempSync(join(tmpdir(), "agent-runtime-client-"));
try {
  for (const path of SOURCES) cpSync(join(root, path), join(build, path), { recursive: true });
  writeFileSync(join(build, "package.json"), JSON.stringify({ private: true, devDependencies: { typescript, zod: client.dependencies.zod } }));
  // The checkout's scripts refuse an install or a pack of the unbuilt sources; the built package needs none.
  writeFileSync(join(build, "client/package.json"), JSON.stringify({ ...client, scripts: undefined }, null, 2));
  // Progress goes to stderr; stdout is the tarball's name alone, as `npm pack` prints it.
  execFileSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: build, stdio: ["ignore", 2, 2] });
  execFileSync(process.execPath, [join(build, "node_modules/typescript/bin/tsc"), "-p", join(build, "client/tsconfig.json")], { cwd: build, stdio: ["ignore", 2, 2] });
  execFileSync("npm", ["pack", "--pack-destination", process.cwd()], { cwd: join(build, "client"), stdio: ["ignore", "inherit", "inherit"] });
} finally {
  rmSync(build, { recursive: true, force: true });
}
