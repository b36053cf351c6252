/**
 * A path glob as a regular expression: `**` any run of segments, `*` any run within a
 * segment, `?` one character, `{a,b}` either; a glob without `/` matches the base name
 * (as ripgrep's `--glob` does).
 */
export function globMatcher(glob: string): (path: string) => boolean {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*" && glob[i + 1] === "*") {
      re += glob[i + 2] === "/" ? "(?:.*/)?" : ".*";
      i += glob[i + 2] === "/" ? 2 : 1;
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else if (c === "{") {
      const close = glob.indexOf("}", i);
      if (close === -1) re += "\\{";
      else {
        re += `(?:${glob.slice(i + 1, close).split(",").map(escape).join("|")})`;
        i = close;
      }
    } else re += escape(c);
  }
  const whole = new RegExp(`^${re}$`);
  return glob.includes("/") ? (p) => whole.test(p) : (p) => whole.test(p.slice(p.lastIndexOf("/") + 1));
}

function escape(s: string): string {
  return s.replace(/[.+^$()|[\]\\]/g, "\\$&");
}
