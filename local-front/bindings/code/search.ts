import type { ChildProcess } from "node:child_process";
import type { SearchAnswer, SearchBody, SearchMatch } from "../../../src/api/code.js";
import { CODES } from "../../../src/api/errors.js";
import { ok, refuse, type Outcome } from "../../../src/api/outcome.js";
import { headOf } from "./git.js";
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

/** The match's column: 1-based, in UTF-16 code units of the line (what an editor's JavaScript counts), from ripgrep's byte offset. */
function column(line: string, byteStart: number): number {
  return Buffer.from(line, "utf8").subarray(0, byteStart).toString("utf8").length + 1;
}

/** ripgrep's path, found when a search needs it: a host whose platform package did not install still starts. */
async function ripgrep(): Promise<string | null> {
  try {
    return (await import("@vscode/ripgrep")).rgPath;
  } catch {
    return null;
  }
}

/**
 * One root's matches, by ripgrep over its checkout: ignored files (`.gitignore`) and
 * hidden ones left out, links not followed. The glob is applied here, to the paths
 * ripgrep found, not handed to ripgrep (whose `--glob` overrides its ignore rules, and
 * would open `.env` or `.git/config`). ripgrep stops once `limit` matches were kept.
 */
function searchRoot(rg: string, spawn: RgSpawner, root: RootEntry, q: SearchBody, limit: number, deadline: number): Promise<Outcome<{ matches: SearchMatch[]; hit: boolean }>> {
  const argv = [rg, "--json", "--no-config", "--no-follow", "--max-filesize", "16M", q.caseSensitive === false ? "--ignore-case" : "--case-sensitive", ...(q.regex ? [] : ["--fixed-strings"]), "-e", q.pattern, "--", "."];
  const keep = q.glob ? globMatcher(q.glob) : () => true;
  return new Promise((resolve) => {
    const child = spawn(argv, root.path);
    const timer = setTimeout(() => (timedOut = true, child.kill("SIGKILL")), Math.max(deadline - Date.now(), 1));
    const matches: SearchMatch[] = [];
    let hit = false;
    let timedOut = false;
    let buffered = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8");
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (d: string) => (stderr = (stderr + d).slice(-4000)));
    child.stdout!.on("data", (d: string) => {
      buffered += d;
      let nl: number;
      while ((nl = buffered.indexOf("\n")) !== -1) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (hit || !line.startsWith('{"type":"match"')) continue;
        const m = (JSON.parse(line) as RgMatch).data;
        // A name or a line that is not UTF-8 comes as bytes: left out rather than shown empty.
        if (m.path.text === undefined || m.lines.text === undefined) continue;
        const path = m.path.text.replace(/^\.\//, "");
        if (!keep(path)) continue;
        const text = m.lines.text.replace(/\r?\n$/, "");
        for (const sub of m.submatches) {
          if (matches.length === limit) {
            hit = true;
            child.kill();
            break;
          }
          matches.push({ root: root.name, path, line: m.line_number, column: column(text, sub.start), byteOffset: m.absolute_offset + sub.start, text: text.slice(0, LINE_CHARS) });
        }
      }
    });
    const done = (outcome: Outcome<{ matches: SearchMatch[]; hit: boolean }>) => (clearTimeout(timer), resolve(outcome));
    child.on("error", (err) => done(refuse(503, `ripgrep could not run: ${err.message}`, CODES.codeSearchUnavailable)));
    child.on("close", (code) => {
      if (hit) return done(ok({ matches, hit }));
      if (timedOut) return done(refuse(504, `the search ran past ${SEARCH_MS / 1000} s: narrow it with root or glob`, CODES.codeSearchTimeout));
      // 1: no match. 2 with matches: a file could not be read, which does not void the rest.
      if (code === 0 || code === 1 || (code === 2 && matches.length > 0)) return done(ok({ matches, hit }));
      done(refuse(400, `ripgrep refused the search: ${stderr.trim().split("\n").at(-1) || `exit ${code}`}`, CODES.codeSearchInvalid));
    });
  });
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
