import type { OperationAccepted } from "../api/operations.js";
import { ok, type Outcome } from "../api/outcome.js";
import type { HandoffOffered } from "../api/seats.js";
import type { Subscription } from "../api/subscriptions.js";
import { RUNTIME_TOOLS, type RuntimeToolCall, type RuntimeToolResult, type ToolTurn } from "../api/tools.js";
import { refused, valueOf } from "../http/answer.js";
import type { RuntimeConfig } from "../platform/config.js";
import type { Env } from "../platform/env.js";
import { threadOf } from "../platform/stubs.js";
import { startOperation } from "./delegate.js";
import { subscribe } from "./subscribe.js";

/**
 * `POST /internal/tools`: a running turn's call of one of the runtime's tools
 * (docs/tools.md). The thread first says whether the turn is its running one and whose
 * seat it is; the call then takes the path its route takes (`delegate` is
 * `POST /threads/:id/operations`, `subscribe` is `POST /threads/:id/subscriptions`, the
 * reports are the parent's `POST /threads/:id/operations/:operation`, `offer_handoff` is
 * `POST /threads/:id/handoff`), so a model can do nothing through a tool that a caller of
 * the routes could not, and nothing outside its own thread and the children it makes.
 */
export async function runTool(env: Env, config: RuntimeConfig, call: RuntimeToolCall): Promise<Outcome<RuntimeToolResult>> {
  const thread = threadOf(env, call.thread);
  const turn = valueOf((await thread.toolTurn(call.turn)) as Outcome<ToolTurn>);
  const parsed = RUNTIME_TOOLS[call.tool].input.safeParse(call.input);
  if (!parsed.success) refused(400, `${call.tool}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "input"}: ${i.message}`).join("; ")}`);
  const input = parsed.data as never;
  switch (call.tool) {
    case "delegate": {
      const { title, prompt, engine, model } = input as { title: string; prompt: string; engine?: string; model?: string };
      // The child may do no more than its parent: it gets the parent's permissions, whatever the model asks.
      const started = valueOf(
        await startOperation(env, config, call.thread, {
          kind: "delegation",
          title,
          prompt,
          spec: { permissions: turn.permissions, ...(engine ? { engine: engine as never } : {}), ...(model ? { model } : {}) },
          detail: { turnId: call.turn, seat: turn.seat },
        }),
      );
      return ok({
        text: `Delegated as operation ${started.operation} to thread ${started.child}; its result comes back to this thread as a message when it finishes.`,
        operation: started.operation,
        ...(started.child ? { child: started.child } : {}),
      });
    }
    case "subscribe": {
      const added = valueOf(await subscribe(env, config, call.thread, { ...(input as object), deliver: { seat: turn.seat } } as never)) as Subscription;
      return ok({ text: `Subscribed (watch ${added.watch}): each matching event wakes this thread with a message.`, watch: added.watch });
    }
    case "report_milestone":
    case "report_outcome": {
      const report = call.tool === "report_milestone" ? { milestone: input } : { outcome: input };
      const taken = valueOf((await thread.reportToDelegator(call.turn, JSON.stringify(report))) as Outcome<OperationAccepted>);
      return ok({ text: call.tool === "report_milestone" ? "Milestone reported to the delegating thread." : `Outcome reported: operation ${taken.operation} is ${taken.state}.`, operation: taken.operation });
    }
    case "offer_handoff": {
      const { to, note, context } = input as { to: string; note?: string; context?: "full" | "summary" };
      const offer = valueOf((await thread.offerHandoffFromTurn(call.turn, to, note ?? null, context ?? "full")) as Outcome<HandoffOffered>);
      return ok({ text: `Offered this conversation to seat ${to} (offer ${offer.fromSeq}); it answers the next messages once the offer is accepted.`, fromSeq: offer.fromSeq });
    }
  }
}
