import { describe, expect, it } from "vitest";
import { UI_LIMITS, type UiNode } from "../../src/api/ui.js";
import { checkUiTree, uiTreeFromText } from "../../src/rules/ui-tree.js";

/** Every component and every action of the catalog, once. */
const EVERY: UiNode = {
  type: "stack",
  children: [
    { type: "row", children: [{ type: "heading", text: "Fix the flaky test", level: 1 }, { type: "badge", text: "waiting", tone: "warning" }] },
    { type: "text", text: "The agent wants to run a command.\nIt waits for you.", tone: "info" },
    { type: "list", items: ["read src/app.ts", "ran npm test"], ordered: true },
    { type: "keyValue", items: [{ key: "Model", value: "sim-1" }, { key: "Cost", value: "" }] },
    { type: "table", columns: ["Tool", "Result"], rows: [["shell", "ok"], ["read", ""]] },
    { type: "code", text: '{ "command": "rm -rf build" }\n<div>markup in code is text</div>', language: "json" },
    { type: "divider" },
    {
      type: "row",
      children: [
        { type: "button", label: "Allow", style: "primary", action: { name: "approve", approvalId: "appr_1", decision: "allow" } },
        { type: "button", label: "Answer", action: { name: "answer", requestId: "q_1" } },
        { type: "button", label: "Yes", action: { name: "answer", requestId: "q_1", answer: "yes" } },
        { type: "button", label: "Dismiss", action: { name: "dismiss", requestId: "q_1" } },
        { type: "button", label: "Go on", action: { name: "send", text: "Go on with the plan." } },
        { type: "button", label: "Stop", style: "danger", action: { name: "interrupt" } },
        { type: "button", label: "Refresh", style: "secondary", action: { name: "generate" } },
      ],
    },
  ],
};

/** `EVERY` with `node` put in as the root's last child. */
const withChild = (node: unknown) => ({ type: "stack", children: [{ type: "text", text: "fine" }, node] });

function refusal(value: unknown): string {
  const checked = checkUiTree(value);
  expect(checked.ok).toBe(false);
  if (checked.ok) return "";
  expect(checked.status).toBe(502);
  expect(checked.body.code).toBe("ui-model-invalid");
  return checked.body.error;
}

/** A chain of stacks `levels` deep with a text at the bottom. */
function chain(levels: number): unknown {
  let node: unknown = { type: "text", text: "bottom" };
  for (let i = 1; i < levels; i++) node = { type: "stack", children: [node] };
  return node;
}

