import { spawn } from "node:child_process";
import { rgPath } from "@vscode/ripgrep";
import type { SearchAnswer, SearchBody, SearchMatch } from "../../../src/api/code.js";
import { headOf } from "./git.js";
import type { RootEntry } from "./fence.js";

const DEFAULT_LIMIT = 200;
const LINE_CHARS = 500;

interface RgMatch {
  type: "match";
  data: { path: { text?: string }; lines: { text?: string }; line_number: number; absolute_offset: number; submatches: { start: number }[] };
}

/** Characters before a byte offset of a line: the match's column, counted as a person reads it. */
function column(line: string, byteStart: number): number {
  return Buffer.from(line, "utf8").subarray(0, byteStart).toString("utf8").length + 1;
}

/**
 * One root's matches, by ripgrep over its checkout: ignored files (`.gitignore`) and
 * hidden ones left out, links not followed (so nothing outside the root is read), at
 * most `limit`; ripgrep stops there.
 */
function searchRoot(root: RootEntry, q: SearchBody, limit: number, signal: AbortSignal): Promise<{ matches: SearchMatch[]; hit: boolean }> {
  const argv = [
    "--json",
    "--no-config",
    "--no-follow",
    "--max-filesize",
    "16M",
    q.caseSensitive === false ? "--ignore-case" : "--case-sensitive",
    ...(q.regex ? [] : ["--fixed-strings"]),
    ...(q.glob ? ["--glob", q.glob] : []),
    "-e",
    q.pattern,
    "--",
    ".",
  ];
  return new Promise((resolve, reject) => {
    const rg = spawn(rgPath, argv, { cwd: root.path, stdio: ["ignore", "pipe", "pipe"], signal });
    const matches: SearchMatch[] = [];
    let hit = false;
    let buffered = "";
    let stderr = "";
    rg.stderr.on("data", (d: Buffer) => (stderr += d.toString()).length > 4000 && (stderr = stderr.slice(-4000)));
    rg.stdout.on("data", (d: Buffer) => {
      buffered += d.toString("utf8");
      let nl: number;
      while ((nl = buffered.indexOf("\n")) !== -1) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (hit || !line.startsWith('{"type":"match"')) continue;
        const m = (JSON.parse(line) as RgMatch).data;
        const text = (m.lines.text ?? "").replace(/\r?\n$/, "");
        const path = (m.path.text ?? "").replace(/^\.\//, "");
        for (const sub of m.submatches) {
          if (matches.length === limit) {
            hit = true;
            rg.kill();
            break;
          }
          matches.push({ root: root.name, path, line: m.line_number, column: column(text, sub.start), byteOffset: m.absolute_offset + sub.start, text: text.slice(0, LINE_CHARS) });
        }
      }
    });
    rg.on("error", (err) => (hit ? resolve({ matches, hit }) : reject(err)));
    // 1: no match. 2 with matches: some file could not be read, which does not void the rest.
    rg.on("close", (code) => (hit || code === 0 || code === 1 || (code === 2 && matches.length > 0) ? resolve({ matches, hit }) : reject(new Error(`ripgrep: ${stderr.trim() || `exit ${code}`}`))));
  });
}

/** `POST /code/search` over one root or every one, in root order, `limit` in all. */
export async function search(roots: RootEntry[], q: SearchBody): Promise<SearchAnswer> {
  const limit = q.limit ?? DEFAULT_LIMIT;
  const matches: SearchMatch[] = [];
  const commits: Record<string, string | null> = {};
  let limitHit = false;
  const signal = AbortSignal.timeout(60_000);
  for (const root of roots) {
    // The head is read while ripgrep runs, not before it.
    const head = headOf(root.path);
    if (!limitHit) {
      const found = await searchRoot(root, q, limit - matches.length, signal);
      matches.push(...found.matches);
      limitHit = found.hit;
    }
    commits[root.name] = (await head).head;
  }
  return { matches, commits, limitHit };
}
