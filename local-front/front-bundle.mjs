// The front, bundled into one ES module that Node runs without a loader. Run under tsx,
// every module the front loads, its packages' included, went through tsx's loader thread:
// about 2 s of CPU and 110 MB of the front's memory at every start (docs/performance.md,
// "Issue 32: the front bundled"). Only the project's own files are bundled; packages stay
// imports that Node resolves from the checkout's node_modules, so what loads on first use
// still does.
//
// The bundle is rebuilt unless the files it was built from are byte for byte the ones on
// disk now: the key is a hash of each file's contents as the build read them, so a changed,
// added (its importer changed) or removed file is never served from an old bundle.
//
// Plain JavaScript: `npm start`'s launcher runs it as a script, in a process of its own
// with only the system's variables, since esbuild starts a process that inherits them.
import { createHash } from "node:crypto";
import { mkdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, extname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ENTRY = "local-front/main.ts";
const OPTIONS = { bundle: true, platform: "node", format: "esm", target: "node20", packages: "external", sourcemap: "linked", logLevel: "silent" };
// esbuild itself loads only for a build: a start whose bundle is fresh does without it.
const { version } = createRequire(import.meta.url)("esbuild/package.json");
const LOADERS = { ".ts": "ts", ".mts": "ts", ".js": "js", ".mjs": "js", ".json": "json" };

/**
 * Node's flags for the bundle, `npm start`'s and the tests' alike: stacks that name the
 * TypeScript, and `gc` for a collection when the front goes quiet after work
 * (local-front/process/idle-collect.ts).
 */
export const FRONT_FLAGS = ["--enable-source-maps", "--expose-gc"];

/** What a file's `import.meta` says, written into the bundle: a module finds its neighbours (a forwarder, a grammar) from where it lies in the checkout. */
function pinMeta(text, path) {
  if (!text.includes("import.meta")) return text;
  return text
    .replaceAll("import.meta.dirname", JSON.stringify(dirname(path)))
    .replaceAll("import.meta.filename", JSON.stringify(path))
    .replaceAll("import.meta.url", JSON.stringify(pathToFileURL(path).href));
}

function keyOf(projectDir, files) {
  const h = createHash("sha256").update(JSON.stringify({ version, OPTIONS, projectDir }));
  for (const [path, bytes] of files) h.update(`\0${path}\0${bytes.length}\0`).update(bytes);
  return h.digest("hex");
}

async function stillFresh(projectDir, out, manifest) {
  try {
    const { key, inputs } = JSON.parse(await readFile(manifest, "utf8"));
    const files = [];
    for (const path of inputs) files.push([path, await readFile(join(projectDir, path))]);
    await stat(`${out}.map`);
    await stat(out);
    return key === keyOf(projectDir, files);
  } catch {
    return false;
  }
}

/** The bundle of `projectDir`'s front, built if its sources changed; its path. */
export async function frontBundle(projectDir) {
  const dir = join(projectDir, ".front");
  const out = join(dir, "main.mjs");
  const manifest = join(dir, "main.inputs.json");
  if (await stillFresh(projectDir, out, manifest)) return out;
  const read = new Map();
  const { build } = await import("esbuild");
  const result = await build({
    ...OPTIONS,
    absWorkingDir: projectDir,
    entryPoints: [ENTRY],
    outfile: out,
    write: false,
    plugins: [
      {
        name: "sources",
        setup(b) {
          b.onLoad({ filter: /\.(m?ts|m?js|json)$/ }, async ({ path }) => {
            const bytes = await readFile(path);
            read.set(relative(projectDir, path), bytes);
            return { contents: pinMeta(bytes.toString("utf8"), path), loader: LOADERS[extname(path)] };
          });
        },
      },
    ],
  });
  await mkdir(dir, { recursive: true });
  const files = [...read].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  // Each file whole or not at all: fronts starting meanwhile read the old bundle or the new.
  const tag = `${process.pid}-${Date.now()}`;
  const writes = [...result.outputFiles.map((f) => [f.path, f.contents]), [manifest, JSON.stringify({ key: keyOf(projectDir, files), inputs: files.map(([p]) => p) })]];
  for (const [path, contents] of writes) await writeFile(`${path}.${tag}`, contents);
  // The map before the code, the manifest last: a manifest names a bundle that is all there.
  for (const [path] of writes.sort(([a], [b]) => rank(a) - rank(b))) await rename(`${path}.${tag}`, path);
  return out;
}

function rank(path) {
  return path.endsWith(".map") ? 0 : path.endsWith(".mjs") ? 1 : 2;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const projectDir = join(dirname(fileURLToPath(import.meta.url)), "..");
  try {
    process.stdout.write(await frontBundle(projectDir));
  } catch (err) {
    const errors = err?.errors?.map((e) => `${e.location ? `${e.location.file}:${e.location.line}: ` : ""}${e.text}`).join("\n");
    process.stderr.write(`agent-runtime: the front could not be built:\n${errors || err?.message || err}\n`);
    process.exit(1);
  }
}
