import { realpath, stat } from "node:fs/promises";
import { isAbsolute, join, relative, sep } from "node:path";
import type { Outcome } from "../../../src/api/outcome.js";
import { ok, refuse } from "../../../src/api/outcome.js";
import { CODES } from "../../../src/api/errors.js";

/** A registered repository: its name, the real path of its checkout, and the workspace that registered it. */
export interface RootEntry {
  name: string;
  path: string;
  workspace: string | null;
}

/**
 * Where a path inside a root really is, or the refusal: an absolute path, a `..` segment,
 * a NUL, or a link that leads out of the root (checked on the real path, so a link
 * planted anywhere on the way counts). `""` is the root itself. A path that does not
 * exist is `404 code-path-not-found`.
 */
export async function fenced(root: RootEntry, path: string): Promise<Outcome<{ real: string; rel: string }>> {
  if (path.includes("\0") || isAbsolute(path) || path.split(/[\\/]/).includes(".."))
    return refuse(400, `path ${JSON.stringify(path)} must be relative to root ${root.name}, with no '..'`, CODES.codePathFenced);
  let real: string;
  try {
    real = await realpath(join(root.path, path));
  } catch {
    return refuse(404, `root ${root.name} has no ${path || "."}`, CODES.codePathNotFound);
  }
  const rel = relative(root.path, real);
  if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return refuse(400, `path ${path} leads out of root ${root.name}`, CODES.codePathFenced);
  return ok({ real, rel: rel.split(sep).join("/") });
}

/** A regular file's real path inside the root, or the refusal. */
export async function fencedFile(root: RootEntry, path: string): Promise<Outcome<{ real: string; rel: string; size: number }>> {
  const f = await fenced(root, path);
  if (!f.ok) return f;
  const s = await stat(f.value.real);
  if (!s.isFile()) return refuse(400, `${path} in root ${root.name} is not a file`, CODES.codePathNotFile);
  return ok({ ...f.value, size: s.size });
}
