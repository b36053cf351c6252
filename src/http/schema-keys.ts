import type { ZodType } from "zod";

/** zod 4's definition of a schema, as far as a walk needs it. */
interface Def {
  type: string;
  innerType?: ZodType;
  in?: ZodType;
  shape?: Record<string, ZodType>;
  element?: ZodType;
  options?: ZodType[];
  getter?: () => ZodType;
}

const defOf = (s: ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** The schema under its wrappers (optional, default, a transform's input...). */
function unwrap(schema: ZodType): ZodType {
  let s = schema;
  for (;;) {
    const d = defOf(s);
    const next = d.innerType ?? (d.type === "pipe" ? d.in : d.type === "lazy" ? d.getter?.() : undefined);
    if (!next) return s;
    s = next;
  }
}

/**
 * The keys the object at `path` of `schema` takes, for a refusal to name; null when the
 * walk meets something other than objects and arrays (a union: which of its shapes was
 * meant is the caller's to say).
 */
export function keysAt(schema: ZodType, path: readonly PropertyKey[]): string[] | null {
  let s = unwrap(schema);
  for (const step of path) {
    const d = defOf(s);
    const next = d.type === "object" ? d.shape?.[String(step)] : d.type === "array" ? d.element : undefined;
    if (!next) return null;
    s = unwrap(next);
  }
  const d = defOf(s);
  return d.type === "object" && d.shape ? Object.keys(d.shape) : null;
}
