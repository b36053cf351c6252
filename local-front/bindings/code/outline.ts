import { createRequire } from "node:module";
import { dirname, extname, join } from "node:path";
import { Language, Parser, type Node } from "web-tree-sitter";
import type { CodeSymbol, OutlineAnswer, OutlineQuery } from "../../../src/api/code.js";
import { CODES } from "../../../src/api/errors.js";
import { ok, refuse, type Outcome } from "../../../src/api/outcome.js";
import { openFenced, type RootEntry } from "./fence.js";
import { fileText } from "./read.js";

/** Larger files are not parsed: the parse runs on the front's own thread. */
export const OUTLINE_FILE_MAX = 2 * 1024 * 1024;
/** An outline lists at most this many symbols, and says `truncated` past it. */
export const OUTLINE_MAX_SYMBOLS = 5000;

/** The grammars, by file extension: prebuilt WebAssembly from the `tree-sitter-wasms` package. */
const LANGUAGES: Record<string, string> = {
  ".ts": "typescript",
  ".mts": "typescript",
  ".cts": "typescript",
  ".tsx": "tsx",
  ".js": "javascript",
  ".mjs": "javascript",
  ".cjs": "javascript",
  ".jsx": "javascript",
  ".py": "python",
  ".go": "go",
  ".rs": "rust",
};

/** Node types that declare a symbol, and what kind of symbol (a function inside a class or an impl is a method). */
const DECLARATIONS: Record<string, CodeSymbol["kind"]> = {
  function_declaration: "function",
  generator_function_declaration: "function",
  function_definition: "function",
  function_item: "function",
  method_definition: "method",
  method_declaration: "method",
  class_declaration: "class",
  abstract_class_declaration: "class",
  class_definition: "class",
  interface_declaration: "interface",
  type_alias_declaration: "type",
  type_item: "type",
  enum_declaration: "enum",
  enum_item: "enum",
  struct_item: "struct",
  trait_item: "trait",
  impl_item: "impl",
  internal_module: "module",
  mod_item: "module",
  type_spec: "type",
};

const CONTAINERS = new Set<CodeSymbol["kind"]>(["class", "interface", "struct", "trait", "impl", "module", "enum"]);

const require = createRequire(import.meta.url);
const wasmDir = join(dirname(require.resolve("tree-sitter-wasms/package.json")), "out");
let ready: Promise<void> | null = null;
const loaded = new Map<string, Promise<Parser>>();

/** One parser a language, made once: parsing is synchronous, so no two parses share one at a time. */
function parserFor(name: string): Promise<Parser> {
  ready ??= Parser.init();
  let p = loaded.get(name);
  if (!p) {
    p = ready.then(async () => {
      const parser = new Parser();
      parser.setLanguage(await Language.load(join(wasmDir, `tree-sitter-${name}.wasm`)));
      return parser;
    });
    // A grammar that failed to load is tried again next time, not remembered as failed.
    p.catch(() => loaded.delete(name));
    loaded.set(name, p);
  }
  return p;
}

function nameOf(node: Node, type: string): string | null {
  const named = node.childForFieldName("name") ?? (type === "impl_item" ? node.childForFieldName("type") : null);
  return named?.text ?? null;
}

/** What a declaration is: a Go type by what it names, a function inside a container a method. */
function kindOf(node: Node, type: string, inContainer: boolean): CodeSymbol["kind"] | null {
  const kind = DECLARATIONS[type];
  if (!kind) return null;
  if (type === "type_spec") {
    const t = node.childForFieldName("type")?.type;
    return t === "struct_type" ? "struct" : t === "interface_type" ? "interface" : "type";
  }
  return kind === "function" && inContainer ? "method" : kind;
}

/** A `const f = () => ...` or `= function` is a function too. */
function arrowName(node: Node, type: string): string | null {
  if (type !== "variable_declarator") return null;
  const value = node.childForFieldName("value")?.type;
  return value === "arrow_function" || value === "function_expression" || value === "function" ? (node.childForFieldName("name")?.text ?? null) : null;
}

/** A function's body holds statements, not the file's outline: the walk does not go in. */
const BODIES_OF = new Set(["function", "method"]);

/**
 * Walked with a stack of its own, in source order: a deeply nested file cannot overflow the front's.
 * Each of a node's properties is a call into the parser's WebAssembly, so each is asked once.
 */
function symbolsOf(root: Node, source: string[]): CodeSymbol[] {
  const out: CodeSymbol[] = [];
  const stack: { node: Node; parent: { name: string; kind: CodeSymbol["kind"] } | null }[] = [{ node: root, parent: null }];
  while (stack.length) {
    const { node, parent } = stack.pop()!;
    const type = node.type;
    const kind = kindOf(node, type, parent !== null && CONTAINERS.has(parent.kind));
    const name = kind ? nameOf(node, type) : arrowName(node, type);
    let here = parent;
    if (name) {
      const k = kind ?? "function";
      const receiver = type === "method_declaration" ? node.childForFieldName("receiver")?.text.replace(/^\(|\)$/g, "").split(/\s+/).at(-1)?.replace(/^\*/, "") : undefined;
      const start = node.startPosition;
      const end = node.endPosition;
      out.push({
        name,
        kind: k,
        range: { start: { line: start.row + 1, column: start.column + 1 }, end: { line: end.row + 1, column: end.column + 1 } },
        parent: receiver ?? parent?.name ?? null,
        // From the source's line, not node.text: that would copy a whole class to keep its first line.
        signature: (source[start.row] ?? "").slice(start.column).trim().slice(0, 200),
      });
      here = { name, kind: k };
      if (BODIES_OF.has(k)) continue;
    }
    const children = node.namedChildren;
    for (let i = children.length - 1; i >= 0; i--) if (children[i]) stack.push({ node: children[i]!, parent: here });
  }
  return out;
}

/** `GET /code/outline`: the symbols of a file, by a real parser (tree-sitter). */
export async function outline(root: RootEntry, q: OutlineQuery): Promise<Outcome<OutlineAnswer>> {
  const language = LANGUAGES[extname(q.path).toLowerCase()];
  if (!language) {
    // What the path is comes before its name: a directory (or a missing file) is refused as such, unread.
    const f = await openFenced(root, q.path);
    if (!f.ok) return f;
    await f.value.handle.close();
    return refuse(415, `no outline for ${extname(q.path) || "files without an extension"}: it reads ${Object.keys(LANGUAGES).join(" ")}`, CODES.codeLanguageUnknown);
  }
  const file = await fileText(root, q.path, OUTLINE_FILE_MAX);
  if (!file.ok) return file;
  const source = file.value.text;
  const tree = (await parserFor(language)).parse(source);
  if (!tree) return refuse(422, `${q.path} could not be parsed`, CODES.codeParseFailed);
  try {
    const symbols = symbolsOf(tree.rootNode, source.split("\n"));
    return ok({ root: root.name, path: file.value.rel, language, symbols: symbols.slice(0, OUTLINE_MAX_SYMBOLS), truncated: symbols.length > OUTLINE_MAX_SYMBOLS });
  } finally {
    tree.delete();
  }
}
