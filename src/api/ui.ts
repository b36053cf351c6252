/**
 * Generated interfaces (docs/ui.md): the catalog of components a thread's interface is
 * built from, its limits, the actions its buttons take, and the thread's state the
 * template and the model build it from. A frontend renders a tree of this catalog and
 * nothing else: every string is plain text, shown as text; no component takes HTML, a
 * URL, a style or a script, and a button names one of the runtime's actions on the same
 * thread. Imports nothing but zod.
 */
import * as z from "zod";

/** How big a tree may be. A tree past any of them is refused whole (src/rules/ui-tree.ts). */
export const UI_LIMITS = {
  /** Levels of nodes: the root is level 1. */
  depth: 8,
  /** Nodes in the whole tree. */
  nodes: 200,
  /** The tree as JSON, in UTF-8 bytes. */
  bytes: 32_768,
  /** Children of one `stack` or `row`. */
  children: 40,
  /** A `heading`'s text. */
  heading: 200,
  /** A `text`'s text, a `send` action's text, an `answer` action's answer. */
  text: 4_000,
  /** A `code`'s text. */
  code: 8_000,
  /** A `badge`'s text, a `button`'s label, a `keyValue`'s key, a `table`'s column. */
  label: 80,
  /** A `list`'s item, a `keyValue`'s value. */
  item: 500,
  /** A `table`'s cell. */
  cell: 200,
  /** Items of a `list` or a `keyValue`, rows of a `table`. */
  items: 50,
  /** Columns of a `table`. */
  columns: 8,
  /** An `approvalId` or a `requestId`, as their routes take them. */
  id: 100,
} as const;

/**
 * Characters a string of the catalog may not hold: C0 controls but tab and newline (a
 * terminal's escapes among them), DEL, the bidirectional overrides and isolates, which
 * make text read differently from what it holds, and halves of a character (a surrogate
 * without its pair), which no UTF-8 text holds.
 */
const FORBIDDEN = /[\u0000-\u0008\u000B-\u001F\u007F\u202A-\u202E\u2066-\u2069]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const FORBIDDEN_ALL = new RegExp(FORBIDDEN.source, "g");

/** `text` as a string of the catalog takes it: without forbidden characters, at most `max` UTF-16 units (cut with `…`, never inside a character). */
export function plainText(text: string, max: number): string {
  const clean = text.replace(FORBIDDEN_ALL, "");
  if (clean.length <= max) return clean;
  const end = /[\uD800-\uDBFF]/.test(clean[max - 2] ?? "") ? max - 2 : max - 1;
  return `${clean.slice(0, end)}…`;
}

const plain = (min: number, max: number) =>
  z
    .string()
    .min(min)
    .max(max)
    .refine((s) => !FORBIDDEN.test(s), "holds a control character, a bidirectional override or half a character: strings are plain text");

const Id = plain(1, UI_LIMITS.id);

/** What a button does: one of the runtime's actions on the thread the interface is of, by name (docs/ui.md, "Actions"). */
export const UiAction = z.discriminatedUnion("name", [
  /** `POST /threads/:id/messages` with this text. */
  z.strictObject({ name: z.literal("send"), text: plain(1, UI_LIMITS.text) }),
  /** `POST /threads/:id/approvals/:approvalId` with this decision. */
  z.strictObject({ name: z.literal("approve"), approvalId: Id, decision: z.enum(["allow", "deny"]) }),
  /** `POST /threads/:id/questions/:requestId/answer`: with `answer` as given, else with what the person types. */
  z.strictObject({ name: z.literal("answer"), requestId: Id, answer: plain(1, UI_LIMITS.text).optional() }),
  /** `POST /threads/:id/questions/:requestId/dismiss`. */
  z.strictObject({ name: z.literal("dismiss"), requestId: Id }),
  /** `POST /threads/:id/interrupt`. */
  z.strictObject({ name: z.literal("interrupt") }),
  /** `POST /threads/:id/ui/generate`: a new interface for the thread. */
  z.strictObject({ name: z.literal("generate") }),
]);
export type UiAction = z.infer<typeof UiAction>;
export const UI_ACTIONS = ["send", "approve", "answer", "dismiss", "interrupt", "generate"] as const satisfies readonly UiAction["name"][];

export const UI_TONES = ["neutral", "info", "success", "warning", "error"] as const;
const Tone = z.enum(UI_TONES);

const Heading = z.strictObject({ type: z.literal("heading"), text: plain(1, UI_LIMITS.heading), level: z.union([z.literal(1), z.literal(2), z.literal(3)]).optional() });
const Text = z.strictObject({ type: z.literal("text"), text: plain(1, UI_LIMITS.text), tone: Tone.optional() });
const Badge = z.strictObject({ type: z.literal("badge"), text: plain(1, UI_LIMITS.label), tone: Tone.optional() });
const List = z.strictObject({ type: z.literal("list"), items: z.array(plain(1, UI_LIMITS.item)).min(1).max(UI_LIMITS.items), ordered: z.boolean().optional() });
const KeyValue = z.strictObject({
  type: z.literal("keyValue"),
  items: z.array(z.strictObject({ key: plain(1, UI_LIMITS.label), value: plain(0, UI_LIMITS.item) })).min(1).max(UI_LIMITS.items),
});
const Table = z
  .strictObject({
    type: z.literal("table"),
    columns: z.array(plain(1, UI_LIMITS.label)).min(1).max(UI_LIMITS.columns),
    rows: z.array(z.array(plain(0, UI_LIMITS.cell))).max(UI_LIMITS.items),
  })
  .refine((t) => t.rows.every((r) => r.length === t.columns.length), { message: "every row has one cell per column", path: ["rows"] });
