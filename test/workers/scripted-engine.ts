/**
 * The ENGINES binding of the workers tests: a tiny engine host in Node that follows a
 * script in the message text, so the Thread object's turn logic can be tested inside
 * workerd on its own. The real engine host (local-front/bindings/engines) is tested end to end.
 * Script words: `hang` (never ends until interrupted), `askme` (asks a question, `q_<turnId>`,
 * and ends once it is resolved, replying with the action), `stubborn` (never ends, ignores
 * interrupts), `crash` (the stream breaks),
 * `garbage` (a malformed report line), `bigtool` (a tool result of 300,000 bytes), `unpriced`
 * (usage without a price), `cut` (a turn the output limit ended), `smallwindow` (the
 * reply echoes the message, and the usage counts the whole context, four characters a
 * token, in a window of 4,096; with `withtool` too, a shell call's 2,000-character result
 * comes first); anything else gets `engine saw: <text>`. No summary is
 * ever written: `/summaries` answers every curator request with an error.
 */
const hanging = new Map<string, () => void>();
const asking = new Map<string, (action: string) => void>();

export async function scriptedEngine(request: Request): Promise<Response> {
  const path = new URL(request.url).pathname;
  const interrupt = /^\/turns\/([^/]+)\/interrupt$/.exec(path);
  if (interrupt) {
    hanging.get(interrupt[1]!)?.();
    return Response.json({ interrupting: true });
  }
  const answered = /^\/turns\/([^/]+)\/questions\/[^/]+$/.exec(path);
  if (answered) {
    const { action } = (await request.json()) as { action: string };
    asking.get(answered[1]!)?.(action);
    return Response.json({ delivered: true });
  }
  if (path === "/summaries") return Response.json({ error: "the scripted engine writes no summaries" });
  if (path !== "/turns") return Response.json({ delivered: true });
  const turn = (await request.json()) as { turnId: string; model: string; inputs: { text: string }[]; transcript: unknown[] };
  const text = turn.inputs.map((i) => i.text).join(" | ");
  const line = (o: unknown) => new TextEncoder().encode(JSON.stringify(o) + "\n");
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(line({ type: "delta", frame: { type: "text", delta: "engine " } }));
      if (text.includes("hang")) {
        hanging.set(turn.turnId, () => {
          controller.enqueue(line({ type: "end", outcome: "failed", failure: { class: "interrupted", error: "interrupted" } }));
          controller.close();
        });
        return;
      }
      if (text.includes("askme")) {
        controller.enqueue(line({ type: "question", requestId: `q_${turn.turnId}`, question: "which one?" }));
        const end = (reply: string, outcome: "completed" | "failed") => {
          asking.delete(turn.turnId);
          hanging.delete(turn.turnId);
          controller.enqueue(line({ type: "reply", text: reply }));
          controller.enqueue(line({ type: "end", outcome, ...(outcome === "failed" ? { failure: { class: "interrupted", error: "interrupted" } } : {}) }));
          controller.close();
        };
        asking.set(turn.turnId, (action) => end(`told: ${action}`, "completed"));
        hanging.set(turn.turnId, () => end("interrupted", "failed"));
        return;
      }
      if (text.includes("stubborn")) return;
      if (text.includes("crash")) return controller.error(new Error("engine crashed"));
      if (text.includes("garbage")) {
        controller.enqueue(new TextEncoder().encode("{not json\n"));
        return;
      }
      if (text.includes("bigtool")) {
        controller.enqueue(line({ type: "tool-call", callId: "call_big", name: "shell", input: { command: "yes" } }));
        controller.enqueue(line({ type: "tool-result", callId: "call_big", name: "shell", output: "z".repeat(300_000), isError: false }));
      }
      if (text.includes("smallwindow")) {
        const input = Math.ceil((JSON.stringify(turn.transcript).length + text.length) / 4);
        if (text.includes("withtool")) {
          controller.enqueue(line({ type: "tool-call", callId: `call_${turn.turnId}`, name: "shell", input: { command: "cat notes" } }));
          controller.enqueue(line({ type: "tool-result", callId: `call_${turn.turnId}`, name: "shell", output: "n".repeat(2000), isError: false }));
        }
        controller.enqueue(line({ type: "reply", text }));
        controller.enqueue(line({ type: "usage", model: turn.model, inputTokens: input, outputTokens: Math.ceil(text.length / 4), usd: 0.001, contextWindow: 4096 }));
        controller.enqueue(line({ type: "end", outcome: "completed" }));
        return controller.close();
      }
      controller.enqueue(line({ type: "reply", text: `engine saw: ${text} (${turn.transcript.length} before)` }));
      controller.enqueue(line({ type: "usage", model: "scripted", inputTokens: 10, outputTokens: 5, usd: text.includes("unpriced") ? null : 0.001 }));
      controller.enqueue(line({ type: "end", outcome: "completed", ...(text.includes("cut") ? { stop: "length" } : {}) }));
      controller.close();
    },
  });
  return new Response(stream, { headers: { "content-type": "application/x-ndjson" } });
}
