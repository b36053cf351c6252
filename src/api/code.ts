import { z } from "zod";

/**
 * Code reads of registered repositories (docs/code.md): the operator registers roots
 * (`SERVICE_CODE_ROOTS`, a workspace's `repos`); every path is relative to its root and
 * fenced inside it. The front answers them behind the `CODE` binding.
 */
export const CODE_TOKEN_HEADER = "x-service-code-token";

const RootName = z.string().min(1).max(100);
/** A path inside a root, relative to it: no leading `/`, no `..` segment (checked again, with symlinks, by the front). */
const RelPath = z.string().max(4096);

export const FilesQuery = z
  .object({
    root: RootName,
    path: RelPath.optional(),
    glob: z.string().min(1).max(500).optional(),
    /** The `nextCursor` of the page before. */
    cursor: z.string().max(4096).optional(),
    limit: z.coerce.number().int().min(1).max(5000).optional(),
  })
  .strict();
export type FilesQuery = z.infer<typeof FilesQuery>;

export const ReadQuery = z
  .object({
    root: RootName,
    path: RelPath.min(1),
    start: z.coerce.number().int().min(1).optional(),
    end: z.coerce.number().int().min(1).optional(),
  })
  .strict();
export type ReadQuery = z.infer<typeof ReadQuery>;

export const OutlineQuery = z.object({ root: RootName, path: RelPath.min(1) }).strict();
export type OutlineQuery = z.infer<typeof OutlineQuery>;

export const SearchBody = z
  .object({
    pattern: z.string().min(1).max(1000).regex(/^[^\0]*$/, "no NUL"),
    root: RootName.optional(),
    regex: z.boolean().optional(),
    glob: z.string().min(1).max(500).optional(),
    caseSensitive: z.boolean().optional(),
    limit: z.number().int().min(1).max(10_000).optional(),
  })
  .strict();
export type SearchBody = z.infer<typeof SearchBody>;

/** What the worker asks the code service (`POST /search` on the binding): a search, over the `roots` named (in order) when a caller may read only some. */
export const CodeSearchRequest = SearchBody.extend({ roots: z.array(RootName).max(100).optional() });
export type CodeSearchRequest = z.infer<typeof CodeSearchRequest>;

export interface CodeRoot {
  name: string;
  path: string;
  /** The workspace whose `repos` registered it; null for a host-wide root (`SERVICE_CODE_ROOTS`). */
  workspace: string | null;
  /** Null when detached, or when the root is not a git checkout. */
  branch: string | null;
  head: string | null;
}

export interface FilesPage {
  root: string;
  path: string;
  files: string[];
  nextCursor: string | null;
  commit: string | null;
}

export interface ReadAnswer {
  root: string;
  path: string;
  start: number;
  end: number;
  totalLines: number;
  /** The lines `start` to `end`, joined with `\n`. */
  text: string;
  /** The git blob hash of the whole file as it is on disk. */
  blob: string;
  bytes: number;
  /** The range was cut at the size cap: `end` is the last line given. */
  truncated: boolean;
}

export interface CodeSymbol {
  name: string;
  kind: "function" | "method" | "class" | "interface" | "type" | "enum" | "struct" | "trait" | "impl" | "module" | "variable";
  /** 1-based lines, 1-based columns. */
  range: { start: { line: number; column: number }; end: { line: number; column: number } };
  /** The enclosing symbol's name, or null. */
  parent: string | null;
  /** The declaration's first line, as written. */
  signature: string;
}

export interface OutlineAnswer {
  root: string;
  path: string;
  language: string;
  symbols: CodeSymbol[];
  /** More than 5,000 symbols: the first 5,000 are given. */
  truncated: boolean;
}

export interface SearchMatch {
  root: string;
  path: string;
  /** 1-based. */
  line: number;
  /** 1-based, in characters of the line. */
  column: number;
  /** From the start of the file, 0-based. */
  byteOffset: number;
  /** The matching line, cut at 500 characters. */
  text: string;
}

export interface SearchAnswer {
  matches: SearchMatch[];
  /** Each root searched, and the commit its checkout was at. */
  commits: Record<string, string | null>;
  limitHit: boolean;
}
