import { createHash } from "node:crypto";
import { createReadStream, createWriteStream, existsSync, lstatSync, openSync, readSync, closeSync, readdirSync, statSync } from "node:fs";
import { chmod } from "node:fs/promises";
import { isAbsolute, relative } from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";

/** What `npm run backup` writes as `manifest.json`; a backup without one is incomplete. */
export const FORMAT = "agent-runtime-backup/1";

export interface Entry {
  /** Relative to the backup directory, `/`-separated: `data/...` or `engine/...`. */
  path: string;
  /** `store`: a SQLite database copied with the online backup API; `blob`: a blob store body. */
  kind: "dir" | "store" | "blob" | "file" | "symlink";
  /** Permission bits of the original, octal (`"0600"`); restore puts them back. */
  mode: string;
  bytes?: number;
  sha256?: string;
  /** A symlink's target. */
  target?: string;
}

export interface Manifest {
  format: typeof FORMAT;
  startedAt: string;
  finishedAt: string;
  /** The build (commit) of the checkout that took the backup. */
  build: string;
  source: { dataDir: string; engineStateDir: string };
  /** False when the engine state directory did not exist: nothing under `engine/`. */
  engineState: boolean;
  scratch: boolean;
  files: Entry[];
}

/** A refusal: the command exits 2 with this one line and changes nothing. */
export class Refusal extends Error {}

/** Directory entries sorted, or [] when the directory is gone. */
export function list(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
}

export function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Absent, or a directory with nothing in it but the names `ignore` lists. */
export function emptyOrAbsent(path: string, ignore: string[] = []): boolean {
  if (!existsSync(path)) return true;
  return isDir(path) && list(path).every((name) => ignore.includes(name));
}

/** `inner` is `outer` or lies inside it. */
export function within(inner: string, outer: string): boolean {
  const rel = relative(outer, inner);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

const SQLITE_HEADER = Buffer.from("SQLite format 3\0");

/** A SQLite database: by its name (`.sqlite`, `.sqlite3`, `.db`) or its header. */
export function isStore(path: string): boolean {
  if (/\.(sqlite3?|db)$/.test(path)) return true;
  const head = Buffer.alloc(SQLITE_HEADER.length);
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return false;
  }
  try {
    return readSync(fd, head, 0, head.length, 0) === head.length && head.equals(SQLITE_HEADER);
  } finally {
    closeSync(fd);
  }
}

/** A store's companion (`-wal`, `-shm`, `-journal`): the store's own copy already holds what matters. */
export function companionOf(name: string): string | null {
  const m = /^(.*)-(wal|shm|journal)$/.exec(name);
  return m ? m[1]! : null;
}

export function modeOf(path: string): number {
  return lstatSync(path).mode & 0o7777;
}

/** Copies `src` to `dst` with `mode`, hashing what it copies. */
export async function copyHashed(src: string, dst: string, mode: number): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash("sha256");
  let bytes = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  await pipeline(createReadStream(src), tap, createWriteStream(dst, { mode: 0o600 }));
  await chmod(dst, mode);
  return { bytes, sha256: hash.digest("hex") };
}

export async function hashFile(path: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash("sha256");
  let bytes = 0;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { bytes, sha256: hash.digest("hex") };
}

export function octal(mode: number): string {
  return mode.toString(8).padStart(4, "0");
}
