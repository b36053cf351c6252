import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import type { BuildOptions } from "esbuild";

const OPTIONS = {
  bundle: true,
  write: false,
  format: "esm",
  platform: "neutral",
  target: "es2022",
  conditions: ["workerd", "worker", "browser"],
  mainFields: ["module", "main"],
  external: ["cloudflare:*"],
  logLevel: "silent",
  metafile: true,
} satisfies BuildOptions;

/** Files esbuild reads beside the sources to resolve and transform them: a change to one can change the bundle with no source changed. */
const RESOLUTION_FILES = ["package.json", "tsconfig.json", "jsconfig.json"];

/**
 * Bundles the router worker and its objects, as wrangler would for deploy, or reads the
 * bundle the last start made when every file it was made from is byte for byte the same.
 * esbuild's build was on the start's critical path (0.4 s on an idle machine, over 1 s on
 * a loaded one, docs/performance.md "Issue 32: the front's start, again"), and the suite
 * starts about 130 fronts from the same sources.
 *
 * The bundle is kept in `.front/worker.js` with its key on its first line, in one file so
 * that a front never reads one build's key with another's code (each write is a rename).
 * The key hashes esbuild's version, the options, the entry, every input esbuild read
 * (its metafile) and the package.json/tsconfig.json/jsconfig.json files of their folders
 * and the folders above them, present or not: a changed, added (its importer changed) or
 * removed source, an upgraded package, or a changed resolution is not served an old bundle.
 * What the key cannot see is in docs/decisions.md ("The worker's bundle, kept"). The key is
 * read from disk after the build, so a bundle is kept only when no file it names was written
 * since the build began: a file saved while esbuild ran, or another front's build from older
 * sources finishing last, would otherwise put old code under the new files' key.
 * On a miss esbuild runs in its own process, stopped after the build (about 70 MB kept for
 * nothing otherwise).
 */
export async function bundleWorker(projectDir: string, main: string): Promise<string> {
  const out = join(projectDir, ".front", "worker.js");
  const cached = readFresh(projectDir, main, out);
  if (cached !== null) return cached;
  // Loaded for a build only: a start whose bundle is fresh does without it.
  const { build, stop } = await import("esbuild");
  const began = Date.now();
  const result = await build({ ...OPTIONS, absWorkingDir: projectDir, entryPoints: [resolve(projectDir, main)] }).finally(() => stop());
  const script = result.outputFiles![0]!.text;
  const inputs = Object.keys(result.metafile!.inputs).sort();
  const files = filesOfKey(projectDir, inputs);
  const key = keyOf(projectDir, main, files);
  if (writtenSince(files, began)) return script;
  const header = JSON.stringify({ key, inputs });
  mkdirSync(dirname(out), { recursive: true });
  const tmp = `${out}.${process.pid}-${Date.now()}`;
  writeFileSync(tmp, `${header}\n${script}`);
  renameSync(tmp, out);
  return script;
}

/** The kept bundle if it was built from the files on disk now, else null. */
function readFresh(projectDir: string, main: string, out: string): string | null {
  let text: string;
  try {
    text = readFileSync(out, "utf8");
  } catch {
    return null;
  }
  const newline = text.indexOf("\n");
  try {
    const { key, inputs } = JSON.parse(text.slice(0, newline)) as { key: string; inputs: string[] };
    return key === keyOf(projectDir, main, filesOfKey(projectDir, inputs)) ? text.slice(newline + 1) : null;
  } catch {
    // An input gone, or a file not of this format: build again.
    return null;
  }
}

/** Some 2 s of slack for file systems whose times are coarse: a file written then is one more rebuild, never an old bundle kept. */
const MTIME_SLACK_MS = 2000;

/** Whether an input, or a resolution file beside one, was written after `since` (less the slack). */
function writtenSince(files: KeyFile[], since: number): boolean {
  for (const { path } of files) {
    try {
      if (statSync(path).mtimeMs >= since - MTIME_SLACK_MS) return true;
    } catch {
      // Absent: the key hashed its absence, and a file removed since leaves no stale code.
    }
  }
  return false;
}

type KeyFile = { path: string; optional: boolean };

/** The inputs, then the resolution files of their folders and every folder above, sorted; a resolution file may be absent, an input may not. */
function filesOfKey(projectDir: string, inputs: string[]): KeyFile[] {
  const folders = new Set<string>();
  for (const input of inputs)
    for (let dir = dirname(resolve(projectDir, input)); !folders.has(dir); dir = dirname(dir)) {
      folders.add(dir);
      if (dirname(dir) === dir) break;
    }
  return [
    ...inputs.map((i) => ({ path: resolve(projectDir, i), optional: false })),
    ...[...folders].sort().flatMap((dir) => RESOLUTION_FILES.map((name) => ({ path: join(dir, name), optional: true }))),
  ];
}

function keyOf(projectDir: string, main: string, files: KeyFile[]): string {
  const { version } = createRequire(import.meta.url)("esbuild/package.json") as { version: string };
  const h = createHash("sha256").update(JSON.stringify({ version, OPTIONS, projectDir, main: resolve(projectDir, main) }));
  for (const { path, optional } of files) {
    let bytes: Buffer | null = null;
    try {
      bytes = readFileSync(path);
    } catch (err) {
      // An input gone throws (no key for what cannot be built); a resolution file's absence is part of the key.
      if (!optional) throw err;
    }
    h.update(`\0${relative(projectDir, path)}\0${bytes === null ? "-" : `${bytes.length}\0`}`);
    if (bytes) h.update(bytes);
  }
  return h.digest("hex");
}
