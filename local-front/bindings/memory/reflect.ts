import { z } from "zod";
import type { ReflectionAnswer, ReflectionRequest } from "../../../src/api/engine.js";
import type { NetworkDeps } from "../engines/access.js";
import { askCurator } from "../curator/call.js";
import { memoryList } from "../../../src/rules/memory-rank.js";
import { REFLECT_PROMPT } from "../../../src/api/curator-prompts.js";

const Reflection = z.object({ text: z.string().trim().min(1).max(2000), cites: z.array(z.string().max(100)).max(50) });
/** More than the five asked for are not read. */
const MOST = 10;

/**
 * The model's reflections: the first JSON array in its answer (perhaps in a code fence,
 * or after words that hold brackets of their own), each item taken on its own, so one bad
 * item costs only itself. A string says why there are none.
 */
export function parseReflections(text: string): { text: string; cites: string[] }[] | string {
  const ends: number[] = [];
  for (let i = text.lastIndexOf("]"); i !== -1 && ends.length < 50; i = text.lastIndexOf("]", i - 1)) ends.push(i);
  for (let start = text.indexOf("["); start !== -1; start = text.indexOf("[", start + 1)) {
    for (const end of ends) {
      if (end <= start) break;
      let parsed: unknown;
      try {
        parsed = JSON.parse(text.slice(start, end + 1));
      } catch {
        continue;
      }
      if (!Array.isArray(parsed) || !parsed.some((item) => typeof item === "object" && item !== null)) continue;
      return parsed.slice(0, MOST).flatMap((item) => {
        const r = Reflection.safeParse(item);
        return r.success ? [r.data] : [];
      });
    }
  }
  return "the answer holds no JSON array of reflections";
}

/** `POST /reflections` on the engine host: the curator model (then its fallback) reflects on the memories given. */
export async function writeReflections(req: ReflectionRequest, network: NetworkDeps): Promise<ReflectionAnswer> {
  const useless = (text: string) => {
    const r = parseReflections(text);
    return typeof r === "string" ? r : null;
  };
  const answer = await askCurator(req, network, REFLECT_PROMPT, "", `The memories, oldest first:\n\n${memoryList(req.memories)}\n\nWrite the reflections now.`, useless);
  if ("error" in answer) return answer;
  return { reflections: parseReflections(answer.text) as { text: string; cites: string[] }[], model: answer.model };
}
