import { CODES } from "../api/errors.js";
import { ok, refuse, type Outcome } from "../api/outcome.js";
import { UI_LIMITS, UiNode } from "../api/ui.js";
import { nestsDeeperThan } from "./json-depth.js";

/** `tree.children[2].action`: where in the tree an issue is. */
function pathOf(path: readonly PropertyKey[]): string {
  return path.reduce<string>((at, p) => (typeof p === "number" ? `${at}[${p}]` : `${at}.${String(p)}`), "tree");
}

function refused(reason: string): Outcome<never> {
  return refuse(502, `the interface is refused: ${reason}`, CODES.uiModelInvalid);
}

/**
 * A node of depth d nests at most 2d + 1 levels of JSON (its object, its children's array,
 * then a button's action or a table's rows and cells): anything deeper holds a node past
 * the depth limit, and is refused before anything recurses into it.
 */
const JSON_LEVELS = 2 * UI_LIMITS.depth + 1;

/**
 * An interface tree checked against the catalog (src/api/ui.ts, docs/ui.md): its size and
 * nesting first, then every node against its component's schema (strict: an unknown
 * component, key or action is refused), then the depth and the node count. The refusal
 * names where the first fault is (`tree.children[1].type`).
 */
export function checkUiTree(value: unknown): Outcome<UiNode> {
  if (nestsDeeperThan(value, JSON_LEVELS)) return refused(`it nests deeper than ${UI_LIMITS.depth} levels of nodes`);
  const bytes = new TextEncoder().encode(JSON.stringify(value) ?? "").length;
  if (bytes > UI_LIMITS.bytes) return refused(`it is ${bytes} bytes of JSON; at most ${UI_LIMITS.bytes}`);
  const parsed = UiNode.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return refused(`${pathOf(issue.path)}: ${issue.message}`);
  }
  let nodes = 0;
  const stack: [UiNode, number, string][] = [[parsed.data, 1, "tree"]];
  while (stack.length > 0) {
    const [node, depth, at] = stack.pop()!;
    if (depth > UI_LIMITS.depth) return refused(`${at}: deeper than ${UI_LIMITS.depth} levels of nodes`);
    if (++nodes > UI_LIMITS.nodes) return refused(`it has more than ${UI_LIMITS.nodes} nodes`);
    if (node.type === "stack" || node.type === "row") node.children.forEach((child, i) => stack.push([child, depth + 1, `${at}.children[${i}]`]));
  }
  return ok(parsed.data);
}

/**
 * A model's answer as a tree: the JSON object it holds (alone, in a code fence, or among
 * words), checked by `checkUiTree`.
 */
export function uiTreeFromText(text: string): Outcome<UiNode> {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start === -1 || end < start) return refused("the answer holds no JSON object");
  let value: unknown;
  try {
    value = JSON.parse(text.slice(start, end + 1));
  } catch (err) {
    return refused(`the answer's JSON does not parse: ${(err as Error).message}`);
  }
  return checkUiTree(value);
}
