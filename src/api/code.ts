import * as z from "zod";

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

/** A registered repository (`GET /code/roots`). */
export const CodeRoot = z.object({
  name: z.string(),
  path: z.string(),
  /** The workspace whose `repos` registered it; null for a host-wide root (`SERVICE_CODE_ROOTS`). */
  workspace: z.string().nullable(),
  /** Null when detached, or when the root is not a git checkout. */
  branch: z.string().nullable(),
  head: z.string().nullable(),
});
export type CodeRoot = z.infer<typeof CodeRoot>;

/** `GET /code/roots`. */
export const CodeRoots = z.object({ roots: z.array(CodeRoot) });
export type CodeRoots = z.infer<typeof CodeRoots>;

/** `GET /code/files`: a page of tracked files under `path`. */
export const FilesPage = z.object({
  root: z.string(),
  path: z.string(),
  files: z.array(z.string()),
  nextCursor: z.string().nullable(),
  commit: z.string().nullable(),
});
export type FilesPage = z.infer<typeof FilesPage>;

/** `GET /code/read`: a line range of one file. */
export const ReadAnswer = z.object({
  root: z.string(),
  path: z.string(),
  start: z.number().int(),
  end: z.number().int(),
  totalLines: z.number().int(),
  /** The lines `start` to `end`, joined with `\n`. */
  text: z.string(),
  /** The git blob hash of the whole file as it is on disk. */
  blob: z.string(),
  bytes: z.number().int(),
  /** The range was cut at the size cap: `end` is the last line given. */
  truncated: z.boolean(),
});
export type ReadAnswer = z.infer<typeof ReadAnswer>;

export const SYMBOL_KINDS = ["function", "method", "class", "interface", "type", "enum", "struct", "trait", "impl", "module", "variable"] as const;

const Position = z.object({ line: z.number().int(), column: z.number().int() });

/** A symbol of a file's outline. */
export const CodeSymbol = z.object({
  name: z.string(),
  kind: z.enum(SYMBOL_KINDS),
  /** 1-based lines, 1-based columns. */
  range: z.object({ start: Position, end: Position }),
  /** The enclosing symbol's name, or null. */
  parent: z.string().nullable(),
  /** The declaration's first line, as written. */
  signature: z.string(),
});
export type CodeSymbol = z.infer<typeof CodeSymbol>;

/** `GET /code/outline`. */
export const OutlineAnswer = z.object({
  root: z.string(),
  path: z.string(),
  language: z.string(),
  symbols: z.array(CodeSymbol),
  /** More than 5,000 symbols: the first 5,000 are given. */
  truncated: z.boolean(),
});
export type OutlineAnswer = z.infer<typeof OutlineAnswer>;

/** One line a search matched. */
export const SearchMatch = z.object({
  root: z.string(),
  path: z.string(),
  /** 1-based. */
  line: z.number().int(),
  /** 1-based, in characters of the line. */
  column: z.number().int(),
  /** From the start of the file, 0-based. */
  byteOffset: z.number().int(),
  /** The matching line, cut at 500 characters. */
  text: z.string(),
});
export type SearchMatch = z.infer<typeof SearchMatch>;

/** `POST /code/search`. */
export const SearchAnswer = z.object({
  matches: z.array(SearchMatch),
  /** Each root searched, and the commit its checkout was at. */
  commits: z.record(z.string(), z.string().nullable()),
  limitHit: z.boolean(),
});
export type SearchAnswer = z.infer<typeof SearchAnswer>;
