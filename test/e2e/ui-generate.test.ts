import { describe, expect, it } from "vitest";
import { UI_RETRY } from "../../src/api/curator-prompts.js";
import type { UiNode } from "../../src/api/ui.js";
import { checkUiTree } from "../../src/rules/ui-tree.js";
import { call, events, sim, waitFor } from "../support/http.js";
import { useFront } from "../support/use-front.js";

/** Every node of a tree, depth first. */
function nodes(tree: UiNode): UiNode[] {
  return [tree, ...(tree.type === "stack" || tree.type === "row" ? tree.children.flatMap(nodes) : [])];
}
const texts = (tree: UiNode) => nodes(tree).flatMap((n) => ("text" in n ? [n.text] : []));
const actions = (tree: UiNode) => nodes(tree).flatMap((n) => (n.type === "button" ? [n.action] : []));

/** A thread whose one turn has ended, having said `text`. */
async function answered(base: string, text: string, title = "Fix the login test"): Promise<string> {
  const id = (await call(base, "POST", "/spawn", { title })).body.threadId as string;
  const sent = await call(base, "POST", `/threads/${id}/send`, { text });
  expect(sent.body.outcome).toBe("completed");
  return id;
}

/** The `interface` events of a thread's log. */
async function interfaces(base: string, id: string) {
  return (await events(base, id)).filter((e) => e.kind === "interface");
}

describe("a generated interface with no model configured", () => {
  const front = useFront();

  it("is the template's tree of the thread's state, stored as an `interface` event that tail serves", async () => {
    const base = front().url;
    const id = await answered(base, "hello there");
    const before = (await events(base, id)).at(-1)!.seq;
    const made = await call(base, "POST", `/threads/${id}/ui/generate`);
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const { seq, ts, interfaceId, source, basedOnSeq, tree } = made.body;
    expect(made.body.model).toBeUndefined();
    expect(source).toBe("template");
    expect(basedOnSeq).toBe(before);
    expect(seq).toBe(before + 1);
    expect(checkUiTree(tree)).toEqual({ ok: true, value: tree });
    expect(texts(tree)).toEqual(expect.arrayContaining(["Fix the login test", "idle", "hello there", "echo: hello there"]));
    const logged = await interfaces(base, id);
    expect(logged).toEqual([{ seq, ts, kind: "interface", body: { interfaceId, source: "template", tree, basedOnSeq } }]);
    // A second interface (through the client library, which checks the answer by its schema) reflects the first's event.
    const again = await front().client.generateInterface(id, { source: "template" });
    expect(again.basedOnSeq).toBe(seq);
    expect(again.interfaceId).not.toBe(interfaceId);
  });

  it("shows an open approval with the buttons that answer it", async () => {
    const base = front().url;
    const id = (await call(base, "POST", "/spawn", { permissions: "ask" })).body.threadId as string;
    await call(base, "POST", `/threads/${id}/messages`, { text: sim({ tool: { name: "shell", input: { command: "echo hi" } } }) });
    const approvalId = await waitFor(async () => (await call(base, "GET", `/threads/${id}/turn`)).body.waitingOn.approvals[0] as string | undefined);
    const { tree } = (await call(base, "POST", `/threads/${id}/ui/generate`)).body;
    expect(actions(tree)).toEqual(
      expect.arrayContaining([{ name: "approve", approvalId, decision: "allow" }, { name: "approve", approvalId, decision: "deny" }, { name: "interrupt" }]),
    );
  });

  it("refuses a model when none is configured, a retired thread and an unknown one, and writes nothing", async () => {
    const base = front().url;
    const id = await answered(base, "hi");
    const model = await call(base, "POST", `/threads/${id}/ui/generate`, { source: "model" });
    expect([model.status, model.body.code]).toEqual([409, "ui-model-not-configured"]);
    const unknownKey = await call(base, "POST", `/threads/${id}/ui/generate`, { source: "template", html: "<b>" });
    expect([unknownKey.status, unknownKey.body.code]).toEqual([400, "invalid-body"]);
    await call(base, "DELETE", `/threads/${id}`);
    const retired = await call(base, "POST", `/threads/${id}/ui/generate`);
    expect([retired.status, retired.body.code]).toEqual([409, "thread-archived"]);
    expect(await interfaces(base, id)).toEqual([]);
    const unknown = await call(base, "POST", "/threads/thr_00000000000000000000000000/ui/generate");
    expect([unknown.status, unknown.body.code]).toEqual([404, "thread-not-found"]);
  });

  it("is refused while the host drains", async () => {
    const base = front().url;
    const id = await answered(base, "hi");
    expect((await call(base, "POST", "/drain", {})).status).toBe(200);
    try {
      const drained = await call(base, "POST", `/threads/${id}/ui/generate`);
      expect([drained.status, drained.body.code]).toEqual([503, "draining"]);
    } finally {
      await call(base, "DELETE", "/drain");
    }
    expect(await interfaces(base, id)).toEqual([]);
  });
});

