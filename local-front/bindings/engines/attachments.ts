import { constants } from "node:fs";
import { lstat, mkdir, open } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import type { EngineAttachment } from "../../../src/api/attachments.js";
import type { TurnInput } from "../../../src/api/engine.js";
import { IMAGE_TYPES } from "../../../src/rules/attachments.js";

/**
 * Writes the turn's attachments into the session's working directory, each at the path
 * its message names (`.attachments/<seq>/<name>`), where the engine's tools can read them.
 * The front writes them, outside the session's sandbox: a path that leaves the directory,
 * or a directory or file on the way that the session replaced with a link, is refused,
 * so a session cannot aim these writes at the host's files.
 */
export async function placeAttachments(cwd: string, inputs: readonly TurnInput[]): Promise<void> {
  for (const a of inputs.flatMap((i) => i.attachments ?? [])) {
    const target = resolve(cwd, a.path);
    const inside = relative(cwd, target);
    if (inside === "" || inside.startsWith("..") || resolve(cwd, inside) !== target) throw new Error(`attachment ${a.name}: its path leaves the working directory`);
    let dir = cwd;
    for (const part of dirname(inside).split(sep).filter((p) => p !== "." && p !== "")) {
      dir = join(dir, part);
      const found = await lstat(dir).catch((err: NodeJS.ErrnoException) => (err.code === "ENOENT" ? null : Promise.reject(err)));
      if (found === null) await mkdir(dir);
      else if (!found.isDirectory()) throw new Error(`attachment ${a.name}: ${relative(cwd, dir)} is not a directory (a link is not followed)`);
    }
    const file = await open(target, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644);
    try {
      await file.writeFile(Buffer.from(a.base64, "base64"));
    } finally {
      await file.close();
    }
  }
}

/** The images among a message's attachments: those a model reads as image input. */
export function imagesOf(input: TurnInput): EngineAttachment[] {
  return (input.attachments ?? []).filter((a) => IMAGE_TYPES.includes(a.mediaType));
}
