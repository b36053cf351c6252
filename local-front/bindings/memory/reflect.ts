import { z } from "zod";
import type { ReflectionAnswer, ReflectionRequest } from "../../../src/api/engine.js";
import type { NetworkDeps } from "../engines/access.js";
import { askCurator } from "../engines/pi/compact.js";

const REFLECT_PROMPT =
  "You keep the long-term memory of a team of coding agents who work in one repository over weeks. " +
  "You are given the newest memories, each with its id. Draw at most five reflections from them: conclusions that " +
  "hold across several memories and would help an agent next time (a recurring cause, a rule the team keeps, " +
  "a pattern in what fails). Each reflection cites the ids of the memories it rests on, and only those. " +
  'Answer with JSON only, an array: [{"text": "...", "cites": ["mem_..."]}]. An empty array when nothing holds across memories.';

/** The model's reflections: a JSON array, perhaps in a code fence or with words around it. */
const Reflections = z.array(z.object({ text: z.string().trim().min(1).max(2000), cites: z.array(z.string().max(100)).max(50) })).max(10);

/**
 * Each memory on its own lines, its continuation lines indented, so a memory's text stays
 * one item of the list whatever it holds.
 */
function listed(memories: ReflectionRequest["memories"]): string {
  return memories.map((m) => `- [${m.id}] (${m.kind}) ${m.text.replace(/\n/g, "\n  ")}`).join("\n");
}

/** What the model wrote as reflections, or why it is not any. */
export function parseReflections(text: string): { text: string; cites: string[] }[] | string {
  const start = text.indexOf("[");
  const end = text.lastIndexOf("]");
  if (start === -1 || end < start) return "the answer holds no JSON array";
  try {
    const parsed = Reflections.safeParse(JSON.parse(text.slice(start, end + 1)));
    return parsed.success ? parsed.data : `the answer is not a list of {text, cites}: ${parsed.error.issues[0]?.message ?? "invalid"}`;
  } catch (err) {
    return `the answer's JSON does not parse: ${(err as Error).message}`;
  }
}

/** `POST /reflections` on the engine host: the curator model (then its fallback) reflects on the memories given. */
export async function writeReflections(req: ReflectionRequest, network: NetworkDeps): Promise<ReflectionAnswer> {
  const answer = await askCurator(req, network, REFLECT_PROMPT, "", `The memories, oldest first:\n\n${listed(req.memories)}\n\nWrite the reflections now.`);
  if ("error" in answer) return answer;
  const reflections = parseReflections(answer.text);
  return typeof reflections === "string" ? { error: `${answer.model}: ${reflections}` } : { reflections, model: answer.model };
}
