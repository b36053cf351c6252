import type { ChildProcess } from "node:child_process";
import type { SearchAnswer, SearchBody, SearchMatch } from "../../../src/api/code.js";
import { CODES } from "../../../src/api/errors.js";
import { ok, refuse, type Outcome } from "../../../src/api/outcome.js";
import { headOf, trackedOf } from "./git.js";
import { globMatcher } from "./glob.js";
import type { RootEntry } from "./fence.js";

const DEFAULT_LIMIT = 200;
const LINE_CHARS = 500;
const SEARCH_MS = 60_000;

/** Starts ripgrep in a root: inside the session sandbox where there is one, so a link swapped in mid-walk leads nowhere the sandbox hides. */
export type RgSpawner = (argv: string[], cwd: string) => ChildProcess;

interface RgMatch {
  type: "match";
  data: { path: { text?: string }; lines: { text?: string }; line_number: number; absolute_offset: number; submatches: { start: number }[] };
}

/** ripgrep's path, found when a search needs it: a host whose platform package did not install still starts. */
async function ripgrep(): Promise<string | null> {
  try {
    return (await import("@vscode/ripgrep")).rgPath;
  } catch {
    return null;
  }
}

/** ripgrep's JSON lines longer than this (one huge minified line) are skipped, not parsed. */
const LINE_JSON_MAX = 1024 * 1024;
/** Paths given to one ripgrep, at most, in bytes of arguments and in number (bubblewrap takes 9,000 arguments in all). */
const ARG_BYTES = 1024 * 1024;
const ARG_PATHS = 7500;

/** The tracked files, glob-filtered, in runs whose arguments stay under the limit. */
function chunks(files: string[]): string[][] {
  const out: string[][] = [];
  let run: string[] = [];
  let size = 0;
  for (const f of files) {
    if ((size + f.length + 1 > ARG_BYTES || run.length === ARG_PATHS) && run.length) (out.push(run), (run = []), (size = 0));
    run.push(f);
    size += f.length + 1;
  }
  if (run.length) out.push(run);
  return out;
}

type Found = Outcome<{ matches: SearchMatch[]; hit: boolean }>;

/**
 * One ripgrep over the paths given (the tracked files, or `.` in a root that is no git
 * checkout), links not followed, kept matches at most `limit`: it stops there.
 */
function runRg(rg: string, spawn: RgSpawner, root: RootEntry, q: SearchBody, paths: string[], keep: (path: string) => boolean, limit: number, deadline: number): Promise<Found> {
  const argv = [rg, "--json", "--no-config", "--no-follow", "--max-filesize", "16M", q.caseSensitive === false ? "--ignore-case" : "--case-sensitive", ...(q.regex ? [] : ["--fixed-strings"]), "-e", q.pattern, "--", ...paths];
  return new Promise((resolve) => {
    const child = spawn(argv, root.path);
    let timedOut = false;
    const timer = setTimeout(() => ((timedOut = true), child.kill("SIGKILL")), Math.max(deadline - Date.now(), 1));
    const matches: SearchMatch[] = [];
    let hit = false;
    let summary = false;
    let line = "";
    let skipping = false;
    let stderr = "";
    const take = (json: string) => {
      if (json.endsWith('"type":"summary"}')) return void (summary = true);
      if (hit || !json.startsWith('{"type":"match"')) return;
      const m = (JSON.parse(json) as RgMatch).data;
      // A name or a line that is not UTF-8 comes as bytes: left out rather than shown empty.
      if (m.path.text === undefined || m.lines.text === undefined) return;
      const path = m.path.text.replace(/^\.\//, "");
      if (!keep(path)) return;
      const text = m.lines.text.replace(/\r?\n$/, "");
      const bytes = Buffer.from(text, "utf8");
      for (const sub of m.submatches) {
        if (matches.length === limit) {
          hit = true;
          child.kill();
          return;
        }
        matches.push({ root: root.name, path, line: m.line_number, column: bytes.subarray(0, sub.start).toString("utf8").length + 1, byteOffset: m.absolute_offset + sub.start, text: text.slice(0, LINE_CHARS) });
      }
    };
    child.stdout!.setEncoding("utf8");
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (d: string) => (stderr = (stderr + d).slice(-4000)));
    child.stdout!.on("data", (chunk: string) => {
      let from = 0;
      for (let nl = chunk.indexOf("\n"); nl !== -1; nl = chunk.indexOf("\n", from)) {
        if (!skipping) take(line + chunk.slice(from, nl));
        line = "";
        skipping = false;
        from = nl + 1;
      }
      if (!skipping) line += chunk.slice(from);
      if (line.length > LINE_JSON_MAX) ((skipping = true), (line = ""));
    });
    const done = (outcome: Found) => (clearTimeout(timer), resolve(outcome));
    child.on("error", (err) => done(refuse(503, `ripgrep could not run in root ${root.name}: ${err.message}`, CODES.codeSearchUnavailable)));
    child.on("close", (code) => {
      if (hit) return done(ok({ matches, hit }));
      if (timedOut) return done(refuse(504, `the search ran past ${SEARCH_MS / 1000} s: narrow it with root or glob`, CODES.codeSearchTimeout));
      // ripgrep always ends its JSON with a summary: without one, what exited was not ripgrep (the sandbox could not start).
      if ((code === 0 || code === 1) && !summary) return done(refuse(503, `ripgrep did not run in root ${root.name}: ${stderr.trim().split("\n").at(-1) || `exit ${code}`}`, CODES.codeSearchUnavailable));
      // 1: no match. 2 with matches: a file could not be read, which does not void the rest.
      if (code === 0 || code === 1 || (code === 2 && matches.length > 0)) return done(ok({ matches, hit }));
      done(refuse(400, `ripgrep refused the search: ${stderr.trim().split("\n").at(-1) || `exit ${code}`}`, CODES.codeSearchInvalid));
    });
  });
}

