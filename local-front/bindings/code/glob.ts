/** Alternatives a glob's braces may expand to, at most: `{a,b}{c,d}` is four. */
const MAX_ALTERNATIVES = 64;

/** A glob this matcher does not take (nested braces, too many alternatives): refused, never matched in part. */
export class GlobInvalid extends Error {}

/** `{a,b}` expanded, left to right; a brace without its close is literal. */
function expand(glob: string): string[] {
  const open = glob.indexOf("{");
  const close = open === -1 ? -1 : glob.indexOf("}", open);
  if (close === -1) return [glob];
  if (glob.slice(open + 1, close).includes("{")) throw new GlobInvalid(`glob ${glob}: braces inside braces are not read`);
  const rest = expand(glob.slice(close + 1));
  const out: string[] = [];
  for (const alt of glob.slice(open + 1, close).split(","))
    for (const r of rest) {
      if (out.length === MAX_ALTERNATIVES) throw new GlobInvalid(`glob ${glob}: its braces make more than ${MAX_ALTERNATIVES} alternatives`);
      out.push(glob.slice(0, open) + alt + r);
    }
  return out;
}

/**
 * One path segment against one pattern segment of `*` and `?`: the greedy two-pointer
 * match, which goes back only to the last star, so its time is linear in practice and
 * never exponential, whatever the pattern.
 */
function segmentMatches(p: string, s: string): boolean {
  let pi = 0;
  let si = 0;
  let star = -1;
  let mark = 0;
  while (si < s.length) {
    if (pi < p.length && (p[pi] === "?" || p[pi] === s[si])) (pi++, si++);
    else if (pi < p.length && p[pi] === "*") (star = pi++, (mark = si));
    else if (star !== -1) (pi = star + 1, (si = ++mark));
    else return false;
  }
  while (pi < p.length && p[pi] === "*") pi++;
  return pi === p.length;
}

/** Path segments against pattern segments, `**` standing for any run of segments: a table over both, so no backtracking. */
function pathMatches(pattern: string[], path: string[]): boolean {
  let can = new Array<boolean>(path.length + 1).fill(false);
  can[0] = true;
  for (const seg of pattern) {
    const next = new Array<boolean>(path.length + 1).fill(false);
    for (let j = 0; j <= path.length; j++) {
      if (!can[j]) continue;
      if (seg === "**") for (let k = j; k <= path.length; k++) next[k] = true;
      else if (j < path.length && segmentMatches(seg, path[j]!)) next[j + 1] = true;
    }
    can = next;
  }
  return can[path.length]!;
}

/**
 * A path glob: `**` any run of segments, `*` any run within a segment, `?` one character,
 * `{a,b}` either (not nested, 64 alternatives at most), `dir/` all under `dir`; other
 * characters (`[`, `]`) are themselves. A glob without `/` matches the base name (as
 * ripgrep's `--glob` does). Matched without regular expressions, so no glob can make it
 * slow. Throws GlobInvalid for a glob it does not take.
 */
export function globMatcher(glob: string): (path: string) => boolean {
  const patterns = expand(glob.endsWith("/") ? `${glob}**` : glob).map((g) => g.replace(/\*{3,}/g, "**").split("/").filter(Boolean));
  const whole = glob.includes("/");
  return (path) => {
    const segs = whole ? path.split("/") : [path.slice(path.lastIndexOf("/") + 1)];
    return patterns.some((p) => pathMatches(p, segs));
  };
}