describe("an interface tree checked against the catalog", () => {
  it("takes a tree of every component and action, and gives it back as it was", () => {
    const checked = checkUiTree(EVERY);
    expect(checked).toEqual({ ok: true, value: EVERY });
  });

  it("takes a lone leaf, and a tree at exactly the depth and node limits", () => {
    expect(checkUiTree({ type: "divider" }).ok).toBe(true);
    expect(checkUiTree(chain(UI_LIMITS.depth)).ok).toBe(true);
    // The root, five stacks and 194 leaves: 200 nodes.
    const leaves = (n: number) => ({ type: "stack", children: Array.from({ length: n }, () => ({ type: "divider" })) });
    const wide = { type: "stack", children: [leaves(39), leaves(39), leaves(39), leaves(39), leaves(38)] };
    expect(checkUiTree(wide).ok).toBe(true);
    expect(refusal({ ...wide, children: [...wide.children.slice(0, 4), leaves(39)] })).toContain(`more than ${UI_LIMITS.nodes} nodes`);
  });

  it("refuses a component the catalog does not list, naming where it is: script, HTML, a link, an iframe", () => {
    expect(refusal(withChild({ type: "script", text: "alert(1)" }))).toContain("tree.children[1].type");
    expect(refusal(withChild({ type: "html", html: "<b>hi</b>" }))).toContain("tree.children[1].type");
    expect(refusal(withChild({ type: "link", text: "open", href: "javascript:alert(1)" }))).toContain("tree.children[1].type");
    expect(refusal(withChild({ type: "iframe", src: "https://example.com" }))).toContain("tree.children[1].type");
    expect(refusal({ type: "markdown", text: "**hi**" })).toContain("tree.type");
  });

  it("refuses a key its component does not name: markup, handlers, URLs and styles have no place", () => {
    expect(refusal(withChild({ type: "text", text: "hi", html: "<img src=x onerror=alert(1)>" }))).toMatch(/tree\.children\[1\].*html/);
    expect(refusal(withChild({ type: "button", label: "Go", action: { name: "interrupt" }, onClick: "alert(1)" }))).toMatch(/onClick/);
    expect(refusal(withChild({ type: "button", label: "Go", action: { name: "interrupt" }, href: "javascript:alert(1)" }))).toMatch(/href/);
    expect(refusal(withChild({ type: "text", text: "hi", style: "background:url(javascript:alert(1))" }))).toMatch(/style/);
  });

  it("refuses a button whose action is not one of the runtime's, or carries a URL or a script", () => {
    expect(refusal(withChild({ type: "button", label: "Open", action: { name: "open", url: "javascript:alert(1)" } }))).toContain("tree.children[1].action.name");
    expect(refusal(withChild({ type: "button", label: "Run", action: { name: "eval", code: "fetch('/x')" } }))).toContain("tree.children[1].action.name");
    expect(refusal(withChild({ type: "button", label: "Send", action: { name: "send", text: "hi", url: "https://evil.example" } }))).toMatch(/url/);
    expect(refusal(withChild({ type: "button", label: "Go", action: "javascript:alert(1)" }))).toContain("tree.children[1].action");
    expect(refusal(withChild({ type: "button", label: "Allow", action: { name: "approve", approvalId: "a", decision: "maybe" } }))).toContain("decision");
  });

  it("refuses what a component needs but lacks, or holds in the wrong shape", () => {
    expect(refusal(withChild({ type: "heading" }))).toContain("tree.children[1].text");
    expect(refusal(withChild({ type: "text", text: "" }))).toContain("tree.children[1].text");
    expect(refusal(withChild({ type: "stack", children: [] }))).toContain("tree.children[1].children");
    expect(refusal(withChild({ type: "heading", text: "h", level: 4 }))).toContain("level");
    expect(refusal(withChild({ type: "table", columns: ["a", "b"], rows: [["1"]] }))).toContain("one cell per column");
    expect(refusal(withChild({ type: "code", text: "x", language: "<script>" }))).toContain("language");
    expect(refusal("just words")).toContain("tree");
    expect(refusal(null)).toContain("tree");
  });

  it("refuses control characters and bidirectional overrides in any string", () => {
    expect(refusal(withChild({ type: "text", text: "red \u001b[31m text" }))).toContain("plain text");
    expect(refusal(withChild({ type: "badge", text: "\u202Egnp.exe" }))).toContain("plain text");
    expect(refusal(withChild({ type: "text", text: "half \ud83d of a character" }))).toContain("plain text");
    expect(checkUiTree(withChild({ type: "text", text: "a whole one: \ud83d\ude00" })).ok).toBe(true);
    expect(checkUiTree(withChild({ type: "text", text: "tabs\tand\nnewlines are text" })).ok).toBe(true);
  });

  it("refuses a tree deeper than the limit, naming the first node past it", () => {
    expect(refusal(chain(UI_LIMITS.depth + 1))).toContain(`deeper than ${UI_LIMITS.depth} levels`);
    expect(refusal(chain(UI_LIMITS.depth + 1))).toContain("tree" + ".children[0]".repeat(UI_LIMITS.depth));
    // Far too deep to walk: refused before anything recurses into it.
    expect(refusal(chain(10_000))).toContain(`deeper than ${UI_LIMITS.depth} levels`);
  });

  it("refuses a tree with too many nodes, children, items or bytes", () => {
    const many = { type: "stack", children: Array.from({ length: 6 }, () => ({ type: "stack", children: Array.from({ length: 40 }, () => ({ type: "divider" })) })) };
    expect(refusal(many)).toContain(`more than ${UI_LIMITS.nodes} nodes`);
    expect(refusal({ type: "stack", children: Array.from({ length: UI_LIMITS.children + 1 }, () => ({ type: "divider" })) })).toContain("tree.children");
    expect(refusal({ type: "list", items: Array.from({ length: UI_LIMITS.items + 1 }, () => "x") })).toContain("tree.items");
    expect(refusal({ type: "text", text: "x".repeat(UI_LIMITS.text + 1) })).toContain("tree.text");
    const big = { type: "stack", children: Array.from({ length: 9 }, () => ({ type: "text", text: "x".repeat(UI_LIMITS.text) })) };
    expect(refusal(big)).toContain(`at most ${UI_LIMITS.bytes}`);
  });
});

describe("a model's answer read as a tree", () => {
  it("takes the JSON alone, in a code fence, or after words", () => {
    const json = JSON.stringify(EVERY);
    for (const text of [json, "```json\n" + JSON.stringify(EVERY, null, 2) + "\n```", `Here is the interface:\n${json}\nI hope it helps.`])
      expect(uiTreeFromText(text)).toEqual({ ok: true, value: EVERY });
  });

  it("refuses an answer with no JSON object, or JSON that does not parse, or a tree the catalog refuses", () => {
    const none = uiTreeFromText("<div>Hello</div>");
    expect(!none.ok && none.body.error).toContain("no JSON object");
    const broken = uiTreeFromText('{"type": "text", "text": }');
    expect(!broken.ok && broken.body.error).toContain("does not parse");
    const html = uiTreeFromText('{"type": "html", "html": "<script>alert(1)</script>"}');
    expect(!html.ok && html.body.error).toContain("tree.type");
  });
});
