import { existsSync, mkdirSync, readFileSync, renameSync, symlinkSync } from "node:fs";
import { chmod } from "node:fs/promises";
import { dirname, join } from "node:path";
import { DataDirBusy, DataLock, frontHolding } from "../process/data-lock.js";
import { copyHashed, emptyOrAbsent, FORMAT, hashFile, isDir, Refusal, type Entry, type Manifest } from "./files.js";

export interface RestoreOptions {
  backupDir: string;
  dataDir: string;
  engineStateDir: string;
  /** Move a non-empty engine state directory aside instead of refusing. */
  force: boolean;
  log: (line: string) => void;
}

export function readManifest(backupDir: string): Manifest {
  if (!isDir(backupDir)) throw new Refusal(`backup directory ${backupDir} does not exist`);
  const path = join(backupDir, "manifest.json");
  if (!existsSync(path)) throw new Refusal(`${backupDir} holds no manifest.json: not a backup, or one that did not finish`);
  const manifest = JSON.parse(readFileSync(path, "utf8")) as Manifest;
  if (manifest.format !== FORMAT) throw new Refusal(`${path} is format ${JSON.stringify(manifest.format)}, not ${FORMAT}`);
  for (const f of manifest.files)
    if (!/^(data|engine)(\/|$)/.test(f.path) || f.path.split("/").includes("..")) throw new Refusal(`${path} names ${JSON.stringify(f.path)}, outside data/ and engine/`);
  return manifest;
}

/** Every copied file is there, whole: nothing is written unless the backup checks out. */
async function verify(backupDir: string, files: Entry[]): Promise<void> {
  for (const f of files) {
    if (f.sha256 === undefined) continue;
    const path = join(backupDir, f.path);
    if (!existsSync(path)) throw new Refusal(`the backup is damaged: ${f.path} is missing`);
    const got = await hashFile(path);
    if (got.sha256 !== f.sha256 || got.bytes !== f.bytes) throw new Refusal(`the backup is damaged: ${f.path} does not match its manifest sha256`);
  }
}

export async function restore(o: RestoreOptions): Promise<{ manifest: Manifest; movedAside: string | null }> {
  const manifest = readManifest(o.backupDir);
  const holder = frontHolding(o.dataDir);
  if (holder) throw new Refusal(`data directory ${o.dataDir} is in use by a running front (pid ${holder}); stop it first`);
  if (!emptyOrAbsent(o.dataDir, ["front.pid"])) throw new Refusal(`data directory ${o.dataDir} is not empty; restore needs an empty or absent one`);
  let movedAside: string | null = null;
  if (manifest.engineState && !emptyOrAbsent(o.engineStateDir)) {
    movedAside = `${o.engineStateDir}.before-restore-${new Date().toISOString().replace(/[:.]/g, "-")}`;
    if (!o.force) throw new Refusal(`engine state directory ${o.engineStateDir} is not empty; --force moves it aside (to ${o.engineStateDir}.before-restore-<time>)`);
  }
  await verify(o.backupDir, manifest.files);

  mkdirSync(o.dataDir, { recursive: true, mode: 0o700 });
  // Held while restoring: a front started meanwhile refuses this data directory.
  const lock = new DataLock(o.dataDir);
  try {
    await lock.acquire();
  } catch (err) {
    if (err instanceof DataDirBusy) throw new Refusal(`data directory ${o.dataDir}: ${err.message}`);
    throw err;
  }
  try {
    if (movedAside) renameSync(o.engineStateDir, movedAside);
    const target = (path: string) => {
      const [root, ...rest] = path.split("/");
      return join(root === "data" ? o.dataDir : o.engineStateDir, ...rest);
    };
    for (const f of manifest.files) {
      const dst = target(f.path);
      if (f.kind === "dir") mkdirSync(dst, { recursive: true, mode: 0o700 });
      else {
        mkdirSync(dirname(dst), { recursive: true, mode: 0o700 });
        if (f.kind === "symlink") symlinkSync(f.target!, dst);
        else await copyHashed(join(o.backupDir, f.path), dst, parseInt(f.mode, 8));
      }
    }
    // Directory modes last, deepest first, so a read-only directory does not stop the copy.
    for (const f of manifest.files.filter((e) => e.kind === "dir").reverse()) await chmod(target(f.path), parseInt(f.mode, 8));
  } finally {
    lock.release();
  }
  const count = (kind: Entry["kind"]) => manifest.files.filter((f) => f.kind === kind).length;
  o.log(
    `restore: ${o.backupDir} (taken ${manifest.startedAt}, build ${manifest.build}) into ${o.dataDir}: ${count("store")} stores, ${count("blob")} blobs, ${count("file")} other files` +
      (manifest.engineState ? `; engine state into ${o.engineStateDir}` : "; the backup holds no engine state") +
      (movedAside ? `; the previous engine state is in ${movedAside}` : ""),
  );
  return { manifest, movedAside };
}
