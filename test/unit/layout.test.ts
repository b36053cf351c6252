import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/** docs/architecture.md's folders, and what each may import of ours (a prefix of the project's paths). */
const MAY_IMPORT: [folder: string, allowed: string[]][] = [
  ["src/api/", ["src/api/"]],
  ["src/shared/", ["src/api/", "src/shared/"]],
  ["src/rules/", ["src/api/", "src/shared/", "src/rules/", "src/platform/config.ts"]],
  ["src/platform/", ["src/api/", "src/shared/", "src/rules/", "src/platform/", "objects/catalog.ts", "objects/host.ts", "objects/thread.ts", "objects/workspace.ts", "objects/room.ts"]],
  ["src/http/", ["src/api/", "src/shared/", "src/rules/", "src/platform/", "src/http/"]],
  ["src/flows/", ["src/api/", "src/shared/", "src/rules/", "src/platform/", "src/http/", "src/flows/"]],
  ["src/routes/", ["src/"]],
  ["src/", ["src/", "objects/"]],
  ["objects/", ["src/api/", "src/shared/", "src/rules/", "src/platform/", "objects/"]],
  // pi-ai's model table, loaded without the rest of the package: the one the runtime reads too.
  ["local-front/simulator/", ["src/api/", "local-front/simulator/", "local-front/bindings/model-table.ts"]],
  ["local-front/code-host-simulator/", ["src/api/", "local-front/code-host-simulator/", "local-front/simulator/body.ts"]],
  ["local-front/", ["src/api/", "src/shared/", "src/rules/", "src/platform/config.ts", "local-front/"]],
  ["client/", ["src/api/", "client/"]],
];

/**
 * The test doubles: each a server of its own. The runtime never reads them; only the
 * composition root that starts one imports it, and only its server entry point, which
 * also exports the types of what it starts from (credentials, a seed).
 */
const SIMULATORS = ["local-front/simulator/", "local-front/code-host-simulator/"];
const STARTS_A_SIMULATOR: Record<string, string> = {
  "local-front/network.ts": "local-front/simulator/server.ts",
  "local-front/code-host.ts": "local-front/code-host-simulator/server.ts",
};

/**
 * One engine's folder is its own: what the engines share (failure classes, the session's
 * network, the runtime's tools...) sits in engines/ beside them, and only the engine host,
 * which runs each engine's turns, imports the engines' folders.
 */
const ENGINES = "local-front/bindings/engines/";
const SHARED_BY_ENGINES = "tools";
const RUNS_ENGINES = `${ENGINES}engine-host.ts`;
/** pi's folder is pi's own: the curator's call, which rides pi-ai too, sits in bindings/curator/. */
const PI = `${ENGINES}pi/`;

const root = resolve(import.meta.dirname, "../..");
const GENERATED = "local-front/bindings/engines/engine-b/protocol/";

function files(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (name === "node_modules" || name === "dist" || path.startsWith(GENERATED)) return [];
    return statSync(join(root, path)).isDirectory() ? files(path) : /\.(ts|mts)$/.test(name) ? [path] : [];
  });
}

interface Import {
  to: string;
  typeOnly: boolean;
}

/** Each file's imports of our own files, resolved to project paths. */
function graph(): Map<string, Import[]> {
  const all = ["src", "objects", "local-front", "client"].flatMap(files);
  const known = new Set(all);
  const out = new Map<string, Import[]>();
  for (const file of all) {
    const text = readFileSync(join(root, file), "utf8");
    const imports: Import[] = [];
    for (const m of text.matchAll(/^(import|export)\s+(type\s+)?[^;]*?from\s+"(\.[^"]+)"/gms)) {
      const path = relative(root, resolve(root, dirname(file), m[3]!)).replace(/\.js$/, ".ts");
      if (known.has(path)) imports.push({ to: path, typeOnly: m[2] !== undefined });
    }
    out.set(file, imports);
  }
  return out;
}

/** Strongly connected components of more than one file (Tarjan). */
function cycles(g: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of g.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) found.push(scc.sort());
    }
  };
  for (const v of g.keys()) if (!idx.has(v)) visit(v);
  return found;
}

describe("the layout", () => {
  const g = graph();

  it("keeps each folder to what its role may import", () => {
    const wrong: string[] = [];
    for (const [file, imports] of g) {
      const allowed = MAY_IMPORT.find(([folder]) => file.startsWith(folder))?.[1];
      if (!allowed) continue;
      for (const i of imports) if (!allowed.some((prefix) => i.to.startsWith(prefix))) wrong.push(`${file} -> ${i.to}`);
    }
    expect(wrong).toEqual([]);
  });

  it("keeps the runtime off the simulators: only a composition root starts one, through its server entry point", () => {
    const wrong: string[] = [];
    for (const [file, imports] of g) {
      if (!file.startsWith("local-front/") || SIMULATORS.some((s) => file.startsWith(s))) continue;
      for (const i of imports) if (SIMULATORS.some((s) => i.to.startsWith(s)) && STARTS_A_SIMULATOR[file] !== i.to) wrong.push(`${file} -> ${i.to}`);
    }
    expect(wrong).toEqual([]);
  });

  it("keeps each engine off another's folder (engine_a and engine_b off pi's), and what they share off all of them", () => {
    const engines = readdirSync(join(root, ENGINES), { withFileTypes: true }).filter((d) => d.isDirectory() && d.name !== SHARED_BY_ENGINES).map((d) => `${ENGINES}${d.name}/`);
    expect(engines).toEqual(expect.arrayContaining([`${ENGINES}pi/`, `${ENGINES}engine-a/`, `${ENGINES}engine-b/`]));
    const wrong: string[] = [];
    for (const [file, imports] of g) {
      if (!file.startsWith(ENGINES) || file === RUNS_ENGINES) continue;
      const own = engines.find((e) => file.startsWith(e));
      for (const i of imports) if (engines.some((e) => e !== own && i.to.startsWith(e))) wrong.push(`${file} -> ${i.to}`);
    }
    expect(wrong).toEqual([]);
  });

  it("keeps pi's folder to pi: only the engine host imports it", () => {
    const wrong: string[] = [];
    for (const [file, imports] of g) {
      if (file.startsWith(PI) || file === RUNS_ENGINES) continue;
      for (const i of imports) if (i.to.startsWith(PI)) wrong.push(`${file} -> ${i.to}`);
    }
    expect(wrong).toEqual([]);
  });

  it("has no import loop but the one between Env and the object classes it names", () => {
    const edges = new Map([...g].map(([file, imports]) => [file, imports.filter((i) => !(file === "src/platform/env.ts" && i.typeOnly && i.to.startsWith("objects/"))).map((i) => i.to)]));
    expect(cycles(edges)).toEqual([]);
  });

  it("finds a loop when there is one", () => {
    expect(cycles(new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["a"]]]))).toEqual([["a", "b", "c"]]);
  });
});