/**
 * One root's matches. In a git checkout ripgrep is given the tracked files the glob keeps,
 * and searches nothing else (not an ignored `.env`, not what a session left untracked, not
 * `.git/`), whatever ignore files say; in a root that is no git checkout it walks the tree,
 * its ignore rules and hidden files left out, and no path with a dot segment is kept.
 */
async function searchRoot(rg: string, spawn: RgSpawner, root: RootEntry, q: SearchBody, limit: number, deadline: number): Promise<Found> {
  const glob = q.glob ? globMatcher(q.glob) : () => true;
  const tracked = await trackedOf(root.path);
  if (tracked === null) return runRg(rg, spawn, root, q, ["."], (p) => glob(p) && !p.split("/").some((s) => s.startsWith(".")), limit, deadline);
  const matches: SearchMatch[] = [];
  for (const paths of chunks(tracked.filter(glob))) {
    const found = await runRg(rg, spawn, root, q, paths, () => true, limit - matches.length, deadline);
    if (!found.ok) return found;
    matches.push(...found.value.matches);
    if (found.value.hit) return ok({ matches, hit: true });
  }
  return ok({ matches, hit: false });
}

/** `POST /code/search` over the roots given, in order, `limit` matches in all; `limitHit` when any root had more, or a root was left unsearched. */
export async function search(roots: RootEntry[], q: SearchBody, spawn: RgSpawner): Promise<Outcome<SearchAnswer>> {
  const rg = await ripgrep();
  if (!rg) return refuse(503, "ripgrep is not installed on this host (@vscode/ripgrep's platform package)", CODES.codeSearchUnavailable);
  const limit = q.limit ?? DEFAULT_LIMIT;
  const deadline = Date.now() + SEARCH_MS;
  const matches: SearchMatch[] = [];
  const commits: Record<string, string | null> = {};
  let limitHit = false;
  for (const root of roots) {
    // The head is read while ripgrep runs, not before it.
    const head = headOf(root.path);
    if (!limitHit) {
      const found = await searchRoot(rg, spawn, root, q, limit - matches.length, deadline);
      if (!found.ok) return found;
      matches.push(...found.value.matches);
      limitHit = found.value.hit || (matches.length === limit && root !== roots.at(-1));
    }
    commits[root.name] = (await head).head;
  }
  return ok({ matches, commits, limitHit });
}
