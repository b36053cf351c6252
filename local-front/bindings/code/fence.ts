import { constants } from "node:fs";
import { open, realpath, type FileHandle } from "node:fs/promises";
import { isAbsolute, join, relative, sep } from "node:path";
import type { Outcome } from "../../../src/api/outcome.js";
import { ok, refuse } from "../../../src/api/outcome.js";
import { CODES } from "../../../src/api/errors.js";
import { isTracked, trackedFiles } from "./git.js";

/** A registered repository: its name, the real path of its checkout, and the workspace that registered it. */
export interface RootEntry {
  name: string;
  path: string;
  workspace: string | null;
}

/** A path's place in a directory (`/`-separated, `""` for the directory itself), or null when it lies outside. */
function inside(root: string, real: string): string | null {
  const rel = relative(root, real);
  return rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel) ? null : rel.split(sep).join("/");
}

/** Whether `path` is `dir` or lies inside it. */
export function within(dir: string, path: string): boolean {
  return inside(dir, path) !== null;
}

/** A file system failure as the caller's refusal, never as the host's path in an error. */
export function fsRefusal(err: unknown, path: string): Outcome<never> {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "ENOENT" || code === "ENOTDIR") return refuse(404, `no ${path}`, CODES.codePathNotFound);
  if (code === "EACCES" || code === "EPERM") return refuse(403, `${path} cannot be read`, CODES.codePathDenied);
  if (code === "EISDIR") return refuse(400, `${path} is not a file`, CODES.codePathNotFile);
  return refuse(500, `${path} could not be read (${code ?? "unknown error"})`, CODES.codeReadFailed);
}

/**
 * Where a path inside a root really is, or the refusal: an absolute path, a `..` segment,
 * a NUL, or a link that leads out of the root (checked on the real path, so a link
 * planted anywhere on the way counts). `""` is the root itself.
 */
export async function fenced(root: RootEntry, path: string): Promise<Outcome<{ real: string; rel: string }>> {
  if (path.includes("\0") || isAbsolute(path) || path.split(/[\\/]/).includes(".."))
    return refuse(400, `path ${JSON.stringify(path)} must be relative to root ${root.name}, with no '..'`, CODES.codePathFenced);
  let real: string;
  try {
    real = await realpath(join(root.path, path));
  } catch (err) {
    return fsRefusal(err, path || ".");
  }
  const rel = inside(root.path, real);
  return rel === null ? refuse(400, `path ${path} leads out of root ${root.name}`, CODES.codePathFenced) : ok({ real, rel });
}

/**
 * A file of the root opened for reading, or the refusal. The check is made on the file as
 * opened (its descriptor's real path), so a link swapped in after the path was resolved
 * opens nothing outside the root. Only files the checkout tracks are read (in a root that
 * is no git checkout, none hidden): not `.git/`, an ignored `.env`, or what a session left.
 */
export async function openFenced(root: RootEntry, path: string): Promise<Outcome<{ handle: FileHandle; rel: string; size: number }>> {
  const f = await fenced(root, path);
  if (!f.ok) return f;
  const tracked = await isTracked(root.path, f.value.rel);
  // A directory is never a tracked file, but one that holds tracked files is there to list, not missing.
  if (tracked === false && (await trackedFiles(root.path, f.value.rel))?.length)
    return refuse(400, `${path} in root ${root.name} is a directory: list its files with GET /code/files?root=${root.name}&path=${path}`, CODES.codePathNotFile);
  if (tracked === false || (tracked === null && f.value.rel.split("/").some((s) => s.startsWith("."))))
    return refuse(404, `${path} is not a file the checkout of root ${root.name} tracks`, CODES.codePathNotFound);
  let handle: FileHandle;
  try {
    // Non-blocking: a FIFO planted in the checkout opens at once (and is refused as no file) rather than hanging the read.
    handle = await open(f.value.real, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    return fsRefusal(err, path);
  }
  try {
    const opened = await realpath(`/proc/self/fd/${handle.fd}`);
    if (inside(root.path, opened) !== f.value.rel) {
      await handle.close();
      return refuse(400, `path ${path} leads out of root ${root.name}`, CODES.codePathFenced);
    }
    const s = await handle.stat();
    if (!s.isFile()) {
      await handle.close();
      return refuse(400, `${path} in root ${root.name} is not a file`, CODES.codePathNotFile);
    }
    return ok({ handle, rel: f.value.rel, size: s.size });
  } catch (err) {
    await handle.close();
    return fsRefusal(err, path);
  }
}

/** At most `max` bytes of an open file, read through its descriptor (a file that grew meanwhile is not read past it). */
export async function readUpTo(handle: FileHandle, max: number): Promise<Buffer> {
  const buf = Buffer.alloc(max);
  let n = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buf, n, max - n, n);
    if (bytesRead === 0 || (n += bytesRead) === max) return buf.subarray(0, n);
  }
}
