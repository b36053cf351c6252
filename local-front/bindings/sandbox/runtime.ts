import { existsSync, realpathSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

/** `path` with every link resolved, those of its deepest existing ancestor when it does not exist (yet). */
export function realPath(path: string): string {
  const full = resolve(path);
  try {
    return realpathSync(full);
  } catch {
    const parent = dirname(full);
    return parent === full ? full : join(realPath(parent), basename(full));
  }
}

/** `dir` and each directory above it, up to `/`. */
function upwards(dir: string): string[] {
  const out = [dir];
  while (dirname(out.at(-1)!) !== out.at(-1)) out.push(dirname(out.at(-1)!));
  return out;
}

/**
 * Node's install prefix (`/usr/local` for `/usr/local/bin/node`: the binary, npm's global
 * modules, the headers), or its `bin` directory alone when the prefix would be `/`.
 */
function nodePrefix(execPath: string): string {
  const bin = dirname(execPath);
  return dirname(bin) === "/" ? bin : dirname(bin);
}

/**
 * What the front runs, which no session may change, as the front would run it later
 * outside any sandbox: the runtime's checkout (the folder of its package.json), the
 * node_modules its modules resolve from (the checkout's, or any above it, wherever a link
 * leads), and Node's install prefix. Each by its real path and, when a link leads there,
 * the path as given too, so that a `cwd` written either way is judged.
 */
export function runtimePlaces(checkout: string): string[] {
  const both = (p: string) => [resolve(p), realPath(p)];
  const code = both(checkout);
  const modules = [...new Set(code.flatMap(upwards))].map((d) => join(d, "node_modules")).filter(existsSync).flatMap(both);
  const node = both(process.execPath).map(nodePrefix).flatMap(both);
  return [...new Set([...code, ...modules, ...node])];
}
