import { mkdir, writeFile } from "node:fs/promises";
import { dirname, relative, resolve } from "node:path";
import type { EngineAttachment } from "../../../src/api/attachments.js";
import type { TurnInput } from "../../../src/api/engine.js";
import { IMAGE_TYPES } from "../../../src/rules/attachments.js";

/**
 * Writes the turn's attachments into the session's working directory, each at the path
 * its message names (`.attachments/<seq>/<name>`), where the engine's tools can read them.
 * A path that would leave the directory is refused, whatever the worker sent.
 */
export async function placeAttachments(cwd: string, inputs: readonly TurnInput[]): Promise<void> {
  for (const a of inputs.flatMap((i) => i.attachments ?? [])) {
    const target = resolve(cwd, a.path);
    const inside = relative(cwd, target);
    if (inside.startsWith("..") || inside === "" || resolve(cwd, inside) !== target) throw new Error(`attachment ${a.name}: its path leaves the working directory`);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, Buffer.from(a.base64, "base64"));
  }
}

/** The images among a message's attachments: those a model reads as image input. */
export function imagesOf(input: TurnInput): EngineAttachment[] {
  return (input.attachments ?? []).filter((a) => IMAGE_TYPES.includes(a.mediaType));
}
