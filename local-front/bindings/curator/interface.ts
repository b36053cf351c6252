import type { InterfaceAnswer, InterfaceRequest } from "../../../src/api/engine.js";
import type { NetworkDeps } from "../engines/access.js";
import { UI_ASK, UI_CATALOG, UI_PROMPT, UI_RETRY, UI_STATE_LABEL } from "../../../src/api/curator-prompts.js";
import { askCurator } from "./call.js";

/** The refused answer as the retry quotes it: its start shows the model what it wrote. */
const QUOTED_CHARS = 8_000;

/**
 * `POST /interfaces` on the engine host: the interface model (`SERVICE_UI_MODEL`) writes a
 * tree for the thread's state. The state is one line of JSON in the system prompt, so no
 * text of the thread reads as a line of the request. The worker checks the answer
 * (src/rules/ui-tree.ts) and asks again once with `retry`.
 */
export async function writeInterface(req: InterfaceRequest, network: NetworkDeps): Promise<InterfaceAnswer> {
  const document = `${UI_CATALOG}\n\n${UI_STATE_LABEL}\n${JSON.stringify(req.state)}`;
  const ask = req.retry
    ? `${UI_RETRY} ${req.retry.problem}\n\nYour answer was:\n${req.retry.answer.slice(0, QUOTED_CHARS)}\n\n${UI_ASK}`
    : UI_ASK;
  const answer = await askCurator(req, network, UI_PROMPT, document, ask);
  return "error" in answer ? answer : { text: answer.text, model: answer.model };
}