describe("a generated interface with SERVICE_UI_MODEL set", () => {
  const front = useFront({ env: { SERVICE_UI_MODEL: "sim-1" } });

  /** The simulator's interface requests since the last call, as their user messages. */
  async function asked(): Promise<string[]> {
    const url = `${front().simulatorUrl}/_sim/requests`;
    const { requests } = (await (await fetch(url)).json()) as { requests: { body: { messages?: { role: string; content: unknown }[] } }[] };
    await fetch(url, { method: "DELETE" });
    const user = (r: (typeof requests)[number]) => JSON.stringify(r.body.messages?.filter((m) => m.role === "user").map((m) => m.content) ?? []);
    return requests.filter((r) => JSON.stringify(r.body).includes("The thread's state, as JSON:")).map(user);
  }

  it("is the model's tree, checked, stored with the model's name", async () => {
    const base = front().url;
    const id = await answered(base, "show me where we are");
    await asked();
    const made = await call(base, "POST", `/threads/${id}/ui/generate`);
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect(made.body).toMatchObject({ source: "model", model: "sim-1" });
    expect(checkUiTree(made.body.tree).ok).toBe(true);
    // The simulator builds its tree from the state it was given.
    expect(texts(made.body.tree)).toEqual(expect.arrayContaining(["Fix the login test", "echo: show me where we are"]));
    expect(await asked()).toHaveLength(1);
    const [logged] = await interfaces(base, id);
    expect(logged!.body).toEqual({ interfaceId: made.body.interfaceId, source: "model", model: "sim-1", tree: made.body.tree, basedOnSeq: made.body.basedOnSeq });
    // The template is still there for the asking.
    expect((await call(base, "POST", `/threads/${id}/ui/generate`, { source: "template" })).body.source).toBe("template");
  });

  it("asks again once, saying what was wrong, when the catalog refuses the model's first tree", async () => {
    const base = front().url;
    const id = await answered(base, "@sim-ui invalid-once");
    await asked();
    const made = await call(base, "POST", `/threads/${id}/ui/generate`);
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect(made.body).toMatchObject({ source: "model", model: "sim-1" });
    expect(JSON.stringify(made.body.tree)).not.toContain("javascript:");
    const requests = await asked();
    expect(requests).toHaveLength(2);
    expect(requests[0]).not.toContain(UI_RETRY);
    expect(requests[1]).toContain(UI_RETRY);
    expect(requests[1]).toContain("tree.children");
    expect(await interfaces(base, id)).toHaveLength(1);
  });

  it("is refused with ui-model-invalid when the second tree is refused too, and nothing is stored", async () => {
    const base = front().url;
    const id = await answered(base, "@sim-ui invalid");
    await asked();
    const lastSeq = (await events(base, id)).at(-1)!.seq;
    const made = await call(base, "POST", `/threads/${id}/ui/generate`);
    expect([made.status, made.body.code]).toEqual([502, "ui-model-invalid"]);
    expect(made.body.model).toBe("sim-1");
    expect(made.body.refusals).toHaveLength(2);
    for (const r of made.body.refusals) expect(r).toMatch(/tree\.children\[\d+\]\.type/);
    expect(await asked()).toHaveLength(2);
    const after = await events(base, id);
    expect(after.filter((e) => e.kind === "interface")).toEqual([]);
    expect(after.at(-1)!.seq).toBe(lastSeq);
  });
});

describe("a generated interface whose model cannot answer", () => {
  // sim-broken fails every call, as a provider that is down.
  const front = useFront({ env: { SERVICE_UI_MODEL: "sim-broken" } });

  it("is refused with ui-model-unavailable, and nothing is stored", async () => {
    const base = front().url;
    const id = (await call(base, "POST", "/spawn", { model: "sim-1" })).body.threadId as string;
    const made = await call(base, "POST", `/threads/${id}/ui/generate`);
    expect([made.status, made.body.code, made.body.model]).toEqual([503, "ui-model-unavailable", "sim-broken"]);
    expect(made.body.error).toContain("sim-broken");
    expect(await interfaces(base, id)).toEqual([]);
  });
});