const Code = z.strictObject({ type: z.literal("code"), text: plain(1, UI_LIMITS.code), language: z.string().regex(/^[a-z0-9+#.-]{1,20}$/).optional() });
const Button = z.strictObject({ type: z.literal("button"), label: plain(1, UI_LIMITS.label), action: UiAction, style: z.enum(["primary", "secondary", "danger"]).optional() });
const Divider = z.strictObject({ type: z.literal("divider") });

/** The components without children. */
export type UiLeaf = z.infer<typeof Heading | typeof Text | typeof Badge | typeof List | typeof KeyValue | typeof Table | typeof Code | typeof Button | typeof Divider>;
/** `stack` lays its children out top to bottom, `row` side by side (wrapping where the frontend must). */
export interface UiContainer {
  type: "stack" | "row";
  children: UiNode[];
}
export type UiNode = UiContainer | UiLeaf;

/** Every component of the catalog, by its `type`. */
export const UI_COMPONENTS = ["stack", "row", "heading", "text", "badge", "list", "keyValue", "table", "code", "button", "divider"] as const satisfies readonly UiNode["type"][];

const container = (type: UiContainer["type"]) => z.strictObject({ type: z.literal(type), children: z.array(UiNode).min(1).max(UI_LIMITS.children) });

/**
 * One node of an interface and its subtree. Strict: a key the catalog does not name is
 * refused, as is a `type` it does not list. The depth, node and size limits are the rule's
 * (src/rules/ui-tree.ts), which checks them before this schema reads the tree.
 */
export const UiNode: z.ZodType<UiNode> = z
  .lazy(() => z.discriminatedUnion("type", [container("stack"), container("row"), Heading, Text, Badge, List, KeyValue, Table, Code, Button, Divider]))
  .meta({ id: "UiNode" });

export const INTERFACE_SOURCES = ["template", "model"] as const;
export type InterfaceSource = (typeof INTERFACE_SOURCES)[number];

/** `POST /threads/:id/ui/generate`: `source` absent: the model when `SERVICE_UI_MODEL` names one, else the template. */
export const GenerateInterface = z.object({ source: z.enum(INTERFACE_SOURCES).optional() }).strict();
export type GenerateInterface = z.infer<typeof GenerateInterface>;

/** The interface, as its `interface` event stored it. */
export const GeneratedInterface = z.object({
  /** The `interface` event. */
  seq: z.number().int().positive(),
  ts: z.string(),
  interfaceId: z.string(),
  source: z.enum(INTERFACE_SOURCES),
  /** The model that wrote it (`source: "model"`). */
  model: z.string().optional(),
  /** The last event of the log the interface reflects. */
  basedOnSeq: z.number().int().nonnegative(),
  tree: UiNode,
});
export type GeneratedInterface = z.infer<typeof GeneratedInterface>;

/**
 * What an interface is built from: the thread as it stood at `basedOnSeq`, each string
 * already plain text of a bounded length (`plainText`). The template reads it, the model
 * is given it as JSON, and the provider simulator builds its tree from that JSON.
 */
export interface UiState {
  thread: {
    id: string;
    title: string | null;
    type: string;
    role: string;
    workspace: string | null;
    engine: string;
    model: string;
    stage: string;
    turns: number;
    cost: { usd: number; inputTokens: number; outputTokens: number };
    createdAt: string;
    updatedAt: string;
  };
  /** Open approvals, oldest first: the tool and its input as JSON. */
  approvals: { approvalId: string; tool: string; input: string }[];
  /** Open questions, oldest first. */
  questions: { requestId: string; question: string }[];
  /** The newest message to the thread. */
  lastMessage: { seq: number; text: string; from: string | null } | null;
  /** The newest reply of the thread's model. */
  lastReply: { seq: number; text: string } | null;
  /** The newest tool calls, oldest first, and what became of each. */
  toolCalls: { seq: number; name: string; input: string; result: "ok" | "error" | "pending" }[];
  /** The last turn failed, and no turn ended after it. */
  failure: { seq: number; class: string; error: string } | null;
  seats: { name: string; engine: string; model: string; role: string | null; state: string; holds: boolean }[];
  basedOnSeq: number;
}

/** How long each string of a `UiState` may be: what the template and the model are given. */
export const UI_STATE_LIMITS = { title: 200, excerpt: 1_000, input: 1_000, error: 500, open: 8, toolCalls: 5 } as const;
